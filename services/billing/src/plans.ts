/** The plan table: one row per plan, the only place credit allowances and request rates live. */
export const PLAN_NAMES = ['FREE', 'STARTER', 'GROWTH', 'SCALE', 'ENTERPRISE'] as const;
export type PlanName = (typeof PLAN_NAMES)[number];

export interface Plan {
  /** Credits granted at the start of every monthly cycle (unused ones do not carry over). */
  creditsPerCycle: number;
  /** Requests per minute, metered or free, per account (all its sessions and keys together). */
  requestsPerMinute: number;
  /** Whether the account may create API keys (the Free plan is the browser playground). */
  apiKeys: boolean;
  /**
   * Renders (screenshot and url-to-pdf together) the account may have in flight at once, all its
   * sessions and keys together: a failed render is free, so this bounds the browsers one caller holds.
   */
  rendersInFlight: number;
}

export const PLANS: Record<PlanName, Plan> = {
  FREE: { creditsPerCycle: 100, requestsPerMinute: 30, apiKeys: false, rendersInFlight: 2 },
  STARTER: { creditsPerCycle: 3_000, requestsPerMinute: 60, apiKeys: true, rendersInFlight: 4 },
  GROWTH: { creditsPerCycle: 15_000, requestsPerMinute: 120, apiKeys: true, rendersInFlight: 8 },
  SCALE: { creditsPerCycle: 60_000, requestsPerMinute: 300, apiKeys: true, rendersInFlight: 12 },
  ENTERPRISE: { creditsPerCycle: 250_000, requestsPerMinute: 1_000, apiKeys: true, rendersInFlight: 16 },
};

export function isPlanName(name: string): name is PlanName {
  return (PLAN_NAMES as readonly string[]).includes(name);
}

/** Anonymous callers: an allowance per client IP (IPv6: per /64) per UTC day. */
export interface AnonymousAllowance {
  creditsPerDay: number;
  requestsPerMinute: number;
  /** Renders in flight at once per client network (see Plan). */
  rendersInFlight: number;
}

export const DEFAULT_ANONYMOUS: AnonymousAllowance = { creditsPerDay: 10, requestsPerMinute: 30, rendersInFlight: 2 };

const DAY_MS = 86_400_000;

/** UTC day number (days since the epoch) and the instant the next one starts. */
export function utcDay(now: number): { day: number; endsAt: number } {
  const day = Math.floor(now / DAY_MS);
  return { day, endsAt: (day + 1) * DAY_MS };
}

/**
 * The same instant `months` later: the anchor's day of month, clamped to the month's last day
 * (a cycle anchored on the 31st renews on Feb 28/29, then on Mar 31).
 */
export function addMonths(anchor: number, months: number): number {
  const d = new Date(anchor);
  const year = d.getUTCFullYear();
  const month = d.getUTCMonth() + months;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  return Date.UTC(
    year,
    month,
    Math.min(d.getUTCDate(), lastDay),
    d.getUTCHours(),
    d.getUTCMinutes(),
    d.getUTCSeconds(),
    d.getUTCMilliseconds(),
  );
}

/** End of the monthly cycle (anniversaries of `anchor`) that contains `now`. */
export function cycleEndAfter(anchor: number, now: number): number {
  let months = 1;
  while (addMonths(anchor, months) <= now) months++;
  return addMonths(anchor, months);
}
