import { randomUUID } from 'node:crypto';
import { CallerSlots, clientNetwork, type Logger, readGrpcError } from '@webutil/kit';
import {
  type AuthorizeResponse,
  CallerPolicy,
  type Credential,
  type GetQuotaResponse,
  type Quota,
  type RateWindow,
  Refusal,
  type SpentCall,
} from '@webutil/proto/webutil/billing/v1/billing';
import type { Context } from 'koa';
import { BILLING_TIMEOUT_MS, type BillingClient, billingCall } from '../billing-client.js';
import { httpErrorFromCall, httpErrorFromDenial, UNAVAILABLE_RETRY_AFTER_S } from '../call-errors.js';
import { CLEARANCE_COOKIE, callerKey, cookie, credentialOf, renderCaller, SESSION_COOKIE } from '../caller.js';
import { HttpError, setCredits, setRateLimit } from '../envelope.js';
import type { Caller, FreeReadKind, Metered } from '../route-spec.js';
import { AuthorizeQueue } from './authorize-queue.js';
import { CallerViews } from './caller-views.js';
import { FreeReadBounds, freeReadKind } from './free-read-bounds.js';
import type { Hold } from './index.js';
import * as rules from './lease-rules.js';
import { type SettleAnswer, SettlementQueue } from './settlements.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
/** A refused render's Retry-After: a render takes seconds, and a slot frees when one ends. */
const RENDER_SLOT_RETRY_SECONDS = 2;
const POLICIES = {
  any: CallerPolicy.CALLER_POLICY_ANY,
  session: CallerPolicy.CALLER_POLICY_SESSION,
  owner: CallerPolicy.CALLER_POLICY_OWNER,
  ip: CallerPolicy.CALLER_POLICY_IP,
};
/** A lease offered to billing, not yet answered. */
interface Offer {
  answered: Promise<void>;
  done(): void;
}

const DECLINED: rules.LeaseAnswer = { declined: true };
const UNANSWERED: rules.LeaseAnswer = { declined: false };

/**
 * The edge's side of the credit ledger: authorizations (batched), settlements (a success's before
 * its answer, batched), the short-lived view of each caller that answers free reads, and the leases
 * that pay a busy API-key caller's calls. `authorize` reads top to bottom: paid from the caller's
 * lease; else answered from its view; else billing decides (and may grant a lease).
 */
export class Meter {
  private readonly settlements: SettlementQueue;
  private readonly authorizations: AuthorizeQueue;
  private readonly views: CallerViews;
  /** Each caller's leases (lease-rules.ts); empty when leases are off. */
  private readonly leases = new Map<string, rules.CallerLeases>();
  /** A lease offered to billing and not yet answered, per caller: the callers arriving meanwhile wait for it. */
  private readonly offers = new Map<string, Offer>();
  private readonly timer: NodeJS.Timeout | undefined;
  /** Each caller's renders in flight (screenshot and url-to-pdf), bounded by its plan's figure. */
  private readonly renders = new CallerSlots();
  /** Free reads (job polls, the website's page reads) held to bounds of their own, not the caller's rate. */
  private readonly freeReads = new FreeReadBounds();
  /**
   * Subjects (accounts) billing said changed, until when: an answer billing gave before the change
   * may still arrive meanwhile, so until then none opens a view or a lease for them.
   */
  private readonly revoked = new Map<string, number>();
  /** Longer than any billing answer can take to arrive. */
  private readonly revokedWindowMs: number;

  /** `leaseMs`: how long a caller's view answers for it, and a lease pays its calls (0: never). */
  constructor(
    private readonly billing: BillingClient,
    private readonly log: Logger,
    private readonly leaseMs: number,
  ) {
    this.revokedWindowMs = leaseMs + 2 * BILLING_TIMEOUT_MS;
    this.settlements = new SettlementQueue(billing, log);
    this.authorizations = new AuthorizeQueue(billing);
    this.views = new CallerViews(leaseMs, billing, log);
    if (leaseMs > 0) this.timer = setInterval(() => this.sweep(), Math.min(250, leaseMs)).unref();
  }

