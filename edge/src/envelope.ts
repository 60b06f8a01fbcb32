/** Every response carries the caller's credits left (0 when the caller is unknown). */
export const CREDITS_HEADER = 'X-Credits-Remaining';

export function setCredits(response: { set(field: string, value: string): void }, remaining: number): void {
  response.set(CREDITS_HEADER, String(remaining));
}

/** The caller's request-rate window, as draft-ietf-httpapi-ratelimit-headers (structured fields) names them. */
export const RATE_LIMIT_POLICY_HEADER = 'RateLimit-Policy';
export const RATE_LIMIT_HEADER = 'RateLimit';
/** The one policy every caller has: requests per one-minute window (its quota is the plan's figure). */
const RATE_POLICY = 'default';
const WINDOW_SECONDS = 60;
/** Policy header values by quota: a handful of plan figures, built once each. */
const policyValues = new Map<number, string>();

/** What the RateLimit headers are built from (billing's RateWindow). */
export interface RateWindowFigures {
  perMinute: number;
  /** Requests counted in the window, this one included. */
  used: number;
  /** The window: minutes since the epoch (UTC). */
  minute: string | number;
}

/**
 * `RateLimit-Policy: "default";q=60;w=60` and `RateLimit: "default";r=12;t=34`: the caller's
 * quota per window, the requests left in it and the seconds until it resets.
 */
export function setRateLimit(
  response: { set(field: string, value: string): void },
  rate: RateWindowFigures,
  now = Date.now(),
): void {
  let policy = policyValues.get(rate.perMinute);
  if (policy === undefined) {
    policy = `"${RATE_POLICY}";q=${rate.perMinute};w=${WINDOW_SECONDS}`;
    if (policyValues.size < 64) policyValues.set(rate.perMinute, policy);
  }
  const remaining = Math.max(0, rate.perMinute - rate.used);
  // Billing's clock names the window; clamped so a skewed clock never sends a reset outside it.
  const reset = Math.min(
    WINDOW_SECONDS,
    Math.max(0, Math.ceil(((Number(rate.minute) + 1) * WINDOW_SECONDS * 1000 - now) / 1000)),
  );
  response.set(RATE_LIMIT_POLICY_HEADER, policy);
  response.set(RATE_LIMIT_HEADER, `"${RATE_POLICY}";r=${remaining};t=${reset}`);
}

/** The spec's envelopes. A failure is raised anywhere in the edge and rendered by one middleware. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    /** snake_case machine code, e.g. invalid_request, target_blocked, insufficient_credits. */
    readonly code: string,
    message: string,
    readonly creditsRequired?: number,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export interface FailureBody {
  success: false;
  error: { code: string; message: string; creditsRequired?: number };
}

export function failureBody(err: HttpError): FailureBody {
  const error: FailureBody['error'] = { code: err.code, message: err.message };
  if (err.creditsRequired !== undefined) error.creditsRequired = err.creditsRequired;
  return { success: false, error };
}

/** How a route's success fields are wrapped: in `data` (most routes) or at top level (rendering and XBEL). */
export type Envelope = 'data' | 'top-level';

export function successBody(fields: unknown, envelope: Envelope): object {
  return envelope === 'data' ? { success: true, data: fields } : { success: true, ...(fields as object) };
}
