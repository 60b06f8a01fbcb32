/**
 * Where a metered call's CPU goes (issue 35; not in `npm run bench`; run alone): bursts of metered
 * down-checks at 50 in flight through the edge, the CPU per call of every process a call crosses
 * (edge, billing, meta-scan, the fixture site, this load generator), then each service's own
 * profile over those bursts (through its inspector) by self time, grouped by where it lives.
 * `BENCH_BEFORE=<another checkout, built>` starts a second stack from that checkout's edge,
 * billing and meta-scan and alternates bursts between the two (the machine's load moves both
 * alike; each goes first in every other round), printing each round's CPU per call of both and
 * their ratio per process.
 * `BENCH_PROFILE=off` measures CPU only (profiling costs CPU); `BENCH_ROUNDS`, `BENCH_BURST_MS` set
 * the rounds and a burst's length; `BENCH_NODE_ARGS` adds Node options to the three processes
 * (`BENCH_BEFORE_NODE_ARGS` to the other stack's, when it differs: a V8 flag measured against none).
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startTestStack, type TestStack } from '../src/test-stack.js';
import { largest, readSelfTimes } from './cpu-profile.js';
import { connectInspector, type InspectorSession, inspectorUrl } from './inspector-profile.js';
import { fmt, load } from './load.js';
import { type SiteProcess, startSiteProcess } from './site-process.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const BURST_MS = Number(process.env.BENCH_BURST_MS ?? 3000);
const WARMUP_MS = 6000;
const PROFILED = ['edge', 'billing', 'meta-scan'] as const;
const SERVICE_DIRS: Record<string, string> = { billing: 'services/billing', 'meta-scan': 'services/meta-scan' };
const profiling = process.env.BENCH_PROFILE !== 'off';
const beforeDir = process.env.BENCH_BEFORE;
const nodeArgsOf = (value: string | undefined) => (value ?? '').split(' ').filter(Boolean);
const extraArgs = nodeArgsOf(process.env.BENCH_NODE_ARGS);
const beforeArgs = nodeArgsOf(process.env.BENCH_BEFORE_NODE_ARGS ?? process.env.BENCH_NODE_ARGS);

interface Side {
  label: string;
  stack: TestStack;
  url: string;
  pids: Record<string, number>;
  perCall: Record<string, number[]>;
}

const site = await startSiteProcess();
const sides: Side[] = [];
let sessions: InspectorSession[] = [];
const dirs = Object.fromEntries(PROFILED.map((name) => [name, mkdtempSync(path.join(os.tmpdir(), `prof-${name}-`))]));
console.log(`load average:${os.loadavg().map((l) => ` ${fmt(l, 2)}`)}`);
try {
  sides.push(await startSide('this build', undefined, profiling));
  if (beforeDir) sides.push(await startSide(`before (${beforeDir})`, beforeDir, false));
  if (profiling) {
    const stack = sides[0]?.stack as TestStack;
    sessions = await Promise.all(PROFILED.map((name) => connectInspector(inspectorUrl(stack.logs, name))));
  }
  for (const side of sides) await burst(side, WARMUP_MS);
  await Promise.all(sessions.map((session) => session.start()));
  for (let round = 1; round <= ROUNDS; round++) {
    // Each side goes first in every other round: a burst that follows another runs on a warmer
    // (or busier) machine, which is not the build's doing.
    for (const side of round % 2 === 1 ? sides : [...sides].reverse()) {
      const before = Object.fromEntries(Object.entries(side.pids).map(([name, pid]) => [name, cpuMs(pid)]));
      const { calls, errors } = await burst(side, BURST_MS);
      const figures = Object.entries(side.pids).map(([name, pid]) => {
        const ms = (cpuMs(pid) - (before[name] ?? 0)) / calls;
        side.perCall[name] = [...(side.perCall[name] ?? []), ms];
        return `${name} ${fmt(ms, 3)}`;
      });
      console.log(
        `round ${round}, ${side.label}: ${calls} calls (${errors} errors); CPU ms per call: ${figures.join(', ')}`,
      );
    }
  }
  await Promise.all(sessions.map((session, i) => session.stop(dirs[PROFILED[i] as string] as string, 'burst')));
  for (const side of sides) {
    const medians = Object.entries(side.perCall).map(([name, values]) => `${name} ${fmt(median(values), 3)}`);
    console.log(`${side.label}, medians of ${ROUNDS} rounds, CPU ms per call: ${medians.join(', ')}`);
  }
  const [now, then] = sides;
  if (now && then) {
    // Per round, this build's CPU over the other's, both measured back to back.
    const ratios = Object.keys(now.perCall).map((name) => {
      const mine = now.perCall[name] ?? [];
      const theirs = then.perCall[name] ?? [];
      return `${name} ${fmt(median(mine.map((ms, i) => ms / (theirs[i] ?? Number.NaN))), 3)}x`;
    });
    console.log(`this build / before, median of the rounds' ratios: ${ratios.join(', ')}`);
  }
} finally {
  for (const session of sessions) session.close();
  for (const side of sides) await side.stack.stop();
  await site.stop();
}
if (profiling) for (const name of PROFILED) printProfile(name, dirs[name] as string);

async function startSide(label: string, checkout: string | undefined, inspect: boolean): Promise<Side> {
  const nodeArgs = [...(inspect ? ['--inspect=127.0.0.1:0'] : []), ...(checkout ? beforeArgs : extraArgs)];
  const entry = (dir: string) => (checkout ? { entry: path.join(checkout, dir, 'dist/main.js') } : {});
  const stack = await startTestStack({
    allowTargets: '127.0.0.0/8',
    env: { LOG_LEVEL: 'warn' },
    processFor: {
      edge: { nodeArgs, ...entry('edge') },
      billing: { nodeArgs, ...entry(SERVICE_DIRS.billing as string) },
      'meta-scan': { nodeArgs, ...entry(SERVICE_DIRS['meta-scan'] as string) },
    },
  });
  const pids: Record<string, number> = {
    edge: stack.pid('edge') ?? 0,
    billing: stack.pid('billing') ?? 0,
    'meta-scan': stack.pid('meta-scan') ?? 0,
    site: site.pid,
    'load generator': process.pid,
  };
  const url = `${stack.edgeUrl}/v1/down-check?url=${encodeURIComponent((site as SiteProcess).url('/ok'))}`;
  return { label, stack, url, pids, perCall: {} };
}

/** Down-checks at 50 in flight, as a closed loop, for `ms`. */
async function burst(side: Side, ms: number) {
  const auth = { authorization: `Bearer ${side.stack.apiKey}` };
  const result = await load(side.url, { concurrency: 50, durationMs: ms, headers: auth, warmupMs: 0 });
  return { calls: result.requests, errors: result.errors };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? Number.NaN;
}

/** User + system CPU milliseconds of a process so far (clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function printProfile(title: string, dir: string): void {
  const { file, byFunction, byPlace, busyMs } = readSelfTimes(dir);
  const top = (times: Map<string, number>, n: number) =>
    largest(times, n)
      .map(([name, ms]) => `  ${fmt((ms / busyMs) * 100, 1).padStart(5)}%  ${name}`)
      .join('\n');
  console.log(`\n${title} profile, ${fmt(busyMs / 1000, 1)} s busy (the bursts), by place\n${top(byPlace, 20)}`);
  console.log(`by function\n${top(byFunction, 45)}`);
  console.log(`profile: ${file}`);
}
