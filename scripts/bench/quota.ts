/**
 * Issues 3, 26 and 29: GET /v1/quota with an API key at 64 concurrent connections through the
 * edge (authenticate, rate-limit count and quota read from the edge's view of the caller, which
 * billing refreshes), against a bare Koa handler returning the same JSON, with the same load
 * generator (autocannon), in alternating rounds so that the machine's load moves both sides alike.
 * A second baseline answers the same JSON with the edge's headers too (security headers, request
 * id, RateLimit): the edge's cost beyond the bytes it sends. Prints req/s, p99, each round's
 * ratios, and each server's CPU per 1,000 requests (user and kernel: the socket writes).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { startTestStack } from '../src/test-stack.js';
import { fixedHeaders, startBareKoa } from './bare-koa.js';
import { fmt } from './load.js';

interface AutocannonResult {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number };
  duration: number;
  non2xx: number;
  errors: number;
  timeouts: number;
}
type Autocannon = (options: {
  url: string;
  connections: number;
  duration: number;
  headers?: Record<string, string>;
}) => Promise<AutocannonResult>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

const CONNECTIONS = 64;
/** Seconds of measured load per side, split over the rounds. */
const SECONDS = Number(process.env.BENCH_DURATION_MS ?? 12_000) / 1000;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
/** BENCH_PIN=1: the load generator on the first CPU, every server process on the second. */
const PIN = process.env.BENCH_PIN === '1' && os.availableParallelism() >= 2;
const TICK = 100; // clock ticks per second (USER_HZ)

/** CPU seconds so far of processes, in user space and in the kernel. */
function cpuSeconds(pids: number[]): { user: number; system: number } {
  let user = 0;
  let system = 0;
  for (const pid of pids) {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    user += Number(fields[11]) / TICK;
    system += Number(fields[12]) / TICK;
  }
  return { user, system };
}

interface Side {
  name: string;
  url: string;
  pids: number[];
  rounds: AutocannonResult[];
  requests: number;
  seconds: number;
  cpu: { user: number; system: number };
}

async function measure(side: Side, headers: Record<string, string>, seconds: number): Promise<AutocannonResult> {
  const before = cpuSeconds(side.pids);
  const result = await autocannon({ url: side.url, connections: CONNECTIONS, duration: seconds, headers });
  const after = cpuSeconds(side.pids);
  if (result.non2xx || result.errors || result.timeouts)
    throw new Error(`${side.url}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`);
  side.cpu.user += after.user - before.user;
  side.cpu.system += after.system - before.system;
  side.requests += result.requests.total;
  side.seconds += result.duration;
  side.rounds.push(result);
  return result;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? NaN) : ((sorted[mid - 1] ?? NaN) + (sorted[mid] ?? NaN)) / 2;
};

/** Another build's edge (its dist/main.js), measured beside this one in the same rounds: before and after a change. */
const BEFORE = process.env.BENCH_QUOTA_BEFORE;

const stack = await startTestStack({
  env: { LOG_LEVEL: 'warn' },
  ...(BEFORE ? { edges: 2, processFor: { 'edge-2': { entry: BEFORE } } } : {}),
});
const auth = { authorization: `Bearer ${stack.apiKey}` };
const sample = await stack.api('/v1/quota');
const body = await sample.text();
const sameJson = await startBareKoa({
  body,
  headers: { 'X-Credits-Remaining': sample.headers.get('x-credits-remaining') ?? '0', 'Cache-Control': 'no-store' },
});
const sameHeaders = await startBareKoa({ body, headers: fixedHeaders(sample), requestId: true });
const side = (name: string, url: string, pids: number[]): Side => ({
  name,
  url,
  pids,
  rounds: [],
  requests: 0,
  seconds: 0,
  cpu: { user: 0, system: 0 },
});
const bare = side('bare Koa handler, same JSON', sameJson.url, [sameJson.pid]);
const bareHeaders = side('bare Koa, same JSON and headers', sameHeaders.url, [sameHeaders.pid]);
const edge = side('edge + billing', `${stack.edgeUrl}/v1/quota`, [stack.pid('edge') ?? 0, stack.pid('billing') ?? 0]);
const before = BEFORE
  ? side('edge + billing, before', `${stack.edgeUrls[1]}/v1/quota`, [
      stack.pid('edge-2') ?? 0,
      stack.pid('billing') ?? 0,
    ])
  : undefined;
const sides = before ? [bare, bareHeaders, before, edge] : [bare, bareHeaders, edge];
if (PIN) {
  // Each side gets the same CPU of its own, away from the load generator, rather than wherever
  // the scheduler puts it (less noise between identical servers on the shared machine).
  const pin = (cpu: number, pid: number) => execFileSync('taskset', ['-a', '-p', '-c', String(cpu), String(pid)]);
  pin(0, process.pid);
  for (const pid of new Set(sides.flatMap((s) => s.pids))) pin(1, pid);
}
try {
  for (const s of sides) await autocannon({ url: s.url, connections: CONNECTIONS, duration: 2, headers: auth });
  for (let round = 0; round < ROUNDS; round++)
    for (const s of sides) await measure(s, auth, Math.max(1, Math.round(SECONDS / ROUNDS)));
  console.log(
    `\n== quota benchmark (issues 3, 26, 29): GET /v1/quota with an API key, ${CONNECTIONS} connections, ` +
      `${ROUNDS} alternating rounds of ${Math.max(1, Math.round(SECONDS / ROUNDS))} s ==`,
  );
  console.log(
    `load average:${os.loadavg().map((l) => ` ${fmt(l, 2)}`)} (1/5/15 min); ` +
      (PIN ? 'load generator on CPU 0, servers on CPU 1' : 'not pinned to CPUs'),
  );
  for (const s of sides) {
    const cpu = (seconds: number) => fmt((seconds / s.requests) * 1e6, 1);
    console.log(
      `${`${s.name}:`.padEnd(34)}${fmt(s.requests / s.seconds, 0)} req/s ` +
        `(rounds ${s.rounds.map((r) => fmt(r.requests.average, 0)).join(' / ')}), ` +
        `p99 ${median(s.rounds.map((r) => r.latency.p99))} ms; CPU per 1,000 requests ` +
        `${cpu(s.cpu.user + s.cpu.system)} ms (user ${cpu(s.cpu.user)}, kernel ${cpu(s.cpu.system)})`,
    );
  }
  const ratios = (base: Side) =>
    edge.rounds.map((r, i) => r.requests.average / (base.rounds[i]?.requests.average ?? NaN));
  const cpuPerRequest = (s: Side) => (s.cpu.user + s.cpu.system) / s.requests;
  for (const base of before ? [bare, bareHeaders, before] : [bare, bareHeaders]) {
    const each = ratios(base);
    console.log(
      `edge / ${base.name}: throughput ${fmt(median(each), 3)}x ` +
        `(median; rounds ${each.map((r) => fmt(r, 3)).join(' / ')}), ` +
        `CPU per request ${fmt(cpuPerRequest(edge) / cpuPerRequest(base), 2)}x`,
    );
  }
} finally {
  await sameJson.stop();
  await sameHeaders.stop();
  await stack.stop();
}
