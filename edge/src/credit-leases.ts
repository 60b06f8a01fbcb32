import type { SpentCall } from '@webutil/proto/webutil/billing/v1/billing';
import type { SettlementQueue } from './settlements.js';

/** Most credits one lease holds. */
const MAX_LEASE_CREDITS = 100;
/**
 * Fewest: a caller with less than 20 times this left has every call held on its own, so near the
 * end of a balance no call is refused while credits sit unused in a lease.
 */
const MIN_LEASE_CREDITS = 16;
/**
 * A lease holds at most this fraction of what the caller had left, so the account's other
 * credentials (and other edges) still find credits while it is open.
 */
const LEASE_SHARE = 1 / 20;
/** Paid calls of a caller that went to billing within one lease lifetime, after which it takes a lease. */
const BUSY_CALLS = 8;
/** Routes whose calls a lease pays for have at most this deadline: the hold at billing outlives its last call. */
export const MAX_LEASED_CALL_MS = 60_000;
/**
 * How long past its last call's deadline billing keeps an unsettled hold (billing's
 * RESERVATION_GRACE_MS default): a settlement still unsent by then is dropped, not retried.
 */
export const HOLD_GRACE_MS = 60_000;

/** A call paid from a lease: its credits are spent on success and go back to the lease on failure. */
export interface LeasedCall {
  settle(result: 'success' | 'failure'): void;
  /** The call did not happen (refused before it ran): its credits go back. */
  giveBack(): void;
}

interface Lease {
  /** The caller's key (its credential). */
  key: string;
  reservationId: string;
  credits: number;
  /** Credits given to calls in flight or spent. */
  taken: number;
  inFlight: number;
  spent: SpentCall[];
  /** No new calls after this. */
  endsAt: number;
  /** Billing returns the hold by itself after this: its settlement is pointless then. */
  expiresAt: number;
  /** Ended: no longer the caller's open lease, it settles once its last call has finished. */
  closed: boolean;
}

interface Caller {
  /** The lease new calls take from, if any. */
  lease?: Lease;
  /** Leases that have ended and wait for their last calls to finish before they settle. */
  closing: Set<Lease>;
  /** A lease being asked for: callers arriving meanwhile wait for it instead of asking too. */
  opening?: Promise<void>;
  /** Paid calls that went to billing since `countedSince`, to see a busy caller. */
  calls: number;
  countedSince: number;
}

/**
 * Credit leases, the quota allocation of Google's ESP applied to credits: a busy API-key caller's
 * authorization holds a block of credits (a lease) instead of one call's, and the edge then pays
 * that caller's calls from it without a billing round trip, for at most `ttlMs`. When the lease
 * ends (its time is up, or a newer lease replaces it) and its calls have finished, one settlement
 * spends what its successful calls cost and returns the rest. The guarantees are the hold's: a
 * lease whose settlement never arrives (the edge crashed) ends as its expiry decides at billing
 * (every credit returns), and settling twice changes nothing.
 */
export class CreditLeases {
  private readonly callers = new Map<string, Caller>();
  private readonly timer: NodeJS.Timeout;

  /**
   * `returned` learns the credits an ended lease gives back, as its settlement leaves (the
   * caller's view counts them again; billing has them once the settlement lands).
   */
  constructor(
    readonly ttlMs: number,
    private readonly settlements: Pick<SettlementQueue, 'add'>,
    private readonly returned: (key: string, credits: number) => void,
  ) {
    this.timer = setInterval(() => this.sweep(), Math.min(250, ttlMs)).unref();
  }

  /** How long billing holds a lease: its lifetime plus the deadline of a call taken at its end. */
  get holdMs(): number {
    return this.ttlMs + MAX_LEASED_CALL_MS;
  }

  /** Takes a call's credits from the caller's open lease; undefined when it has none or too few left. */
  take(key: string, operation: string, credits: number): LeasedCall | undefined {
    const lease = this.callers.get(key)?.lease;
    if (!lease) return undefined;
    if (Date.now() >= lease.endsAt) {
      this.close(key);
      return undefined;
    }
    if (lease.credits - lease.taken < credits) return undefined;
    lease.taken += credits;
    lease.inFlight++;
    return this.call(lease, operation, credits);
  }

  /** A lease asked for this caller and not yet answered. */
  opening(key: string): Promise<void> | undefined {
    return this.callers.get(key)?.opening;
  }

