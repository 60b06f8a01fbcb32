import { type Logger, readGrpcError } from '@webutil/kit';
import {
  type AuthorizeResponse,
  CallerPolicy,
  type Credential,
  type Denial,
  Refusal,
} from '@webutil/proto/webutil/billing/v1/billing';
import type { Context } from 'koa';
import { AuthorizeQueue } from './authorize-queue.js';
import { type BillingClient, billingCall } from './billing-client.js';
import { httpErrorFromCall } from './call-errors.js';
import { CLEARANCE_COOKIE, callerKey, cookie, credentialOf, SESSION_COOKIE } from './caller.js';
import { CallerViews } from './caller-views.js';
import { CreditLeases, HOLD_GRACE_MS, type LeasedCall, MAX_LEASED_CALL_MS } from './credit-leases.js';
import { HttpError } from './envelope.js';
import { FreeReadBounds, type FreeReadKind } from './free-read-bounds.js';
import type { Caller, Metered } from './route-spec.js';
import { SettlementQueue } from './settlements.js';

export { BILLING_TIMEOUT_MS } from './billing-client.js';

/** Every response carries the caller's credits left (0 when the caller is unknown). */
export const CREDITS_HEADER = 'X-Credits-Remaining';

/** An authorized call: spend its credits on success, return them on any failure. */
export interface Hold {
  caller: Caller;
  /** Queues the settlement and sets X-Credits-Remaining as it leaves the balance. */
  settle(outcome: 'success' | 'failure'): void;
}

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

export function setCredits(ctx: Context, remaining: number): void {
  ctx.set(CREDITS_HEADER, String(remaining));
}

export interface MeteringOptions {
  /**
   * How long the edge may answer a caller's free reads from billing's last word, and pay a busy
   * API-key caller's calls from a lease of its credits (0: never).
   */
  callerViewMs: number;
}

/**
 * The edge's side of the credit ledger: authorizations (batched), settlements (after the
 * response, batched), the short-lived view of each caller that answers free reads, and the leases
 * that pay a busy API-key caller's calls.
 */
export class Metering {
  readonly settlements: SettlementQueue;
  private readonly authorizations: AuthorizeQueue;
  private readonly views: CallerViews;
  private readonly leases: CreditLeases | undefined;
  private readonly freeReads = new FreeReadBounds();

  constructor(
    private readonly billing: BillingClient,
    private readonly log: Logger,
    options: MeteringOptions,
  ) {
    this.settlements = new SettlementQueue(billing, log);
    this.authorizations = new AuthorizeQueue(billing);
    this.views = new CallerViews(options.callerViewMs, billing, log);
    if (options.callerViewMs > 0)
      this.leases = new CreditLeases(options.callerViewMs, this.settlements, (key, credits) =>
        this.views.refund(key, credits),
      );
  }