  authorize(spec: Metered, ctx: Context, requestId: string): Promise<Hold> {
    // Not an async function: most calls (reads answered from the caller's view) skip a promise.
    const hold = this.hold(spec, ctx, requestId);
    return spec.render ? hold.then((held) => this.withRenderSlot(held)) : hold;
  }

  /**
   * The call's own hold (or its lease's share) goes back, then billing holds the sized price as
   * the call's own hold, not counting the request again: the caller needs only the sized price,
   * never both. The refund lands before billing is asked (`askBilling` waits for it).
   */
  async reprice(
    hold: Hold,
    spec: Metered,
    ctx: Context,
    requestId: string,
    credits: number,
    holdMs?: number,
  ): Promise<Hold> {
    if (!(hold instanceof PaidHold) || (hold.call.credits === credits && holdMs === undefined)) return hold;
    hold.release();
    // A job that settles its own price holds it for its budget (decision 0490).
    const sized = { ...spec, credits, ...(holdMs === undefined ? {} : { timeoutMs: holdMs }) };
    return this.askBilling(sized, ctx, requestId, hold.caller.credential, hold.key, false, true);
  }

  /**
   * The hold with one of the caller's render slots, freed as the hold ends; over the caller's
   * bound the hold is released (nothing spent) and the call refused.
   */
  private withRenderSlot(hold: MeteredHold): Hold {
    const { subject, rendersInFlight: bound } = renderCaller(hold.caller);
    const free = this.renders.take(subject, bound);
    if (!free) {
      hold.release();
      throw new HttpError(
        429,
        'concurrency_limited',
        `too many renders in flight: this caller's plan allows ${bound} at a time (screenshot and url-to-pdf ` +
          `together); retry when one has finished`,
        undefined,
        { 'Retry-After': String(RENDER_SLOT_RETRY_SECONDS) },
      );
    }
    return new SlotHold(hold, free);
  }

  private async hold(spec: Metered, ctx: Context, requestId: string): Promise<MeteredHold> {
    const freeRead = freeReadKind(spec.freeRead, ctx.path);
    if (freeRead) return this.freeRead(freeRead, spec, ctx, requestId);
    const callers = spec.callers ?? 'any';
    // An IP-only route ignores keys and sessions, but a browser's challenge clearance still counts.
    const credential =
      callers === 'ip'
        ? { clientIp: String(ctx.state.clientIp ?? ''), clearance: ctx.cookies.get(CLEARANCE_COOKIE) }
        : credentialOf(ctx);
    const key = callerKey(credential);
    const leasable =
      this.leaseMs > 0 &&
      callers === 'any' &&
      credential.apiKey !== undefined &&
      spec.credits > 0 &&
      spec.timeoutMs <= rules.MAX_LEASED_CALL_MS;
    while (leasable) {
      const paid = this.payFromLease(key, spec, ctx, credential);
      if (paid) return paid;
      // A lease being offered is waited for: of the callers that waited, only the first offers the next.
      const offer = this.offers.get(key);
      if (!offer) break;
      await offer.answered;
    }
    const seen = callers === 'ip' ? undefined : this.views.check(key, spec.fromCallerView === true);
    if (seen) {
      const remaining = seen.quota.remaining + this.unused(key);
      setCredits(ctx, remaining);
      setRateLimit(ctx, seen.rate);
      if (seen.retryAfterSeconds !== undefined) throw tooManyRequests(seen.retryAfterSeconds);
      return new FreeHold(this.caller(key, credential, { ...seen.quota, remaining }, seen.rate));
    }
    return this.askBilling(spec, ctx, requestId, credential, key, leasable);
  }

