/**
 * Address verification (docs/decisions/0422-email-verification.md): sign-up mails a single-use
 * link; until it is followed the account works on the Free plan but may not create API keys or
 * buy. Accounts without a verification record (from before, or an operator's) are verified.
 */
import { status } from '@grpc/grpc-js';
import { invalidArgument, type Logger, resourceExhausted, ServiceError } from '@webutil/kit';
import type { Mailer } from '@webutil/kit/mail';
import type { Clock } from '../clock.js';
import type { Account, BillingStore } from '../stores/store.js';
import { verificationMail } from './messages.js';
import { sendInBackground } from './send.js';
import type { MailStore } from './store.js';
import { hashLinkToken, linkTo, newLinkToken } from './tokens.js';

export const VERIFY_LINK_HOURS = 48;
/** Verification mails one account may ask for again per hour. */
export const RESENDS_PER_HOUR = 5;
const HOUR_MS = 3_600_000;

export interface VerificationDeps {
  mail: MailStore;
  billing: BillingStore;
  mailer: Mailer;
  clock: Clock;
  log: Logger;
  /** PUBLIC_BASE_URL: the links' base when a request names none. */
  publicBaseUrl: string;
}

export const invalidLink = () =>
  invalidArgument('INVALID_TOKEN', 'this link is unknown, used already or expired; ask for a new one');

export class EmailVerification {
  constructor(private readonly deps: VerificationDeps) {}

  /** A sign-up's account waits for verification: recorded before the account is stored. */
  expect(accountId: string, email: string): Promise<void> {
    return this.deps.mail.addUnverified(accountId, email, this.deps.clock());
  }

  /** The sign-up failed: its record goes. */
  forget(accountId: string): Promise<void> {
    return this.deps.mail.dropVerification(accountId);
  }

  /** Mails a new link (older links of the account stop working). */
  async sendLink(account: Pick<Account, 'id' | 'email'>, linkBase: string): Promise<void> {
    const { token, hash } = newLinkToken();
    const now = this.deps.clock();
    await this.deps.mail.dropTokens(account.id, 'verify-email');
    await this.deps.mail.insertToken({
      hash,
      accountId: account.id,
      purpose: 'verify-email',
      email: account.email,
      createdAt: now,
      expiresAt: now + VERIFY_LINK_HOURS * HOUR_MS,
    });
    const link = linkTo(linkBase || this.deps.publicBaseUrl, 'verify-email', token);
    void sendInBackground(
      this.deps.mailer,
      verificationMail(account.email, link, VERIFY_LINK_HOURS),
      this.deps.log,
      'verify-email',
    );
  }

  /** Follows a link: its account's address is verified. */
  async verify(token: string): Promise<{ email: string }> {
    if (!token) throw invalidLink();
    const used = await this.deps.mail.useToken(hashLinkToken(token), 'verify-email', this.deps.clock());
    const account = used && (await this.deps.billing.accountById(used.accountId));
    if (!used || !account || account.email !== used.email) throw invalidLink();
    await this.deps.mail.markVerified(account.id, this.deps.clock());
    return { email: account.email };
  }

  /** A new link for a signed-in account that is not verified yet; `sent` false when it is. */
  async resend(account: Account, linkBase: string): Promise<{ email: string; sent: boolean }> {
    if (await this.isVerified(account.id)) return { email: account.email, sent: false };
    const now = this.deps.clock();
    const hour = Math.floor(now / HOUR_MS);
    const endsAt = (hour + 1) * HOUR_MS;
    const key = `verify-resend|${hour}|${account.id}`;
    if ((await this.deps.billing.increment(key, 1, endsAt)) > RESENDS_PER_HOUR) {
      await this.deps.billing.increment(key, -1, endsAt);
      throw resourceExhausted(
        'VERIFICATION_RESEND_LIMIT',
        `at most ${RESENDS_PER_HOUR} verification mails an hour; try again later`,
        Math.max(1, Math.ceil((endsAt - now) / 1000)),
      );
    }
    await this.sendLink(account, linkBase);
    return { email: account.email, sent: true };
  }

  async isVerified(accountId: string): Promise<boolean> {
    const record = await this.deps.mail.verification(accountId);
    return !record || record.verifiedAt !== null;
  }

  /** API keys and purchases need a verified address (403 email_not_verified). */
  async requireVerified(account: Account): Promise<void> {
    if (!(await this.isVerified(account.id)))
      throw new ServiceError(
        status.PERMISSION_DENIED,
        'EMAIL_NOT_VERIFIED',
        `verify ${account.email} first: follow the link mailed at sign-up (or ask for a new one on the account page)`,
      );
  }

  /** A followed password-reset link proves the mailbox too. */
  markVerified(accountId: string): Promise<void> {
    return this.deps.mail.markVerified(accountId, this.deps.clock());
  }
}
