/**
 * Maintenance windows: times in which a monitor's alerts are silenced (its runs and incidents are
 * still recorded; an incident opened in one is marked silenced). A window is one-off, from
 * `startsAt` to `endsAt`, or weekly: the same span again every 7 days from `startsAt` on.
 */
import { MonitorAlerts } from '@webutil/proto/webutil/monitor/v1/monitor';
import type { MonitorRecord } from './store/store.js';

export const WEEK_MS = 7 * 86_400_000;

export interface MaintenanceRule {
  /** ISO 8601. */
  startsAt: string;
  endsAt: string;
  /** `weekly`, or absent/empty: once. */
  repeat?: string;
}

/** Whether `at` (epoch ms) falls in one of the windows (start inclusive, end exclusive). */
export function inMaintenance(windows: readonly MaintenanceRule[] | undefined, at: number): boolean {
  return (windows ?? []).some((window) => {
    const start = Date.parse(window.startsAt);
    const end = Date.parse(window.endsAt);
    if (!(end > start) || at < start) return false;
    if (window.repeat === 'weekly') return (at - start) % WEEK_MS < Math.min(end - start, WEEK_MS);
    return at < end;
  });
}

/** Whether the monitor's alerts are silenced at `at` by its maintenance windows. */
export function monitorInMaintenance(monitor: Pick<MonitorRecord, 'alertsJson'>, at: number): boolean {
  return inMaintenance(MonitorAlerts.fromPartial(JSON.parse(monitor.alertsJson) as object).maintenance, at);
}