  /**
   * The call paid from the caller's open lease, counted toward its rate in its view; undefined
   * when it cannot be (no lease with enough credits left, a stale view, a new rate window).
   */
  private payFromLease(key: string, spec: Metered, ctx: Context, credential: Credential): PaidHold | undefined {
    const state = this.leases.get(key);
    if (!state) return undefined;
    const taken = rules.take(state, spec.credits, Date.now());
    this.carryOut(key, taken);
    if (taken.paidBy === undefined) return undefined;
    const call = { operation: spec.operation, credits: spec.credits };
    const seen = this.views.check(key, true);
    const retryAfter = seen?.retryAfterSeconds;
    if (seen && retryAfter === undefined)
      return this.leasedHold(ctx, this.caller(key, credential, seen.quota, seen.rate), key, taken.paidBy, call);
    // Not paid after all: its credits go back to the lease.
    this.carryOut(key, rules.finish(this.leaseState(key), taken.paidBy, call, false));
    if (retryAfter === undefined) {
      // The view is stale or a new rate window began: billing decides, and a new lease may follow.
      this.carryOut(key, rules.end(this.leaseState(key)));
      return undefined;
    }
    setCredits(ctx, (seen?.quota.remaining ?? 0) + this.unused(key));
    if (seen) setRateLimit(ctx, seen.rate);
    throw tooManyRequests(retryAfter);
  }

  /**
   * Authenticates, checks the challenge clearance and the rate, and holds the route's credits (or
   * a lease, as billing decides when this call offers one), in one billing call, the only one on
   * the call's path. A refusal is thrown as its 401/402/403/429.
   */
  private async askBilling(
    spec: Metered,
    ctx: Context,
    requestId: string,
    credential: Credential,
    key: string,
    leasable: boolean,
    repriced = false,
  ): Promise<MeteredHold> {
    const offer = leasable && this.offerLease(key);
    // Read your own writes: a refund of this caller still on its way lands first.
    const answered = await this.settlements.afterRefunds(key, () => this.views.asks(key));
    let outcome: AuthorizeResponse['outcome'];
    let returnedMeanwhile = 0;
    // The edge names the hold: a retry of this authorization (another billing replica, after one
    // died mid-call) finds the same hold, and a hold whose grant never came back is released now.
    const name = spec.credits > 0 ? randomUUID() : undefined;
    try {
      ({ outcome } = await this.authorizations.authorize(
        {
          credential,
          operation: spec.operation,
          credits: spec.credits,
          challenge: spec.challenge ?? spec.credits > 0,
          callers: POLICIES[spec.callers ?? 'any'],
          stateChanging: !SAFE_METHODS.has(ctx.method),
          holdMs: spec.timeoutMs,
          leaseHoldMs: offer ? rules.leaseHoldMs(this.leaseMs) : undefined,
          reservationId: name,
          repriced,
        },
        requestId,
      ));
    } catch (err) {
      if (offer) this.leaseAnswered(key, UNANSWERED);
      // Billing may have taken the hold and died (or timed out) before answering: release it by
      // its name rather than leave the credits held until it expires (decision 0253).
      if (name) {
        const holdMs = offer ? rules.leaseHoldMs(this.leaseMs) : spec.timeoutMs;
        this.settlements.add(name, [], Date.now() + holdMs + rules.HOLD_GRACE_MS, key);
      }
      this.log.warn({ requestId, operation: spec.operation, err: readGrpcError(err) }, 'billing authorize failed');
      throw httpErrorFromCall(err, spec);
    } finally {
      returnedMeanwhile = answered();
    }
    if (outcome?.$case !== 'grant') {
      if (offer) this.leaseAnswered(key, UNANSWERED);
      const denial = outcome?.$case === 'denial' ? outcome.denial : undefined;
      if (denial?.refusal === Refusal.REFUSAL_RATE_LIMITED) this.views.stillLimited(key);
      throw httpErrorFromDenial(ctx, denial, spec.credits);
    }
    const { reservationId, rate, lease, keyRestricted } = outcome.grant;
    const granted = outcome.grant.quota ?? { callerKind: 'anonymous', limit: 0, remaining: 0 };
    const known = { ...granted, remaining: granted.remaining + returnedMeanwhile };
    const revoked = this.recentlyRevoked(rate?.key);
    // A key with limits of its own is never answered from a view: billing judges each call.
    if (spec.callers !== 'ip' && !revoked && !keyRestricted) this.views.remember(key, known, rate);
    const call = { operation: spec.operation, credits: spec.credits };
    if (offer) {
      const leased =
        lease && reservationId ? { reservationId, credits: lease.credits, callCredits: call.credits } : undefined;
      this.leaseAnswered(key, leased ? { granted: leased } : DECLINED);
      if (leased) {
        const hold = this.leasedHold(ctx, this.caller(key, credential, known, rate), key, leased.reservationId, call);
        // This call was authorized; the lease pays for nothing after it.
        if (revoked) this.carryOut(key, rules.end(this.leaseState(key)));
        return hold;
      }
    }
    // Billing counts the credits the caller's leases have not spent as held; they are still its own.
    const quota = { ...known, remaining: known.remaining + this.unused(key) };
    setCredits(ctx, quota.remaining);
    if (rate) setRateLimit(ctx, rate);
    if (!reservationId) {
      // A sandbox key's call holds nothing: the pipeline answers it from samples.
      const sandbox = outcome.grant.sandbox || undefined;
      return new FreeHold({ ...this.caller(key, credential, quota, rate), sandbox });
    }
    const expiresAt = Date.now() + spec.timeoutMs + rules.HOLD_GRACE_MS;
    return new PaidHold(this, ctx, this.caller(key, credential, quota, rate), key, reservationId, call, expiresAt);
  }

