import { type Logger, readGrpcError } from '@webutil/kit';
import type { Settlement, SpentCall } from '@webutil/proto/webutil/billing/v1/billing';
import { BILLING_TIMEOUT_MS, type BillingClient, billingCall } from '../billing-client.js';

/**
 * Billing's word on a success's settlement: its calls are `spent`; the hold is gone unspent
 * (`expired`); or billing could not be reached within the bound (`unanswered`).
 */
export type SettleAnswer = 'spent' | 'expired' | 'unanswered';

interface Queued {
  reservationId: string;
  /** The calls the hold paid for; the rest of it goes back. */
  spent: SpentCall[];
  /** A lease's partial settlement: these calls are spent, the rest stays held. */
  keepOpen?: boolean;
  /** After this, billing has returned the hold's credits by itself: retrying is pointless. */
  expiresAt: number;
  /** Credits going back to a caller: marks them sent (or given up), for its next authorization (see `refunded`). */
  sent?: () => void;
  /** A success waiting for billing's word before it is answered, until `waitUntil`. */
  answered?: (answer: SettleAnswer) => void;
  waitUntil?: number;
}

export interface SettlementOptions {
  /** Most settlements in one Settle call. */
  maxBatch: number;
  /** Settle calls in flight at once. */
  maxInFlight: number;
  /** Wait between attempts of a batch billing did not answer. */
  retryMs: number;
  /** Deadline of one Settle call. */
  timeoutMs: number;
  /** Longest a success waits for billing's word on its settlement, retries to other replicas included. */
  waitMs: number;
}

/** Longest a caller's authorization waits for its own refund to land. */
const REFUND_WAIT_MS = 2_000;

/**
 * One Settle call's deadline is short: a success waits for it, and a replica that does not answer
 * soon is better left for the next (the client round-robins over replicas, decision 0254).
 */
const DEFAULTS: SettlementOptions = {
  maxBatch: 256,
  maxInFlight: 2,
  retryMs: 250,
  timeoutMs: Math.min(BILLING_TIMEOUT_MS, 3_000),
  waitMs: 8_000,
};

/**
 * A metered call's hold, or a lease's, is settled (what its calls cost spent, the rest returned),
 * batched with others, as Google's ESP aggregates reports to Service Control. A success's
 * settlement is waited for before the success is answered (`spend`), so an answered success is
 * charged whatever crashes next (decision 0255); a refund or a lease's final settlement is not
 * waited for (`add`). Group commit: a settlement goes out at once while fewer than `maxInFlight`
 * batches are in flight, else it joins the next batch, sent when one returns, so batches grow with
 * the load and add no delay when idle; with two in flight, a success that just missed a batch
 * waits for its own round trip, not for the one in flight first (decision 0451).
 * A batch billing did not answer is retried whole until its holds expire: settling is idempotent
 * (billing remembers a settled hold, and the calls a lease spent by name), so nothing is spent
 * twice, and a settlement that never arrives (the edge crashed) ends as the hold's expiry decides
 * (its credits return). A success not answered within `waitMs` is given up: it leaves the batch.
 */
export class SettlementQueue {
  private readonly pending: Queued[] = [];
  /** The Settle calls in flight. */
  private readonly inFlight = new Set<Promise<void>>();
  /** A batch is to leave on the event loop's next check phase. */
  private scheduled = false;
  private readonly options: SettlementOptions;
  /** Per caller, the sending of every refund of its still on the way (batches may return out of order). */
  private readonly refunds = new Map<string, Promise<void>>();

  constructor(
    private readonly billing: BillingClient,
    private readonly log: Logger,
    options: Partial<SettlementOptions> = {},
  ) {
    this.options = { ...DEFAULTS, ...options };
  }

  /**
   * Queues a hold's settlement: `spent` lists the calls it paid for (none: a failed call, all of
   * it goes back). With `refundOf`, the caller's next authorization waits for it to land.
   */
  add(reservationId: string, spent: SpentCall[], expiresAt: number, refundOf?: string): void {
    if (refundOf === undefined) {
      this.pending.push({ reservationId, spent, expiresAt });
    } else {
      const sending = new Promise<void>((sent) => {
        this.pending.push({ reservationId, spent, expiresAt, sent });
      });
      const earlier = this.refunds.get(refundOf);
      const all = earlier ? Promise.all([earlier, sending]).then(() => {}) : sending;
      this.refunds.set(refundOf, all);
      void all.then(() => {
        if (this.refunds.get(refundOf) === all) this.refunds.delete(refundOf);
      });
    }
    this.sendNext();
  }

