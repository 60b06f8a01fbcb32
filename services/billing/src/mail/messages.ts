/**
 * The mails an account receives, as text (links on lines of their own, so any mail reader makes
 * them clickable). Pure: each takes what it says and returns the message.
 */
import type { MailMessage } from '@webutil/kit/mail';

const SIGNATURE = '\n-- \nWeb Utility API\n';

export function verificationMail(to: string, link: string, validHours: number): MailMessage {
  return {
    to,
    subject: 'Verify your email address',
    text:
      'Welcome to the Web Utility API.\n\n' +
      'Follow this link to verify your address; API keys and purchases open once it is verified:\n\n' +
      `${link}\n\n` +
      `The link works once, for ${validHours} hours. If you did not sign up, ignore this mail.\n${SIGNATURE}`,
  };
}

export function passwordResetMail(to: string, link: string, validMinutes: number): MailMessage {
  return {
    to,
    subject: 'Reset your password',
    text:
      'Someone (we hope you) asked to reset the password of this account. Follow this link to choose a new one:\n\n' +
      `${link}\n\n` +
      `The link works once, for ${validMinutes} minutes. Setting a new password signs out every session.\n` +
      `If you did not ask, ignore this mail: your password stays as it is.\n${SIGNATURE}`,
  };
}

export interface Receipt {
  /** What was bought, e.g. "1,000 top-up credits" or "the Starter plan, one month". */
  description: string;
  /** In the currency's smallest unit. */
  amount: number;
  currency: string;
  /** The provider's id of the payment (invoice or checkout session). */
  reference: string;
  at: number;
}

export function money(amount: number, currency: string): string {
  try {
    return new Intl.NumberFormat('en-US', { style: 'currency', currency: currency.toUpperCase() }).format(amount / 100);
  } catch {
    return `${(amount / 100).toFixed(2)} ${currency.toUpperCase()}`;
  }
}

export function receiptMail(to: string, receipt: Receipt, accountUrl: string): MailMessage {
  return {
    to,
    subject: `Receipt: ${receipt.description}`,
    text:
      `Thank you for your payment.\n\n` +
      `Paid: ${money(receipt.amount, receipt.currency)}\n` +
      `For: ${receipt.description}\n` +
      `Date: ${new Date(receipt.at).toISOString().slice(0, 10)}\n` +
      `Reference: ${receipt.reference}\n\n` +
      `Your account, its credits and invoices:\n\n${accountUrl}\n\n` +
      `Turn these receipts off on the account page.\n${SIGNATURE}`,
  };
}

export interface FailedRenewal {
  plan: string;
  /** The plan stays until then; afterwards the account drops to Free. */
  graceEndsAt: number;
}

export function renewalFailedMail(to: string, failed: FailedRenewal, accountUrl: string): MailMessage {
  const until = new Date(failed.graceEndsAt).toISOString().slice(0, 10);
  return {
    to,
    subject: `Your ${failed.plan} renewal payment failed`,
    text:
      `The payment renewing your ${failed.plan} plan failed.\n\n` +
      `The plan stays until ${until}; if no payment succeeds by then, the account moves to the Free plan.\n` +
      `Update your card from the account page:\n\n${accountUrl}\n\n` +
      `Turn these notices off on the account page.\n${SIGNATURE}`,
  };
}

export function creditsMail(
  to: string,
  used: { percent: 80 | 100; plan: string; cycleEnd: number },
  accountUrl: string,
): MailMessage {
  const renews = new Date(used.cycleEnd).toISOString().slice(0, 10);
  const headline =
    used.percent === 100
      ? `You have used all of this cycle’s ${used.plan} credits`
      : `You have used 80% of this cycle’s ${used.plan} credits`;
  return {
    to,
    subject: headline,
    text:
      `${headline}. The cycle renews on ${renews}.\n\n` +
      (used.percent === 100
        ? 'Calls now spend your top-up credits, if any; without them they are refused until the renewal.\n'
        : '') +
      `Buy a top-up pack or change your plan on the account page:\n\n${accountUrl}\n\n` +
      `Turn these notices off on the account page.\n${SIGNATURE}`,
  };
}

export interface PausedMonitor {
  id: string;
  name: string;
}

/** Monitors named in one notice; the rest are counted (the monitors page lists them all). */
const NAMED_MONITORS = 20;

/** The account ran out of credits and these monitors were paused (once per pause, decision 0483). */
export function monitorsPausedMail(
  to: string,
  monitors: readonly PausedMonitor[],
  links: { accountUrl: string; monitorsUrl: string },
): MailMessage {
  const count = monitors.length;
  const named = monitors.slice(0, NAMED_MONITORS).map((m) => `- ${m.name} (${m.id})\n`);
  if (count > NAMED_MONITORS) named.push(`- and ${count - NAMED_MONITORS} more\n`);
  return {
    to,
    subject:
      count === 1 ? 'Your monitor is paused: out of credits' : `Your ${count} monitors are paused: out of credits`,
    text:
      `Your account ran out of credits, so ${count === 1 ? 'this monitor was' : `these ${count} monitors were`} ` +
      'paused before the run it could not pay for (nothing was overspent):\n\n' +
      named.join('') +
      '\nTo resume: buy a top-up pack or change your plan on the account page,\n\n' +
      `${links.accountUrl}\n\n` +
      'then resume each monitor on the monitors page, or with POST /v1/monitors/{id}/resume:\n\n' +
      `${links.monitorsUrl}\n\n` +
      `Slots passed while paused are not run. This notice is sent once each time monitors are paused.\n${SIGNATURE}`,
  };
}
