import type { ServerResponse } from 'node:http';

/** Where a response's headers are set: a Koa context (or anything holding Node's response). */
export interface HasResponse {
  res: ServerResponse;
}

/**
 * Sets response headers as Koa's ctx.set does for string values (nothing once they are sent), on
 * Node's response itself: Koa's set allocates arrays on every call, and these run on every request.
 */
export function setHeaders(ctx: HasResponse, headers: Readonly<Record<string, string>>): void {
  if (ctx.res.headersSent) return;
  for (const name in headers) ctx.res.setHeader(name, headers[name] as string);
}

function setHeader(ctx: HasResponse, name: string, value: string): void {
  if (!ctx.res.headersSent) ctx.res.setHeader(name, value);
}

/** Every response carries the caller's credits left (0 when the caller is unknown). */
/** Per-caller answers that change with every call: a row's `headers: noStore`. */
export const NO_STORE = { 'Cache-Control': 'no-store' };
export const noStore = () => NO_STORE;

export const CREDITS_HEADER = 'X-Credits-Remaining';

export function setCredits(ctx: HasResponse, remaining: number): void {
  setHeader(ctx, CREDITS_HEADER, String(remaining));
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
export function setRateLimit(ctx: HasResponse, rate: RateWindowFigures, now = Date.now()): void {
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
  setHeader(ctx, RATE_LIMIT_POLICY_HEADER, policy);
  setHeader(ctx, RATE_LIMIT_HEADER, `"${RATE_POLICY}";r=${remaining};t=${reset}`);
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

/** A client that left before its answer: logged as nginx does (499); the response goes nowhere. */
export const clientClosed = () => new HttpError(499, 'client_closed_request', 'the client closed the connection');

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
