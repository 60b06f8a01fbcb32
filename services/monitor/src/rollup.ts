/**
 * The daily rollup of a monitor's runs: each finished run adds itself to its slot's UTC day, and
 * uptime over days (status pages, badges, the owner's figures) reads those days instead of every run.
 */
import type { DayRollup, MonitorStore, RollupSample, RunRecord } from './store/store.js';
import type { DayCounts } from './uptime.js';

export const DAY_MS = 86_400_000;

/** The start (epoch ms) of the UTC day of `ms`. */
export const dayOf = (ms: number) => Math.floor(ms / DAY_MS) * DAY_MS;

/** What a finished run adds to its day: one run, a check by its verdict, its response time if it answered. */
export function sampleOf(run: Pick<RunRecord, 'verdict' | 'responseTimeMs'>): RollupSample {
  const answered = (run.verdict === 'up' || run.verdict === 'degraded') && run.responseTimeMs !== undefined;
  const ms = answered ? (run.responseTimeMs ?? 0) : 0;
  return {
    runs: 1,
    ups: run.verdict === 'up' ? 1 : 0,
    degraded: run.verdict === 'degraded' ? 1 : 0,
    downs: run.verdict === 'down' ? 1 : 0,
    responseTimeSumMs: ms,
    responseTimeCount: answered ? 1 : 0,
    responseTimeMaxMs: ms,
  };
}

/**
 * Adds a finished run to its monitor's day; called once per run, after the store has its result.
 * The runner calls it where it finishes a run (a failure here is the caller's to log, not the run's).
 */
export function recordRunInRollup(
  store: Pick<MonitorStore, 'addToDay'>,
  run: Pick<RunRecord, 'monitorId' | 'slot' | 'verdict' | 'responseTimeMs'>,
): Promise<void> {
  return store.addToDay(run.monitorId, dayOf(run.slot), sampleOf(run));
}

/** A stored day as uptime counts it. */
export function dayCountsOf(day: DayRollup): DayCounts {
  return { day: day.day, checks: day.ups + day.degraded + day.downs, failures: day.downs };
}

/**
 * The days whose runs are read one by one at `now`: today and yesterday (the 24 h window and the
 * response-time chart) and the partly covered first day of each longer window (7, 30 and 90 days
 * back at `now`'s time of day). Every other day of the last 90 is read from the rollup whole, so a
 * status page reads at most five days of runs, and its figures stay exact.
 */
export function daysReadRunByRun(now: number): number[] {
  const today = dayOf(now);
  return [
    ...new Set([today, today - DAY_MS, dayOf(now - 7 * DAY_MS), dayOf(now - 30 * DAY_MS), dayOf(now - 90 * DAY_MS)]),
  ];
}
