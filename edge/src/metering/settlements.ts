import { type Logger, readGrpcError } from '@webutil/kit';
import type { SpentCall } from '@webutil/proto/webutil/billing/v1/billing';
import { BILLING_TIMEOUT_MS, type BillingClient, billingCall } from '../billing-client.js';

interface Queued {
  reservationId: string;
  /** The calls the hold paid for; the rest of it goes back. */
  spent: SpentCall[];
  /** After this, billing has returned the hold's credits by itself: retrying is pointless. */
  expiresAt: number;
  /** Credits going back to a caller: marks them sent (or given up), for its next authorization (see `refunded`). */
  sent?: () => void;
}

export interface SettlementOptions {
  /** Most settlements in one Settle call. */
  maxBatch: number;
  /** Wait between attempts of a batch billing did not answer. */
  retryMs: number;
  /** Deadline of one Settle call. */
  timeoutMs: number;
}

/** Longest a caller's authorization waits for its own refund to land. */
const REFUND_WAIT_MS = 2_000;

const DEFAULTS: SettlementOptions = { maxBatch: 256, retryMs: 250, timeoutMs: BILLING_TIMEOUT_MS };

/**
 * A metered call's hold, or a lease's, is settled (what its calls cost spent, the rest returned)
 * after the response and off the call's path, batched with others, as Google's ESP aggregates
 * reports to Service Control. Group commit: a settlement goes out at once when no batch is in
 * flight, else it joins the next batch, sent when the one in flight returns, so batches grow with
 * the load and add no delay when idle.
 * A batch billing did not answer is retried whole until its holds expire: settling is idempotent,
 * so nothing is spent twice, and a settlement that never arrives (the edge crashed) ends as the
 * hold's expiry decides (its credits return).
 */
export class SettlementQueue {
  private readonly pending: Queued[] = [];
  private inFlight: Promise<void> | undefined;
  private readonly options: SettlementOptions;
  /**
   * Per caller, its latest refund's sending (batches leave one at a time, in order, so earlier ones are
   * done by then).
   */
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
      this.refunds.set(refundOf, sending);
      void sending.then(() => {
        if (this.refunds.get(refundOf) === sending) this.refunds.delete(refundOf);
      });
    }
    this.sendNext();
  }

  /**
   * Settles once the caller's refunds still queued or in flight have reached billing (or been
   * given up), so a caller retrying right after a failure sees its credits back; at once otherwise.
   */
  async refunded(callerKey: string): Promise<void> {
    const sending = this.refunds.get(callerKey);
    if (!sending) return;
    // Bounded: a billing that takes no settlements (an outage) must not also stall the caller.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([sending, new Promise((resolve) => (timer = setTimeout(resolve, REFUND_WAIT_MS)))]);
    clearTimeout(timer);
  }

  /** Sends what is queued (on shutdown), for at most `withinMs`. */
  async drain(withinMs: number): Promise<void> {
    const deadline = Date.now() + withinMs;
    while (this.inFlight && Date.now() < deadline) {
      await Promise.race([this.inFlight, new Promise((resolve) => setTimeout(resolve, deadline - Date.now()))]);
    }
    if (this.pending.length > 0 || this.inFlight)
      this.log.warn({ unsent: this.pending.length }, 'settlements left unsent: their holds will expire');
  }

  private sendNext(): void {
    if (this.inFlight || this.pending.length === 0) return;
    const batch = this.pending.splice(0, this.options.maxBatch);
    this.inFlight = this.send(batch).finally(() => {
      this.inFlight = undefined;
      for (const queued of batch) queued.sent?.();
      this.sendNext();
    });
  }

  private async send(batch: Queued[]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const live = batch.filter((s) => s.expiresAt > Date.now());
      if (live.length === 0) return;
      try {
        await this.billing.settle(
          { settlements: live.map(({ reservationId, spent }) => ({ reservationId, spent })) },
          { ...billingCall(`settle-${live[0]?.reservationId}`), timeoutMs: this.options.timeoutMs },
        );
        return;
      } catch (err) {
        this.log.warn({ settlements: live.length, attempt, err: readGrpcError(err) }, 'settling failed; retrying');
        await new Promise((resolve) => setTimeout(resolve, this.options.retryMs));
      }
    }
  }
}