  /**
   * A call paid from a lease; the caller's credits left count what its leases hold and have not
   * given out (once this call's credits are taken).
   */
  private leasedHold(ctx: Context, caller: Caller, key: string, reservationId: string, call: SpentCall): PaidHold {
    const quota: Quota = { ...caller.quota, remaining: caller.quota.remaining + this.unused(key) };
    setCredits(ctx, quota.remaining);
    if (caller.rate) setRateLimit(ctx, caller.rate);
    // Named, so that billing spends it once however often it is settled (its lease's final settlement too).
    return new PaidHold(this, ctx, { ...caller, quota }, key, reservationId, { ...call, callId: randomUUID() });
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
      const seen = refused ? this.views.check(key, true) : this.views.peek(key);
      if (seen) {
        setRateLimit(ctx, seen.rate);
        return seen.quota.remaining + this.unused(key);
      }
      const reply = await this.billingQuota(key, credential, refused, String(ctx.state.requestId ?? ''));
      if (!reply.keyRestricted) this.views.remember(key, reply.quota, reply.rate);
      if (reply.rate) setRateLimit(ctx, reply.rate);
      return (reply.quota?.remaining ?? 0) + this.unused(key);
    } catch {
      return 0; // unknown or malformed credential, or billing unreachable
    }
  }

  /**
   * A free read held to its own bound (free-read-bounds.ts), not the caller's rate: the caller's
   * quota read without counting a request (its fresh view, else billing's GetQuota of an
   * unrefused request, which counts nothing). A refused credential is its 401/403.
   */
  private async freeRead(kind: FreeReadKind, spec: Metered, ctx: Context, requestId: string): Promise<FreeHold> {
    const credential = credentialOf(ctx);
    const key = callerKey(credential);
    const retryAfterSeconds = this.freeReads.hit(kind, String(ctx.state.clientIp ?? ''));
    const seen = this.views.peek(key);
    let quota = seen?.quota;
    if (seen) setRateLimit(ctx, seen.rate);
    if (!quota) {
      try {
        quota = (await this.billingQuota(key, credential, false, requestId)).quota;
      } catch (err) {
        setCredits(ctx, 0);
        const failure = httpErrorFromCall(err, spec);
        // As Authorize's refusal does: a cookie whose session ended is dropped.
        if (failure.code === 'invalid_session') ctx.set('Set-Cookie', cookie(ctx, SESSION_COOKIE, '', 0));
        throw failure;
      }
    }
    const known = quota ?? { callerKind: 'anonymous', limit: 0, remaining: 0 };
    const remaining = known.remaining + this.unused(key);
    setCredits(ctx, remaining);
    if (retryAfterSeconds !== undefined) throw tooManyRequests(retryAfterSeconds);
    return new FreeHold(this.caller(key, credential, { ...known, remaining }, undefined));
  }

  /**
   * Billing's GetQuota, read as an authorization is (`askBilling`): after the caller's refunds on
   * their way have landed, and counting those this edge gives back while it is asked. A `refused`
   * request counts toward the caller's rate there, and so here while it is asked.
   */
  private async billingQuota(
    key: string,
    credential: Credential,
    refused: boolean,
    requestId: string,
  ): Promise<GetQuotaResponse> {
    const answered = await this.settlements.afterRefunds(key, () =>
      refused ? this.views.asks(key) : this.views.returnedSince(key),
    );
    let reply: GetQuotaResponse;
    let returnedMeanwhile = 0;
    try {
      reply = await this.billing.getQuota({ credential, refused }, billingCall(requestId));
    } finally {
      returnedMeanwhile = answered();
    }
    const quota = reply.quota && { ...reply.quota, remaining: reply.quota.remaining + returnedMeanwhile };
    return { ...reply, quota };
  }

  /**
   * The caller as billing last named it: `subject` is its rate window's key, else the client
   * network, as billing names an anonymous caller.
   */
  private caller(key: string, credential: Credential, quota: Quota, rate: RateWindow | undefined): Caller {
    const subject = rate?.key ?? this.views.subjectOf(key) ?? `ip:${clientNetwork(credential.clientIp)}`;
    return { credential, quota, rate, subject };
  }

  /**
   * Billing says the account's credentials or plan changed (a key revoked, the password set, the
   * plan changed): its callers' views and credit leases end now, so their next calls ask billing.
   */
  revoke(subject: string): void {
    const now = Date.now();
    for (const [revoked, until] of this.revoked) if (until <= now) this.revoked.delete(revoked);
    this.revoked.set(subject, now + this.revokedWindowMs);
    for (const key of this.views.forgetSubject(subject)) {
      const state = this.leases.get(key);
      if (state) this.carryOut(key, rules.end(state));
    }
  }

  private recentlyRevoked(subject: string | undefined): boolean {
    return subject !== undefined && (this.revoked.get(subject) ?? 0) > Date.now();
  }

  /**
   * On shutdown: ends every lease (the HTTP server has stopped, so their calls have finished) and
   * sends what is queued.
   */
  async drain(withinMs: number): Promise<void> {
    clearInterval(this.timer);
    this.views.close();
    for (const [key, state] of this.leases) this.carryOut(key, rules.end(state));
    await Promise.all([this.settlements.drain(withinMs), this.views.flush()]);
  }

  /**
   * A paid call's hold ends: its credits spent (`spent`), or back to the caller (or to its lease,
   * which the lease rules settle when it ends). A success is spent at billing before it is
   * answered, from its own hold or from its lease's (a partial settlement); when billing says the
   * hold is gone, or cannot be reached in time, its credits go back and the call is a 503.
   */
  async endHold(ctx: Context, hold: PaidHold, spent: boolean): Promise<void> {
    const { key, reservationId, call, expiresAt } = hold;
    if (!spent) return this.giveBack(ctx, hold);
    let answer: SettleAnswer;
    if (expiresAt === undefined) {
      const partial = rules.spending(this.leaseState(key), reservationId, call);
      answer = partial
        ? await this.settlements.spend(reservationId, partial.spent, partial.expiresAt, true)
        : 'expired';
      if (answer === 'spent') return this.carryOut(key, rules.finish(this.leaseState(key), reservationId, call, true));
      // The lease is gone at billing (it expired): nothing is paid from it any more.
      if (answer === 'expired') this.carryOut(key, rules.lost(this.leaseState(key), reservationId));
    } else {
      // The hold already took the credits: a spent success leaves the balance as it is.
      answer = await this.settlements.spend(reservationId, [call], expiresAt);
      if (answer === 'spent') return;
    }
    this.giveBack(ctx, hold);
    this.log.warn({ reservationId, operation: call.operation, answer }, 'a success was not charged: answered 503');
    throw new HttpError(
      503,
      'service_unavailable',
      'billing could not record this call; its credits were returned; try again shortly',
      undefined,
      { 'Retry-After': String(UNAVAILABLE_RETRY_AFTER_S) },
    );
  }

  /** A call's credits go back: to billing (its own hold) or to its lease. */
  private giveBack(ctx: Context, { key, reservationId, call, caller, expiresAt }: PaidHold): void {
    if (expiresAt === undefined) {
      this.carryOut(key, rules.finish(this.leaseState(key), reservationId, call, false));
    } else {
      this.settlements.add(reservationId, [], expiresAt, key);
      this.views.refund(key, call.credits);
    }
    setCredits(ctx, caller.quota.remaining + call.credits);
  }

  /** Offers a lease with this call unless one is being offered already (lease-rules.ts decides). */
  private offerLease(key: string): boolean {
    const { state, offer } = rules.toBilling(this.leaseState(key), Date.now(), this.leaseMs);
    this.leases.set(key, state);
    if (offer) {
      let done = () => {};
      const answered = new Promise<void>((resolve) => (done = resolve));
      this.offers.set(key, { answered, done });
    }
    return offer;
  }

  /** Billing answered an offer: the lease rules take the answer, then the callers that waited try again. */
  private leaseAnswered(key: string, answer: rules.LeaseAnswer): void {
    this.carryOut(key, rules.answered(this.leaseState(key), answer, Date.now(), this.leaseMs));
    this.offers.get(key)?.done();
    this.offers.delete(key);
  }

  private leaseState(key: string): rules.CallerLeases {
    return this.leases.get(key) ?? rules.newCaller(Date.now());
  }

  private unused(key: string): number {
    const state = this.leases.get(key);
    return state ? rules.unused(state) : 0;
  }

  /** Keeps the lease rules' next state and carries out their decisions. */
  private carryOut(key: string, step: rules.Step): void {
    this.leases.set(key, step.state);
    for (const settlement of step.settle) this.settleLease(key, settlement);
  }

  private settleLease(key: string, { reservationId, spent, expiresAt, returned }: rules.LeaseSettlement): void {
    // What it gives back is the caller's again: its next authorization waits for it to land.
    this.settlements.add(reservationId, spent, expiresAt, returned > 0 ? key : undefined);
    if (returned > 0) this.views.refund(key, returned);
  }

  /** Ends leases whose time is up and forgets callers that have gone quiet. */
  private sweep(): void {
    const now = Date.now();
    for (const [key, state] of this.leases) {
      const step = rules.sweep(state, now, this.leaseMs);
      this.carryOut(key, step);
      if (step.forget) this.leases.delete(key);
    }
  }
}

