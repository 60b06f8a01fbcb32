/** What a monitor may be: its kinds with their shortest interval, and each plan's bounds (decision 0432). */

/** The operations a monitor runs, and the shortest interval of each (a scan hourly, a crawl daily). */
export const KIND_MIN_INTERVAL_SECONDS = {
  'down-check': 60,
  'ssl-scan': 3_600,
  'meta-scan': 3_600,
  'broken-links-crawl': 86_400,
  screenshot: 3_600,
} as const;

export type MonitorKind = keyof typeof KIND_MIN_INTERVAL_SECONDS;
export const MONITOR_KINDS = Object.keys(KIND_MIN_INTERVAL_SECONDS) as MonitorKind[];

export const isMonitorKind = (kind: string): kind is MonitorKind => kind in KIND_MIN_INTERVAL_SECONDS;

/** The longest interval: 30 days. */
export const MAX_INTERVAL_SECONDS = 30 * 86_400;

export interface PlanBounds {
  /** Monitors an account may have, paused ones included. */
  monitors: number;
  /** Its shortest interval, whatever the kind allows. */
  minIntervalSeconds: number;
}

export const PLAN_BOUNDS: Record<string, PlanBounds> = {
  FREE: { monitors: 3, minIntervalSeconds: 300 },
  STARTER: { monitors: 20, minIntervalSeconds: 60 },
  GROWTH: { monitors: 100, minIntervalSeconds: 60 },
  SCALE: { monitors: 500, minIntervalSeconds: 60 },
  ENTERPRISE: { monitors: 2_000, minIntervalSeconds: 60 },
};

/** A plan this service does not know gets the Free plan's bounds. */
export const boundsOf = (plan: string): PlanBounds => PLAN_BOUNDS[plan] ?? (PLAN_BOUNDS.FREE as PlanBounds);

/** The shortest interval a monitor of this kind may have on this plan. */
export const minIntervalSeconds = (kind: MonitorKind, plan: string) =>
  Math.max(KIND_MIN_INTERVAL_SECONDS[kind], boundsOf(plan).minIntervalSeconds);
