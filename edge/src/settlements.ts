import { type Logger, readGrpcError } from '@webutil/kit';
import { SettlementOutcome } from '@webutil/proto/webutil/billing/v1/billing';
import type { BillingClient } from './credits.js';

interface Queued {
  reservationId: string;
  outcome: SettlementOutcome;
  operation: string;
  /** After this, billing has returned the hold's credits by itself: retrying is pointless. */
  expiresAt: number;
}

export interface SettlementOptions {
  /** Most settlements in one Settle call. */
  maxBatch: number;
  /** Wait between attempts of a batch billing did not answer. */
  retryMs: number;
  /** Deadline of one Settle call. */
  timeoutMs: number;
}

const DEFAULTS: SettlementOptions = { maxBatch: 256, retryMs: 250, timeoutMs: 10_000 };

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

  constructor(
    private readonly billing: BillingClient,
    private readonly log: Logger,
    options: Partial<SettlementOptions> = {},
  ) {
    this.options = { ...DEFAULTS, ...options };
  }

  add(reservationId: string, operation: string, result: 'success' | 'failure', expiresAt: number): void {
    const outcome =
      result === 'success' ? SettlementOutcome.SETTLEMENT_OUTCOME_SPEND : SettlementOutcome.SETTLEMENT_OUTCOME_REFUND;
    this.pending.push({ reservationId, operation, outcome, expiresAt });
    this.sendNext();
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
          { requestId: `settle-${live[0]?.reservationId}`, timeoutMs: this.options.timeoutMs, signal: NEVER },
        );
        return;
      } catch (err) {
        this.log.warn({ settlements: live.length, attempt, err: readGrpcError(err) }, 'settling failed; retrying');
        await new Promise((resolve) => setTimeout(resolve, this.options.retryMs));
      }
    }
  }
}

/** Settlements must be sent whoever has gone. */
const NEVER = new AbortController().signal;