/** A call's target is recorded up to this long: enough to tell URLs apart in the usage table. */
const MAX_TARGET_CHARS = 300;

/** An authorized call; see index.ts. */
export type MeteredHold = FreeHold | PaidHold;

/** A call that holds nothing (a free route). */
class FreeHold {
  constructor(readonly caller: Caller) {}
  async settle(_target?: string): Promise<void> {}
  release(): void {}
}

/** A render's hold: it also holds one of the caller's render slots, freed as the hold ends. */
class SlotHold {
  constructor(
    private readonly hold: MeteredHold,
    private readonly free: () => void,
  ) {}
  get caller(): Caller {
    return this.hold.caller;
  }
  settle(target?: string): Promise<void> {
    this.free();
    return this.hold.settle(target);
  }
  release(): void {
    this.free();
    this.hold.release();
  }
}

/** A call whose credits are held, at billing on their own or in a lease; it ends once. */
class PaidHold {
  private ended = false;
  constructor(
    private readonly meter: Meter,
    private readonly ctx: Context,
    readonly caller: Caller,
    readonly key: string,
    readonly reservationId: string,
    readonly call: SpentCall,
    /**
     * A hold of its own: billing returns it by itself after this, so its settlement is pointless
     * then. Absent for a call paid from a lease.
     */
    readonly expiresAt?: number,
  ) {}
  async settle(target?: string): Promise<void> {
    if (target) this.call.target = target.slice(0, MAX_TARGET_CHARS);
    await this.end(true);
  }
  release(): void {
    void this.end(false);
  }
  get ownReservation(): string | undefined {
    return this.ended || this.expiresAt === undefined ? undefined : this.reservationId;
  }
  handOver(): string | undefined {
    if (this.ended || this.expiresAt === undefined) return undefined;
    this.ended = true;
    return this.reservationId;
  }
  private async end(spent: boolean): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    await this.meter.endHold(this.ctx, this, spent);
  }
}

const tooManyRequests = (retryAfterSeconds: number) =>
  new HttpError(429, 'rate_limited', `too many requests; retry in ${retryAfterSeconds} s`, undefined, {
    'Retry-After': String(retryAfterSeconds),
  });
