/**
 * Where the edge's CPU goes on `GET /v1/quota` (issues 26 and 29; not in `npm run bench`; run
 * alone): CPU per thousand requests of the bare Koa handler, of the edge and billing, and of the
 * load generator (this process), each side at 64 connections for BENCH_DURATION_MS; then the
 * edge's own CPU profile (node --cpu-prof, written when the stack stops), its functions by self
 * time, grouped by where they live.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { startTestStack } from '../src/test-stack.js';
import { fixedHeaders, startBareKoa } from './bare-koa.js';
import { largest, readSelfTimes } from './cpu-profile.js';
import { fmt } from './load.js';

type Autocannon = (options: {
  url: string;
  connections: number;
  duration: number;
  headers?: Record<string, string>;
}) => Promise<{ requests: { total: number; average: number }; non2xx: number }>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

const CONNECTIONS = 64;
const SECONDS = Number(process.env.BENCH_DURATION_MS ?? 10_000) / 1000;
const TICK = 100; // clock ticks per second (USER_HZ)

/** CPU seconds so far of a process, in user space and in the kernel (system calls: the socket writes). */
function cpuSeconds(pid: number): { user: number; system: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { user: Number(fields[11]) / TICK, system: Number(fields[12]) / TICK };
}

async function measure(title: string, url: string, headers: Record<string, string>, pids: Record<string, number>) {
  await autocannon({ url, connections: CONNECTIONS, duration: 2, headers });
  const before = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, cpuSeconds(pid)]));
  const result = await autocannon({ url, connections: CONNECTIONS, duration: SECONDS, headers });
  const perThousand = Object.entries(pids).map(([name, pid]) => {
    const after = cpuSeconds(pid);
    const ms = (seconds: number) => fmt((seconds / result.requests.total) * 1e6, 1);
    const user = after.user - (before[name]?.user ?? 0);
    const system = after.system - (before[name]?.system ?? 0);
    return `${name} ${ms(user + system)} ms (user ${ms(user)}, system ${ms(system)})`;
  });
  console.log(
    `${title}: ${fmt(result.requests.average, 0)} req/s (${result.non2xx} non-2xx); ` +
      `CPU per 1,000 requests:\n  ${perThousand.join('\n  ')}`,
  );
}

const profileDir = mkdtempSync(path.join(os.tmpdir(), 'quota-prof-'));
const stack = await startTestStack({
  env: { LOG_LEVEL: 'warn' },
  processFor: { edge: { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] } },
});
const auth = { authorization: `Bearer ${stack.apiKey}` };
const sample = await stack.api('/v1/quota');
const bareDir = mkdtempSync(path.join(os.tmpdir(), 'quota-prof-bare-'));
// The baseline with the edge's headers: what differs is the edge's work, not the bytes sent.
const bare = await startBareKoa({
  body: await sample.text(),
  headers: fixedHeaders(sample),
  requestId: true,
  nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${bareDir}`],
});
console.log(`uptime:${os.loadavg().map((l) => ` ${fmt(l, 2)}`)} (load average 1/5/15 min)`);
try {
  const load = { 'load generator': process.pid };
  await measure('bare Koa, same JSON and headers', bare.url, auth, { server: bare.pid, ...load });
  const edgePids = { edge: stack.pid('edge') ?? 0, billing: stack.pid('billing') ?? 0, ...load };
  await measure('edge', `${stack.edgeUrl}/v1/quota`, auth, edgePids);
} finally {
  await bare.stop();
  await stack.stop();
}

/** A profile's busy time by where the code lives and by function, as shares. */
function printProfile(title: string, dir: string): void {
  const { file, byFunction, byPlace, busyMs } = readSelfTimes(dir);
  const top = (times: Map<string, number>, n: number) =>
    largest(times, n)
      .map(([name, ms]) => `  ${fmt((ms / busyMs) * 100, 1).padStart(5)}%  ${name}`)
      .join('\n');
  console.log(`\n${title} profile, ${fmt(busyMs / 1000, 1)} s busy (whole run), by place\n${top(byPlace, 20)}`);
  console.log(`by function\n${top(byFunction, 40)}`);
  console.log(`profile: ${file}`);
}

printProfile('bare Koa', bareDir);
printProfile('edge', profileDir);
