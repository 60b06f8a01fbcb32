/**
 * Uptime from a down-check monitor's run history: the share of checks that found the site up
 * over the last 24 hours, 7, 30 and 90 days, one bar per day, and response times in buckets for a
 * chart. Runs without a verdict (skipped for credits, failed to run) are gaps, not uptime.
 */

/** The fields of a run (proto webutil.monitor.v1.Run) uptime reads. */
export interface UptimeRun {
  startedAt: string;
  /** up, degraded (reachable, slow or erroring) or down; absent when the run did not check. */
  verdict?: string;
  responseTimeMs?: number;
}

/**
 * The checks of one whole UTC day, summed (the store's daily rollup). Uptime reads a day either
 * from its runs or from its counts, never both: the caller hands each day over once.
 */
export interface DayCounts {
  /** The UTC day's start, epoch ms. */
  day: number;
  checks: number;
  failures: number;
}

export interface UptimeFigure {
  /** Percent of checks up, floored to two decimals (99.999 shows as 99.99, never 100); null: no checks. */
  percent: number | null;
  checks: number;
  failures: number;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** The windows a status page and badges show (decision 0438). */
export const UPTIME_WINDOWS = { '24h': DAY_MS, '7d': 7 * DAY_MS, '30d': 30 * DAY_MS, '90d': 90 * DAY_MS } as const;
export type UptimeWindow = keyof typeof UPTIME_WINDOWS;

const isCheck = (run: UptimeRun) => run.verdict === 'up' || run.verdict === 'degraded' || run.verdict === 'down';

const percentUp = (checks: number, failures: number) =>
  checks ? Math.floor(((checks - failures) / checks) * 10_000) / 100 : null;

export interface WindowFigure extends UptimeFigure {
  window: UptimeWindow;
}

/**
 * Uptime over each window ending at `now`, shortest first (runs after `now` are ignored), from runs
 * and from whole days' counts (a day counts when it lies wholly within the window).
 */
export function uptimeWindows(
  runs: readonly UptimeRun[],
  now: number,
  days: readonly DayCounts[] = [],
): WindowFigure[] {
  const ages = runs.map((run) => (isCheck(run) ? now - Date.parse(run.startedAt) : Number.NaN));
  return (Object.entries(UPTIME_WINDOWS) as [UptimeWindow, number][]).map(([window, span]) => {
    let checks = 0;
    let failures = 0;
    for (const [i, age] of ages.entries()) {
      if (!(age >= 0 && age <= span)) continue;
      checks++;
      if (runs[i]?.verdict === 'down') failures++;
    }
    for (const day of days) {
      if (day.day < now - span || day.day + DAY_MS - 1 > now) continue;
      checks += day.checks;
      failures += day.failures;
    }
    return { window, percent: percentUp(checks, failures), checks, failures };
  });
}

export interface DayBar extends UptimeFigure {
  /** The UTC day, YYYY-MM-DD. */
  day: string;
}

/** One bar per UTC day for the last `days` days up to `now`'s day, oldest first (from runs and days' counts). */
export function dailyBars(
  runs: readonly UptimeRun[],
  now: number,
  days = 90,
  dayCounts: readonly DayCounts[] = [],
): DayBar[] {
  const first = (Math.floor(now / DAY_MS) - days + 1) * DAY_MS;
  const counts = Array.from({ length: days }, () => ({ checks: 0, failures: 0 }));
  for (const day of dayCounts) {
    const count = day.day <= now ? counts[Math.floor((day.day - first) / DAY_MS)] : undefined;
    if (!count) continue;
    count.checks += day.checks;
    count.failures += day.failures;
  }
  for (const run of runs) {
    if (!isCheck(run)) continue;
    const at = Date.parse(run.startedAt);
    const count = at <= now ? counts[Math.floor((at - first) / DAY_MS)] : undefined;
    if (!count) continue;
    count.checks++;
    if (run.verdict === 'down') count.failures++;
  }
  return counts.map(({ checks, failures }, i) => ({
    day: new Date(first + i * DAY_MS).toISOString().slice(0, 10),
    percent: percentUp(checks, failures),
    checks,
    failures,
  }));
}

export interface ResponseTimePoint {
  /** Start of the bucket, ISO 8601. */
  at: string;
  /** Mean and slowest response time of the bucket's checks that answered; null: none did. */
  meanMs: number | null;
  maxMs: number | null;
}

/** Response times over [from, to) in `buckets` equal buckets (a chart's points), oldest first. */
export function responseTimeSeries(
  runs: readonly UptimeRun[],
  from: number,
  to: number,
  buckets: number,
): ResponseTimePoint[] {
  const width = (to - from) / buckets;
  const sums = Array.from({ length: buckets }, () => ({ total: 0, count: 0, max: 0 }));
  for (const run of runs) {
    if (run.responseTimeMs === undefined || run.verdict === 'down') continue;
    const at = Date.parse(run.startedAt);
    if (at < from || at >= to) continue;
    const bucket = sums[Math.min(buckets - 1, Math.floor((at - from) / width))];
    if (!bucket) continue;
    bucket.total += run.responseTimeMs;
    bucket.count++;
    bucket.max = Math.max(bucket.max, run.responseTimeMs);
  }
  return sums.map((sum, i) => ({
    at: new Date(from + i * width).toISOString(),
    meanMs: sum.count ? Math.round(sum.total / sum.count) : null,
    maxMs: sum.count ? sum.max : null,
  }));
}
