import { type Logger, readGrpcError } from '@webutil/kit';
import { SettlementOutcome } from '@webutil/proto/webutil/billing/v1/billing';
import { BILLING_TIMEOUT_MS, type BillingClient, billingCall } from './billing-client.js';

interface Queued {
  reservationId: string;
  outcome: SettlementOutcome;
  operation: string;
  /** After this, billing has returned the hold's credits by itself: retrying is pointless. */
  expiresAt: number;
  /** A refund: marks it sent (or given up), for the caller's next authorization (see `refunded`). */
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
 * A metered call's hold is settled (spent on success, returned on failure) after its response and
 * off its path, batched with others, as Google's ESP aggregates reports to Service Control. Group
 * commit: a settlement goes out at once when no batch is in flight, else it joins the next batch,
 * sent when the one in flight returns, so batches grow with the load and add no delay when idle.
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

  add(
    reservationId: string,
    operation: string,
    result: 'success' | 'failure',
    expiresAt: number,
    callerKey: string,
  ): void {
    if (result === 'success') {
      this.pending.push({ reservationId, operation, outcome: SettlementOutcome.SETTLEMENT_OUTCOME_SPEND, expiresAt });
    } else {
      const sending = new Promise<void>((sent) => {
        this.pending.push({
          reservationId,
          operation,
          outcome: SettlementOutcome.SETTLEMENT_OUTCOME_REFUND,
          expiresAt,
          sent,
        });
      });
      this.refunds.set(callerKey, sending);
      void sending.then(() => {
        if (this.refunds.get(callerKey) === sending) this.refunds.delete(callerKey);
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
          { settlements: live.map(({ reservationId, outcome, operation }) => ({ reservationId, outcome, operation })) },
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