  /**
   * Credits the caller's leases hold and have not spent: the open one's not given to a call, and
   * those of ended leases not settled yet. Billing counts them as held; the caller still has them.
   */
  unused(key: string): number {
    const caller = this.callers.get(key);
    if (!caller) return 0;
    let unused = caller.lease ? caller.lease.credits - caller.lease.taken : 0;
    for (const lease of caller.closing) unused += lease.credits - lease.taken;
    return unused;
  }

  /**
   * The credits to ask billing for on a paid call of `credits` that goes to billing: a lease
   * when the caller is busy and has plenty left (`remaining`, billing's last word), else 0.
   */
  sizeFor(key: string, credits: number, remaining: number | undefined): number {
    const now = Date.now();
    const caller = this.caller(key);
    if (now - caller.countedSince >= this.ttlMs) {
      caller.calls = 0;
      caller.countedSince = now;
    }
    caller.calls++;
    if (caller.calls <= BUSY_CALLS || remaining === undefined || caller.opening) return 0;
    const size = Math.min(MAX_LEASE_CREDITS, Math.floor(remaining * LEASE_SHARE));
    // A lease pays this call and at least as many again.
    return size >= Math.max(MIN_LEASE_CREDITS, 2 * credits) ? size : 0;
  }

  /** Marks a lease being asked for; `done` lets the callers that waited try again. */
  asking(key: string): () => void {
    const caller = this.caller(key);
    let done = () => {};
    caller.opening = new Promise<void>((resolve) => {
      done = () => {
        delete caller.opening;
        resolve();
      };
    });
    return done;
  }

  /**
   * Billing granted a lease of `credits` (reservation `reservationId`) on a call of `callCredits`:
   * it replaces the caller's open lease, and the call is its first.
   */
  open(key: string, reservationId: string, credits: number, operation: string, callCredits: number): LeasedCall {
    this.close(key);
    const now = Date.now();
    const lease: Lease = {
      key,
      reservationId,
      credits,
      taken: callCredits,
      inFlight: 1,
      spent: [],
      endsAt: now + this.ttlMs,
      expiresAt: now + this.holdMs + HOLD_GRACE_MS,
      closed: false,
    };
    this.caller(key).lease = lease;
    return this.call(lease, operation, callCredits);
  }

  /** Ends the caller's open lease: no new calls; it settles once its calls have finished. */
  close(key: string): void {
    const caller = this.callers.get(key);
    const lease = caller?.lease;
    if (!caller || !lease) return;
    delete caller.lease;
    lease.closed = true;
    caller.closing.add(lease);
    this.settleIfDone(lease);
  }

  /** On shutdown: ends every lease (the HTTP server has stopped, so their calls have finished). */
  closeAll(): void {
    clearInterval(this.timer);
    for (const key of this.callers.keys()) this.close(key);
  }

  private caller(key: string): Caller {
    let caller = this.callers.get(key);
    if (!caller) {
      caller = { closing: new Set(), calls: 0, countedSince: Date.now() };
      this.callers.set(key, caller);
    }
    return caller;
  }

  private call(lease: Lease, operation: string, credits: number): LeasedCall {
    let finished = false;
    const finish = (spent: boolean) => {
      if (finished) return;
      finished = true;
      lease.inFlight--;
      if (spent) lease.spent.push({ operation, credits });
      else lease.taken -= credits;
      this.settleIfDone(lease);
    };
    return {
      settle: (result) => finish(result === 'success'),
      giveBack: () => finish(false),
    };
  }

  private settleIfDone(lease: Lease): void {
    if (!lease.closed || lease.inFlight > 0) return;
    this.callers.get(lease.key)?.closing.delete(lease);
    const unused = lease.credits - lease.taken;
    // What it gives back is the caller's again: its next authorization waits for it to land.
    this.settlements.add(lease.reservationId, lease.spent, lease.expiresAt, unused > 0 ? lease.key : undefined);
    if (unused > 0) this.returned(lease.key, unused);
  }

  /** Ends leases whose time is up and forgets callers that have gone quiet. */
  private sweep(): void {
    const now = Date.now();
    for (const [key, caller] of this.callers) {
      if (caller.lease && now >= caller.lease.endsAt) this.close(key);
      const idle = !caller.lease && !caller.opening && caller.closing.size === 0;
      if (idle && now - caller.countedSince >= this.ttlMs) this.callers.delete(key);
    }
  }
}