  /**
   * Spends a success's calls from its hold (with `keepOpen`, a lease's: the rest stays held) and
   * resolves with billing's word; given up after `waitMs` (`unanswered`), when its settlement
   * leaves the queue, so the caller can return the hold instead.
   */
  spend(reservationId: string, spent: SpentCall[], expiresAt: number, keepOpen = false): Promise<SettleAnswer> {
    return new Promise<SettleAnswer>((resolve) => {
      const waitUntil = Math.min(expiresAt, Date.now() + this.options.waitMs);
      // Still queued behind a batch billing does not answer when its time is up: it leaves the queue.
      const timer = setTimeout(() => {
        const at = this.pending.indexOf(queued);
        if (at < 0) return;
        this.pending.splice(at, 1);
        resolve('unanswered');
      }, waitUntil - Date.now());
      const answered = (answer: SettleAnswer) => {
        clearTimeout(timer);
        resolve(answer);
      };
      const queued: Queued = { reservationId, spent, expiresAt, keepOpen, answered, waitUntil };
      this.pending.push(queued);
      this.sendNext();
    });
  }

  /**
   * Runs `then` once every refund of the caller queued so far has reached billing (or been given
   * up), so a caller retrying right after a failure sees its credits back; at once when none is
   * on its way. A refund queued meanwhile (another of the caller's calls ending) is waited for too,
   * and `then` runs in the same turn as the last check: what it counts as returned before the
   * caller's request to billing, billing has (the "8 for 9" of issue 35).
   */
  async afterRefunds<T>(callerKey: string, then: () => T): Promise<T> {
    // Bounded: a billing that takes no settlements (an outage) must not also stall the caller.
    const deadline = Date.now() + REFUND_WAIT_MS;
    for (let sending = this.refunds.get(callerKey); sending; sending = this.refunds.get(callerKey)) {
      const left = deadline - Date.now();
      if (left <= 0) break;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([sending, new Promise((resolve) => (timer = setTimeout(resolve, left)))]);
      clearTimeout(timer);
    }
    return then();
  }

  /** Sends what is queued (on shutdown), for at most `withinMs`. */
  async drain(withinMs: number): Promise<void> {
    const deadline = Date.now() + withinMs;
    while ((this.inFlight.size > 0 || this.scheduled) && Date.now() < deadline) {
      if (this.inFlight.size === 0) await new Promise((resolve) => setImmediate(resolve));
      else await Promise.race([...this.inFlight, new Promise((resolve) => setTimeout(resolve, deadline - Date.now()))]);
    }
    if (this.pending.length > 0 || this.inFlight.size > 0)
      this.log.warn({ unsent: this.pending.length }, 'settlements left unsent: their holds will expire');
  }

  /**
   * Sends what is queued once the event loop has taken the I/O that is ready: the calls finishing
   * in the same turn join one batch rather than one Settle call each.
   */
  private sendNext(): void {
    if (this.inFlight.size >= this.options.maxInFlight || this.scheduled || this.pending.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (this.inFlight.size >= this.options.maxInFlight || this.pending.length === 0) return;
      const batch = this.pending.splice(0, this.options.maxBatch);
      const sending: Promise<void> = this.send(batch).finally(() => {
        this.inFlight.delete(sending);
        for (const queued of batch) queued.sent?.();
        this.sendNext();
      });
      this.inFlight.add(sending);
      // More than one batch's worth was waiting.
      this.sendNext();
    });
  }

  private async send(batch: Queued[]): Promise<void> {
    let live = batch;
    for (let attempt = 1; ; attempt++) {
      const now = Date.now();
      live = live.filter((s) => {
        const expired = s.expiresAt <= now;
        if (expired) s.answered?.('expired');
        const givenUp = s.waitUntil !== undefined && s.waitUntil <= now;
        if (givenUp && !expired) s.answered?.('unanswered');
        return !expired && !givenUp;
      });
      if (live.length === 0) return;
      try {
        const answer = await this.billing.settle(
          { settlements: merged(live) },
          { ...billingCall(`settle-${live[0]?.reservationId}`), timeoutMs: this.attemptMs(live) },
        );
        const spent = new Set(answer.spent);
        for (const s of live) s.answered?.(spent.has(s.reservationId) ? 'spent' : 'expired');
        return;
      } catch (err) {
        this.log.warn({ settlements: live.length, attempt, err: readGrpcError(err) }, 'settling failed; retrying');
        await new Promise((resolve) => setTimeout(resolve, this.options.retryMs));
      }
    }
  }

  /** One attempt's deadline: no later than the first success waiting in it gives up. */
  private attemptMs(live: Queued[]): number {
    let ms = this.options.timeoutMs;
    for (const { waitUntil } of live) if (waitUntil !== undefined) ms = Math.min(ms, waitUntil - Date.now());
    return Math.max(1, ms);
  }
}

/**
 * The batch as settlements, a lease's partial ones merged into one per lease: billing spends a
 * busy caller's calls of one batch in one change of its hold, not one each.
 */
function merged(batch: readonly Queued[]): Settlement[] {
  const settlements: Settlement[] = [];
  const partial = new Map<string, Settlement>();
  for (const { reservationId, spent, keepOpen } of batch) {
    const same = keepOpen ? partial.get(reservationId) : undefined;
    if (same) {
      same.spent.push(...spent);
      continue;
    }
    const settlement = { reservationId, spent: keepOpen ? [...spent] : spent, keepOpen: keepOpen ?? false };
    if (keepOpen) partial.set(reservationId, settlement);
    settlements.push(settlement);
  }
  return settlements;
}