  /**
   * Authenticates, checks the challenge clearance and the rate, and holds the route's credits, in
   * one billing call, the only one on the call's path; a busy API-key caller's call is paid from
   * its lease without one, and a free read of the caller's own quota may be answered from the
   * caller's view. A refusal is thrown as its 401/402/403/429.
   */
  async authorize(spec: Metered, ctx: Context, requestId: string): Promise<Hold> {
    const callers = spec.callers ?? 'any';
    // An IP-only route ignores keys and sessions, but a browser's challenge clearance still counts.
    const credential =
      callers === 'ip'
        ? { clientIp: String(ctx.state.clientIp ?? ''), clearance: ctx.cookies.get(CLEARANCE_COOKIE) }
        : credentialOf(ctx);
    const key = callerKey(credential);
    const leases =
      callers === 'any' && credential.apiKey !== undefined && spec.credits > 0 && spec.timeoutMs <= MAX_LEASED_CALL_MS
        ? this.leases
        : undefined;
    if (leases) {
      for (let paid = this.payFromLease(leases, key, spec, ctx, credential); paid; ) {
        if (!(paid instanceof Promise)) return paid;
        await paid;
        paid = this.payFromLease(leases, key, spec, ctx, credential);
      }
    }
    const seen = callers === 'ip' ? undefined : this.views.check(key, spec.fromCallerView === true);
    if (seen) {
      const quota = { ...seen.quota, remaining: seen.quota.remaining + (this.leases?.unused(key) ?? 0) };
      setCredits(ctx, quota.remaining);
      if (seen.retryAfterSeconds !== undefined) throw tooManyRequests(seen.retryAfterSeconds);
      return { caller: { credential, quota }, settle: () => undefined };
    }
    // Decided before any wait: of the callers that waited for one lease, only the first asks for the next.
    const leaseCredits = leases?.sizeFor(key, spec.credits, this.views.remaining(key)) ?? 0;
    const leaseAsked = leases && leaseCredits > 0 ? leases.asking(key) : undefined;
    // Read your own writes: a refund of this caller still on its way lands first.
    await this.settlements.refunded(key);
    let outcome: AuthorizeResponse['outcome'];
    let returnedMeanwhile = 0;
    const answered = this.views.asks(key);
    try {
      ({ outcome } = await this.authorizations.authorize(
        {
          credential,
          operation: spec.operation,
          credits: leaseCredits || spec.credits,
          challenge: spec.challenge ?? spec.credits > 0,
          callers: POLICIES[callers],
          stateChanging: !SAFE_METHODS.has(ctx.method),
          holdMs: leaseCredits ? (leases?.holdMs ?? 0) : spec.timeoutMs,
        },
        requestId,
      ));
    } catch (err) {
      leaseAsked?.();
      this.log.warn({ requestId, operation: spec.operation, err: readGrpcError(err) }, 'billing authorize failed');
      throw httpErrorFromCall(err, spec);
    } finally {
      returnedMeanwhile = answered();
    }
    if (outcome?.$case !== 'grant') {
      leaseAsked?.();
      const denial = outcome?.denial;
      // A lease asked for more than this call costs: too much is no reason to refuse the call.
      if (
        leaseCredits &&
        denial?.refusal === Refusal.REFUSAL_INSUFFICIENT_CREDITS &&
        (denial.remaining ?? 0) >= spec.credits
      ) {
        this.views.forget(key);
        return this.authorize(spec, ctx, requestId);
      }
      if (denial?.refusal === Refusal.REFUSAL_RATE_LIMITED) this.views.stillLimited(key);
      throw refusal(ctx, denial, spec.credits);
    }
    const { reservationId, rate } = outcome.grant;
    const granted = outcome.grant.quota ?? { callerKind: 'anonymous', limit: 0, remaining: 0 };
    const known = { ...granted, remaining: granted.remaining + returnedMeanwhile };
    if (callers !== 'ip') this.views.remember(key, known, rate);
    if (leaseAsked) {
      const call = reservationId && leases?.open(key, reservationId, leaseCredits, spec.operation, spec.credits);
      leaseAsked();
      if (call) return this.leasedHold(ctx, { credential, quota: known }, call, spec.credits, leases?.unused(key) ?? 0);
    }
    // Billing counts the credits the caller's leases have not spent as held; they are still its own.
    const quota = { ...known, remaining: known.remaining + (this.leases?.unused(key) ?? 0) };
    setCredits(ctx, quota.remaining);
    const expiresAt = Date.now() + spec.timeoutMs + HOLD_GRACE_MS;
    return {
      caller: { credential, quota },
      settle: (result) => {
        if (!reservationId) return;
        // The hold already took the credits: a success leaves the balance as it is, a failure returns them.
        if (result === 'success') {
          this.settlements.add(reservationId, [{ operation: spec.operation, credits: spec.credits }], expiresAt);
          return;
        }
        this.settlements.add(reservationId, [], expiresAt, key);
        this.views.refund(key, spec.credits);
        setCredits(ctx, quota.remaining + spec.credits);
      },
    };
  }

  /**
   * The call paid from the caller's open lease, counted toward its rate in its view; the lease
   * being asked for, to wait for; or undefined when billing must decide (no lease with enough
   * credits left and none coming, a stale view, a new rate window).
   */
  private payFromLease(
    leases: CreditLeases,
    key: string,
    spec: Metered,
    ctx: Context,
    credential: Credential,
  ): Hold | Promise<void> | undefined {
    const call = leases.take(key, spec.operation, spec.credits);
    if (!call) return leases.opening(key);
    const seen = this.views.check(key, true);
    if (!seen) {
      call.giveBack();
      leases.close(key);
      return undefined;
    }
    if (seen.retryAfterSeconds !== undefined) {
      call.giveBack();
      setCredits(ctx, seen.quota.remaining + leases.unused(key));
      throw tooManyRequests(seen.retryAfterSeconds);
    }
    return this.leasedHold(ctx, { credential, quota: seen.quota }, call, spec.credits, leases.unused(key));
  }

