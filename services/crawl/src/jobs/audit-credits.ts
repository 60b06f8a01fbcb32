/**
 * A site audit's credits, settled when its job ends (decision 0490): the edge held the price of
 * the audit's page cap and handed the hold to the job; the worker that ends the job spends the
 * price of the pages audited (nothing when the audit failed) and billing returns the rest. A hold
 * nobody settles (every try lost) expires at billing and goes back whole, as every lost hold.
 */
import { connectService, type Logger, type ServiceClient, serviceConfig } from '@webutil/kit';
import { BillingServiceService } from '@webutil/proto/webutil/billing/v1/billing';
import type { AuditCreditHold } from '@webutil/proto/webutil/crawl/v1/site_audit';
import type { Ending } from './events.js';
import { unpackResult } from './store.js';

/** Tries of a settlement (billing restarting); Settle is idempotent per reservation. */
const TRIES = 4;
const SETTLE_TIMEOUT_MS = 5_000;

/** What `pages` audited cost: the first block's credits, then each further block's begun. */
export function auditPrice(hold: AuditCreditHold, pages: number): number {
  if (pages <= 0) return 0;
  const blocks = Math.max(1, Math.ceil(pages / Math.max(1, hold.blockSize)));
  return hold.credits + (blocks - 1) * hold.blockCredits;
}

/** Pages a finished audit audited; 0 for a failed one (it spends nothing). */
export function pagesAuditedBy(ending: Ending): number {
  if (ending.type !== 'done') return 0;
  const result = unpackResult(ending.result);
  return result.kind === 'site-audit' ? result.result.pagesAudited : 0;
}

export class AuditCredits {
  private readonly billing: ServiceClient<typeof BillingServiceService>;

  constructor(
    address: string,
    private readonly log: Logger,
  ) {
    this.billing = connectService(BillingServiceService, address, serviceConfig());
  }

  /** Settles the job's hold as its ending says; never throws (the job's end stands). */
  async settle(jobId: string, hold: AuditCreditHold, ending: Ending, target: string): Promise<void> {
    const pages = pagesAuditedBy(ending);
    const credits = auditPrice(hold, pages);
    const spent =
      credits > 0 ? [{ operation: hold.operation, credits, target: target.slice(0, 300), callId: jobId }] : [];
    for (let attempt = 1; attempt <= TRIES; attempt++) {
      try {
        const answer = await this.billing.settle(
          { settlements: [{ reservationId: hold.reservationId, spent, keepOpen: false }] },
          { requestId: jobId, timeoutMs: SETTLE_TIMEOUT_MS },
        );
        const outcome = answer.spent.includes(hold.reservationId)
          ? 'spent'
          : answer.expired.includes(hold.reservationId)
            ? 'expired'
            : 'released';
        this.log.info({ jobId, pages, credits, outcome }, 'site audit credits settled');
        return;
      } catch (err) {
        if (attempt === TRIES) {
          // The hold expires at billing and returns whole: a free audit, never a double charge.
          this.log.warn({ err, jobId }, 'site audit credits not settled; the hold will expire');
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 250 * 2 ** attempt));
      }
    }
  }

  close(): void {
    this.billing.close();
  }
}
