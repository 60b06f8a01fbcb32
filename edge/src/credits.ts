import { type Logger, readGrpcError } from '@webutil/kit';
import {
  type AuthorizeResponse,
  type BillingServiceService,
  CallerPolicy,
  type Denial,
  Refusal,
} from '@webutil/proto/webutil/billing/v1/billing';
import type { Context } from 'koa';
import { httpErrorFromCall } from './call-errors.js';
import { CLEARANCE_COOKIE, cookie, credentialOf, SESSION_COOKIE } from './caller.js';
import { HttpError } from './envelope.js';
import type { CallOptions, ServiceClient } from './grpc-clients.js';
import type { Caller, Metered } from './route-spec.js';
import type { SettlementQueue } from './settlements.js';

export type BillingClient = ServiceClient<typeof BillingServiceService>;

/** Every response carries the caller's credits left (0 when the caller is unknown). */
export const CREDITS_HEADER = 'X-Credits-Remaining';

/** An authorized call: spend its credits on success, return them on any failure. */
export interface Hold {
  caller: Caller;
  /** Queues the settlement and sets X-Credits-Remaining as it leaves the balance. */
  settle(outcome: 'success' | 'failure'): void;
}

/**
 * How long past its route's deadline billing keeps an unsettled hold (billing's
 * RESERVATION_GRACE_MS default): a settlement still unsent by then is dropped, not retried.
 */
const HOLD_GRACE_MS = 60_000;

/**
 * Deadline of every billing call: the edge's authorize and settlements, and the routes that
 * are billing's own RPCs (sign-in, keys...). They are quick store operations (a sign-in's scrypt
 * is ~0.1 s); the margin is for a loaded machine.
 */
export const BILLING_TIMEOUT_MS = 10_000;
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const POLICIES = {
  any: CallerPolicy.CALLER_POLICY_ANY,
  session: CallerPolicy.CALLER_POLICY_SESSION,
  ip: CallerPolicy.CALLER_POLICY_IP,
};
const STATUS_BY_REFUSAL: Record<Refusal, number> = {
  [Refusal.REFUSAL_UNAUTHENTICATED]: 401,
  [Refusal.REFUSAL_FORBIDDEN]: 403,
  [Refusal.REFUSAL_INSUFFICIENT_CREDITS]: 402,
  [Refusal.REFUSAL_RATE_LIMITED]: 429,
  [Refusal.REFUSAL_UNSPECIFIED]: 403,
  [Refusal.UNRECOGNIZED]: 403,
};

/** Billing calls are short and must finish even when the HTTP client has gone. */
const billingCall = (requestId: string): CallOptions => ({
  requestId,
  timeoutMs: BILLING_TIMEOUT_MS,
  signal: new AbortController().signal,
});

export function setCredits(ctx: Context, remaining: number): void {
  ctx.set(CREDITS_HEADER, String(remaining));
}

/**
 * Authenticates, checks the challenge clearance and the rate, and holds the route's credits, in
 * one billing call, the only one on the call's path. A refusal is thrown as its 401/402/403/429.
 */
export async function authorize(
  billing: BillingClient,
  settlements: SettlementQueue,
  spec: Metered,
  ctx: Context,
  requestId: string,
  log: Logger,
): Promise<Hold> {
  const callers = spec.callers ?? 'any';
  // An IP-only route ignores keys and sessions, but a browser's challenge clearance still counts.
  const credential =
    callers === 'ip'
      ? { clientIp: String(ctx.state.clientIp ?? ''), clearance: ctx.cookies.get(CLEARANCE_COOKIE) }
      : credentialOf(ctx);
  let outcome: AuthorizeResponse['outcome'];
  try {
    ({ outcome } = await billing.authorize(
      {
        credential,
        operation: spec.operation,
        credits: spec.credits,
        challenge: spec.challenge ?? spec.credits > 0,
        callers: POLICIES[callers],
        stateChanging: !SAFE_METHODS.has(ctx.method),
        holdMs: spec.timeoutMs,
      },
      billingCall(requestId),
    ));
  } catch (err) {
    log.warn({ requestId, operation: spec.operation, err: readGrpcError(err) }, 'billing authorize failed');
    throw httpErrorFromCall(err, spec);
  }
  if (outcome?.$case !== 'grant') throw refusal(ctx, outcome?.denial, spec.credits);
  const { quota, reservationId } = outcome.grant;
  setCredits(ctx, quota?.remaining ?? 0);
  const remaining = quota?.remaining ?? 0;
  setCredits(ctx, remaining);
  const expiresAt = Date.now() + spec.timeoutMs + HOLD_GRACE_MS;
  return {
    caller: { credential, quota: quota ?? { callerKind: 'anonymous', limit: 0, remaining: 0 } },
    settle(result) {
      if (!reservationId) return;
      settlements.add(reservationId, spec.operation, result, expiresAt);
      // The hold already took the credits: a success leaves the balance as it is, a failure returns them.
      if (result === 'failure') setCredits(ctx, remaining + spec.credits);
    },
  };
}

/** A billing refusal as the HTTP failure, with X-Credits-Remaining, Retry-After and creditsRequired. */
export function refusal(ctx: Context, denial: Denial | undefined, creditsRequired: number): HttpError {
  // Without a known caller the header is left to the credits-header middleware.
  if (denial?.remaining !== undefined) setCredits(ctx, denial.remaining);
  if (!denial) return new HttpError(500, 'internal_error', 'internal error');
  const status = STATUS_BY_REFUSAL[denial.refusal];
  const headers: Record<string, string> = {};
  if (status === 429 && denial.retryAfterSeconds !== undefined)
    headers['Retry-After'] = String(denial.retryAfterSeconds);
  // A cookie whose session ended is dropped so the browser stops sending it.
  if (denial.reason === 'INVALID_SESSION') headers['Set-Cookie'] = cookie(ctx, SESSION_COOKIE, '', 0);
  return new HttpError(
    status,
    denial.reason.toLowerCase(),
    denial.message,
    status === 402 ? creditsRequired : undefined,
    headers,
  );
}

/** X-Credits-Remaining for a response that authorized nothing (unknown route, malformed body). */
export async function peekCredits(billing: BillingClient, ctx: Context): Promise<number> {
  try {
    const { quota } = await billing.getQuota(
      { credential: credentialOf(ctx), refused: ctx.status >= 400 },
      billingCall(String(ctx.state.requestId ?? '')),
    );
    return quota?.remaining ?? 0;
  } catch {
    return 0; // unknown or malformed credential, or billing unreachable
  }
}
