/** The account page's usage chart: spent credits per UTC day and operation (decision 0481). */
import type { DailyUsage } from './stores/store.js';

export const DAY_MS = 86_400_000;
/** The longest range a caller may ask for, in days. */
export const MAX_USAGE_DAYS = 90;

export interface OperationUsage {
  operation: string;
  credits: number;
  calls: number;
}

export interface DayUsage {
  /** YYYY-MM-DD, UTC. */
  day: string;
  credits: number;
  calls: number;
  operations: OperationUsage[];
}

/** The range of the last `days` UTC days up to `now`'s, today the last: [from, to). */
export function lastDays(now: number, days: number): { from: number; to: number } {
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  return { from: today - (days - 1) * DAY_MS, to: today + DAY_MS };
}

/** Every day from `from` on, `days` of them, with the store's sums; days without calls are zeros. */
export function dailySeries(rows: readonly DailyUsage[], from: number, days: number): DayUsage[] {
  const series = Array.from({ length: days }, (_, i) => ({
    day: new Date(from + i * DAY_MS).toISOString().slice(0, 10),
    credits: 0,
    calls: 0,
    operations: [] as OperationUsage[],
  }));
  for (const row of rows) {
    const entry = series[Math.round((row.day - from) / DAY_MS)];
    if (!entry) continue;
    entry.credits += row.credits;
    entry.calls += row.calls;
    entry.operations.push({ operation: row.operation, credits: row.credits, calls: row.calls });
  }
  return series;
}
