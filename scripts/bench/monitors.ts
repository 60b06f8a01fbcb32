/**
 * Issue 40, the monitor schedule: 1,000 one-minute down-check monitors against a fixture site, made
 * through the edge, on the embedded store with one monitor replica at the chart's settings. Over
 * BENCH_MINUTES (default 2) after a minute of warm-up it prints the schedule's lag (slot start to the
 * run's claim) p50/p99 from the runs the edge lists, and the monitor process's CPU per run (less its
 * idle CPU, measured first). Baselines in the same run: 1,000 plain setTimeout timers firing at the same
 * slots in this process (their lag), and the share of the lag the tick alone explains (uniform over it).
 */
import { readFileSync } from 'node:fs';
import { startFixtureSite } from '../src/fixture-site.js';
import { startTestStack } from '../src/test-stack.js';
import { fmt } from './load.js';

const MONITORS = Number(process.env.BENCH_MONITORS ?? 1_000);
const MINUTES = Number(process.env.BENCH_MINUTES ?? 2);
const TICK_MS = Number(process.env.BENCH_TICK_MS ?? 1_000);
const MINUTE_MS = 60_000;
/** Linux's USER_HZ: /proc's CPU times are in hundredths of a second. */
const CLOCK_TICKS_PER_S = 100;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
};

/** A process's CPU time so far (user + system), in ms. */
function cpuMsOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_S;
}

/** The baseline: each firing's lateness, of plain timers at the monitors' slots. */
const timerLags: number[] = [];
let stopTimers = false;

/** A one-minute timer from `dueMs` on, recording how late each firing is. */
function timerAt(dueMs: number): void {
  const fire = () => {
    if (stopTimers) return;
    timerLags.push(Date.now() - dueMs);
    dueMs += MINUTE_MS;
    setTimeout(fire, dueMs - Date.now());
  };
  setTimeout(fire, dueMs - Date.now());
}

const site = await startFixtureSite();
const stack = await startTestStack({
  allowTargets: '127.0.0.0/8',
  envFor: { monitor: { MONITOR_TICK_MS: String(TICK_MS), MONITOR_GRACE_MS: '15000', MONITOR_CONCURRENCY: '50' } },
});

interface Run {
  slot: string;
  startedAt: string;
  outcome: string;
}

try {
  const pid = stack.pid('monitor');
  if (pid === undefined) throw new Error('no monitor process');
  const idleStart = cpuMsOf(pid);
  await sleep(10_000);
  const idleCpuPerMs = (cpuMsOf(pid) - idleStart) / 10_000;

  const ids: string[] = [];
  for (let i = 0; i < MONITORS; i += 20) {
    const made = await Promise.all(
      Array.from({ length: Math.min(20, MONITORS - i) }, async (_, k) => {
        const res = await stack.api('/v1/monitors', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            name: `bench ${i + k}`,
            kind: 'down-check',
            input: { url: site.url(`/?monitor=${i + k}`) },
            intervalSeconds: 60,
          }),
        });
        const body = (await res.json()) as { data: { id: string; nextRunAt: string } };
        if (res.status !== 201) throw new Error(`creating a monitor: ${res.status} ${JSON.stringify(body)}`);
        return body.data;
      }),
    );
    ids.push(...made.map((m) => m.id));
    // The baseline: a plain timer per monitor, firing at the same slots, its lag measured.
    for (const m of made) timerAt(Date.parse(m.nextRunAt));
  }
  await sleep(MINUTE_MS);

  const from = Date.now();
  const cpuFrom = cpuMsOf(pid);
  timerLags.length = 0;
  await sleep(MINUTES * MINUTE_MS);
  const to = Date.now();
  const cpuMs = cpuMsOf(pid) - cpuFrom - idleCpuPerMs * (to - from);
  stopTimers = true;
  const timers = [...timerLags];

  const lags: number[] = [];
  const outcomes: Record<string, number> = {};
  for (let i = 0; i < ids.length; i += 20) {
    const pages = await Promise.all(
      ids.slice(i, i + 20).map(async (id) => {
        const query = `from=${new Date(from).toISOString()}&to=${new Date(to).toISOString()}&limit=500`;
        const res = await stack.api(`/v1/monitors/${id}/runs?${query}`);
        return ((await res.json()) as { data: { runs: Run[] } }).data.runs;
      }),
    );
    for (const run of pages.flat()) {
      lags.push(Date.parse(run.startedAt) - Date.parse(run.slot));
      outcomes[run.outcome] = (outcomes[run.outcome] ?? 0) + 1;
    }
  }
  const expected = (MONITORS * (to - from)) / MINUTE_MS;
  console.log(
    `monitor schedule: ${MONITORS} one-minute monitors, ${MINUTES} min, tick ${TICK_MS} ms: ` +
      `${lags.length} runs (${fmt(expected, 0)} slots due) ${JSON.stringify(outcomes)}`,
  );
  console.log(
    `  lag slot -> claim p50 ${fmt(percentile(lags, 50), 0)} ms  p99 ${fmt(percentile(lags, 99), 0)} ms  ` +
      `max ${fmt(Math.max(...lags), 0)} ms;  the tick alone: p50 ${fmt(TICK_MS / 2, 0)} ms  ` +
      `p99 ${fmt(TICK_MS * 0.99, 0)} ms;  ratio p99 / tick p99 ${fmt(percentile(lags, 99) / (TICK_MS * 0.99), 2)}x`,
  );
  console.log(
    `  plain setTimeout at the same slots (baseline): p50 ${fmt(percentile(timers, 50), 1)} ms  ` +
      `p99 ${fmt(percentile(timers, 99), 1)} ms  (${timers.length} fired)`,
  );
  console.log(
    `  monitor process CPU per run ${fmt(cpuMs / Math.max(1, lags.length), 2)} ms (idle CPU subtracted: ` +
      `${fmt(idleCpuPerMs * 1000, 1)} ms/s);  ${fmt((cpuMs / (to - from)) * 100, 1)} % of a core for ` +
      `${fmt((lags.length / (to - from)) * 1000, 1)} runs/s`,
  );
} finally {
  stopTimers = true;
  await stack.stop();
  await site.close();
}