  /**
   * A call paid from a lease; the caller's credits left count what its leases hold and have not
   * given out (`unused`, once this call's credits are taken).
   */
  private leasedHold(ctx: Context, caller: Caller, call: LeasedCall, credits: number, unused: number): Hold {
    const remaining = caller.quota.remaining + unused;
    setCredits(ctx, remaining);
    return {
      caller: { ...caller, quota: { ...caller.quota, remaining } },
      settle: (result) => {
        call.settle(result);
        if (result === 'failure') setCredits(ctx, remaining + credits);
      },
    };
  }

  /**
   * X-Credits-Remaining for a response that authorized nothing (unknown route, malformed body):
   * from the caller's view while it is fresh, else from billing; the request counts toward the
   * caller's rate either way.
   */
  async peekCredits(ctx: Context): Promise<number> {
    try {
      const credential = credentialOf(ctx);
      const key = callerKey(credential);
      // Like billing's GetQuota, only a refused request counts (pages and their assets do not).
      const refused = ctx.status >= 400;
      const seen = refused ? this.views.check(key, true)?.quota : this.views.peek(key);
      if (seen) return seen.remaining + (this.leases?.unused(key) ?? 0);
      const answered = this.views.asks(key);
      let reply: Awaited<ReturnType<BillingClient['getQuota']>>;
      let returnedMeanwhile = 0;
      try {
        reply = await this.billing.getQuota({ credential, refused }, billingCall(String(ctx.state.requestId ?? '')));
      } finally {
        returnedMeanwhile = answered();
      }
      const quota = reply.quota && { ...reply.quota, remaining: reply.quota.remaining + returnedMeanwhile };
      this.views.remember(key, quota, reply.rate);
      return (quota?.remaining ?? 0) + (this.leases?.unused(key) ?? 0);
    } catch {
      return 0; // unknown or malformed credential, or billing unreachable
    }
  }

  /**
   * A free read held to its own bound (free-read-bounds.ts), not the caller's rate: the caller's
   * quota read without counting a request (its fresh view, else billing's GetQuota of an
   * unrefused request, which counts nothing). A refused credential is its 401/403.
   */
  async freeRead(kind: FreeReadKind, spec: Metered, ctx: Context, requestId: string): Promise<Hold> {
    const credential = credentialOf(ctx);
    const key = callerKey(credential);
    const retryAfterSeconds = this.freeReads.hit(kind, String(ctx.state.clientIp ?? ''));
    let quota = this.views.peek(key);
    if (!quota) {
      try {
        quota = (await this.billing.getQuota({ credential, refused: false }, billingCall(requestId))).quota;
      } catch (err) {
        setCredits(ctx, 0);
        const failure = httpErrorFromCall(err, spec);
        // As Authorize's refusal does: a cookie whose session ended is dropped.
        if (failure.code === 'invalid_session') ctx.set('Set-Cookie', cookie(ctx, SESSION_COOKIE, '', 0));
        throw failure;
      }
    }
    const known = quota ?? { callerKind: 'anonymous', limit: 0, remaining: 0 };
    const remaining = known.remaining + (this.leases?.unused(key) ?? 0);
    setCredits(ctx, remaining);
    if (retryAfterSeconds !== undefined) throw tooManyRequests(retryAfterSeconds);
    return { caller: { credential, quota: { ...known, remaining } }, settle: () => undefined };
  }

  /** On shutdown: sends what is queued, for at most `withinMs`. */
  async drain(withinMs: number): Promise<void> {
    this.views.close();
    this.leases?.closeAll();
    await Promise.all([this.settlements.drain(withinMs), this.views.flush()]);
  }
}

const tooManyRequests = (retryAfterSeconds: number) =>
  new HttpError(429, 'rate_limited', `too many requests; retry in ${retryAfterSeconds} s`, undefined, {
    'Retry-After': String(retryAfterSeconds),
  });

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
