/**
 * What billing tells a customer about their payments. Mail (issue 39's email part) implements it;
 * until then each notice is logged. Called once per paid object (a receipt per paid checkout or
 * invoice, one notice per failed invoice), after the store change that made it once-only.
 */
import type { Logger } from '@webutil/kit';
import type { Account } from '../stores/store.js';

export interface Receipt {
  /** A pack bought at checkout, or a plan's invoice (its first, a renewal, or a change). */
  kind: 'pack' | 'plan';
  /** `pack:5000` or `plan:GROWTH`. */
  item: string;
  /** In the currency's smallest unit. */
  amount: number;
  currency: string;
  /** The Stripe object paid: a Checkout Session (cs_...) or an invoice (in_...). */
  paidObject: string;
}

export interface RenewalFailed {
  plan: string;
  /** The invoice Stripe could not collect. */
  invoice: string;
  /** The plan holds until then (epoch ms); later, unpaid, the account is on Free. */
  graceEndsAt: number;
}

export interface PaymentNotices {
  receipt(account: Account, receipt: Receipt): Promise<void>;
  renewalFailed(account: Account, failed: RenewalFailed): Promise<void>;
}

/** Notices written to the log only (no mail transport wired). */
export function loggedNotices(log: Logger): PaymentNotices {
  return {
    receipt: async (account, receipt) => log.info({ accountId: account.id, ...receipt }, 'payment receipt'),
    renewalFailed: async (account, failed) => log.info({ accountId: account.id, ...failed }, 'renewal payment failed'),
  };
}
