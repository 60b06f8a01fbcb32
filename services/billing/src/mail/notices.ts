/**
 * Notices an account is mailed unless it turns them off (docs/decisions/0424-account-notices.md):
 * a receipt for each payment and a failed renewal (payments call paymentReceipt() and
 * renewalFailed() once per applied event), and 80 % and 100 % of the cycle's credits spent, once
 * per cycle each, claimed in the mail store so replicas racing on one account send one.
 */
import { invalidArgument, type Logger, notFound } from '@webutil/kit';
import type { Mailer } from '@webutil/kit/mail';
import type { Clock } from '../clock.js';
import type { Receipt as PaidReceipt, PaymentNotices, RenewalFailed } from '../payments/notices.js';
import { PLANS } from '../plans.js';
import type { Account, BillingStore } from '../stores/store.js';
import { creditsMail, monitorsPausedMail, type PausedMonitor, receiptMail, renewalFailedMail } from './messages.js';
import { sendInBackground } from './send.js';
import { DEFAULT_NOTICES, type MailStore, type NoticeSettings } from './store.js';

/** Thresholds of the cycle's credits spent, highest first. */
const CREDIT_THRESHOLDS = [100, 80] as const;
/** A claimed notice is remembered this long past its cycle's end. */
const CLAIM_MARGIN_MS = 7 * 86_400_000;

export interface NoticeDeps {
  mail: MailStore;
  billing: BillingStore;
  mailer: Mailer;
  clock: Clock;
  log: Logger;
  /** The website's account page (PUBLIC_BASE_URL/account). */
  accountUrl: string;
  /** The website's monitors page (PUBLIC_BASE_URL/monitors). */
  monitorsUrl?: string;
}

export class AccountNotices implements PaymentNotices {
  /** Accounts being checked now, and those to check again once that ends (settlements keep coming). */
  private readonly checking = new Set<string>();
  private readonly again = new Set<string>();

  constructor(private readonly deps: NoticeDeps) {}

  async settings(accountId: string): Promise<NoticeSettings> {
    return (await this.deps.mail.noticeSettings(accountId)) ?? DEFAULT_NOTICES;
  }

  async change(accountId: string, change: Partial<NoticeSettings>): Promise<NoticeSettings> {
    const next = { ...(await this.settings(accountId)) };
    for (const name of ['receipts', 'renewals', 'credits'] as const)
      if (change[name] !== undefined) next[name] = change[name];
    await this.deps.mail.setNoticeSettings(accountId, next);
    return next;
  }

  /** A payment was applied (once per paid object, payments' hook): its receipt. */
  async receipt(account: Account, paid: PaidReceipt): Promise<void> {
    if (!(await this.settings(account.id)).receipts) return;
    const receipt = {
      description: describeItem(paid.item),
      amount: paid.amount,
      currency: paid.currency,
      reference: paid.paidObject,
      at: this.deps.clock(),
    };
    await sendInBackground(
      this.deps.mailer,
      receiptMail(account.email, receipt, this.deps.accountUrl),
      this.deps.log,
      'receipt',
    );
  }

  /** A renewal payment failed (once per failed invoice, payments' hook): the plan's grace period runs. */
  async renewalFailed(account: Account, failed: RenewalFailed): Promise<void> {
    if (!(await this.settings(account.id)).renewals) return;
    await sendInBackground(
      this.deps.mailer,
      renewalFailedMail(account.email, failed, this.deps.accountUrl),
      this.deps.log,
      'renewal-failed',
    );
  }

  /**
   * The monitor service paused these monitors of the account for want of credits (it calls once
   * per pause): the account is told which and how to resume. Sent whatever the notice settings,
   * as a monitor's alerts are: the account's checks have stopped.
   */
  async monitorsPaused(subject: string, monitors: readonly PausedMonitor[]): Promise<string> {
    if (!subject.startsWith('account:')) throw invalidArgument('OWNER_REQUIRED', 'monitors belong to an account');
    if (monitors.length === 0) throw invalidArgument('INVALID_INPUT', 'a notice names at least one monitor');
    const account = await this.deps.billing.accountById(subject.slice('account:'.length));
    if (!account) throw notFound('ACCOUNT_NOT_FOUND', 'no account has that subject');
    const monitorsUrl = this.deps.monitorsUrl ?? this.deps.accountUrl.replace(/\/account$/, '/monitors');
    await sendInBackground(
      this.deps.mailer,
      monitorsPausedMail(account.email, monitors, { accountUrl: this.deps.accountUrl, monitorsUrl }),
      this.deps.log,
      'monitors-paused',
    );
    return account.email;
  }

  /**
   * Calls of these accounts were just spent: each that has now used 80 % or 100 % of its cycle's
   * credits is told, once per cycle and threshold. Runs off the settlement's path.
   */
  creditsSpent(accountIds: Iterable<string>): void {
    for (const id of accountIds) {
      if (this.checking.has(id)) {
        this.again.add(id);
        continue;
      }
      this.checking.add(id);
      void this.checkCredits(id)
        .catch((err: unknown) => this.deps.log.warn({ err, accountId: id }, 'credit notice check failed'))
        .finally(() => {
          this.checking.delete(id);
          if (this.again.delete(id)) this.creditsSpent([id]);
        });
    }
  }

  private async checkCredits(accountId: string): Promise<void> {
    const account = await this.deps.billing.accountById(accountId);
    if (!account) return;
    const crossed = creditsThreshold(account, this.deps.clock());
    if (!crossed) return;
    const claimed: number[] = [];
    for (const percent of CREDIT_THRESHOLDS.filter((p) => p <= crossed)) {
      const key = `credits:${percent}:${account.id}:${account.cycleEnd}`;
      if (await this.deps.mail.claimNotice(key, account.id, account.cycleEnd + CLAIM_MARGIN_MS)) claimed.push(percent);
    }
    // Both thresholds at once (a large call): one mail, the higher.
    const percent = claimed[0] as 80 | 100 | undefined;
    if (!percent || !(await this.settings(account.id)).credits) return;
    await sendInBackground(
      this.deps.mailer,
      creditsMail(account.email, { percent, plan: account.plan, cycleEnd: account.cycleEnd }, this.deps.accountUrl),
      this.deps.log,
      'credits',
    );
  }
}

/** The highest threshold (percent of the cycle's credits spent) the account has reached, if any. */
export function creditsThreshold(account: Account, now: number): 80 | 100 | undefined {
  // A cycle that has ended renews on the account's next call; its figures are no longer this cycle's.
  if (account.cycleEnd <= now) return undefined;
  const allowance = account.creditsPerCycle ?? PLANS[account.plan].creditsPerCycle;
  if (allowance <= 0) return undefined;
  const spent = allowance - account.cycleCredits;
  if (spent >= allowance) return 100;
  if (spent * 100 >= allowance * 80) return 80;
  return undefined;
}

/** What a payment bought, in words: `pack:5000` is 5,000 top-up credits, `plan:GROWTH` a month of Growth. */
export function describeItem(item: string): string {
  const [kind = '', what = ''] = item.split(':');
  if (kind === 'pack' && /^\d+$/.test(what)) return `${Number(what).toLocaleString('en-US')} top-up credits`;
  if (kind === 'plan' && what) return `the ${what.charAt(0)}${what.slice(1).toLowerCase()} plan, one month`;
  return item;
}
