/**
 * "Forgot password" (docs/decisions/0423-password-reset.md): a request mails a single-use link,
 * good for 30 minutes, if the address has an account, and answers the same either way; requests
 * are capped per address and per client network. A new password set through the link ends every
 * session of the account.
 */
import { clientNetwork, type Logger, resourceExhausted } from '@webutil/kit';
import type { Mailer } from '@webutil/kit/mail';
import { type Accounts, checkPassword, normalizeEmail } from '../accounts.js';
import type { Clock } from '../clock.js';
import type { BillingStore } from '../stores/store.js';
import type { EmailVerification } from './email-verification.js';
import { invalidLink } from './email-verification.js';
import { passwordResetMail } from './messages.js';
import { sendInBackground } from './send.js';
import type { MailStore } from './store.js';
import { hashLinkToken, linkTo, newLinkToken } from './tokens.js';

export const RESET_LINK_MINUTES = 30;
export const RESETS_PER_ADDRESS_PER_HOUR = 3;
export const RESETS_PER_NETWORK_PER_HOUR = 10;
const HOUR_MS = 3_600_000;

export interface PasswordResetDeps {
  mail: MailStore;
  billing: BillingStore;
  accounts: Accounts;
  verification: EmailVerification;
  mailer: Mailer;
  clock: Clock;
  log: Logger;
  /** PUBLIC_BASE_URL: the links' base when a request names none. */
  publicBaseUrl: string;
}

export class PasswordReset {
  constructor(private readonly deps: PasswordResetDeps) {}

  async request(request: { email: string; clientIp: string; linkBase: string }): Promise<{ validMinutes: number }> {
    const email = normalizeEmail(request.email);
    // Counted whether or not the address has an account, so a refusal says nothing about it either.
    await this.admit([`reset-network|${clientNetwork(request.clientIp)}`, `reset-address|${email}`]);
    const account = await this.deps.billing.accountByEmail(email);
    if (account) {
      const { token, hash } = newLinkToken();
      const now = this.deps.clock();
      await this.deps.mail.dropTokens(account.id, 'password-reset');
      await this.deps.mail.insertToken({
        hash,
        accountId: account.id,
        purpose: 'password-reset',
        email,
        createdAt: now,
        expiresAt: now + RESET_LINK_MINUTES * 60_000,
      });
      const link = linkTo(request.linkBase || this.deps.publicBaseUrl, 'reset-password', token);
      void sendInBackground(
        this.deps.mailer,
        passwordResetMail(email, link, RESET_LINK_MINUTES),
        this.deps.log,
        'password-reset',
      );
    }
    return { validMinutes: RESET_LINK_MINUTES };
  }

  /** Sets the new password; a weak one is refused before the link is spent. */
  async confirm(token: string, password: string): Promise<{ email: string; signedOut: boolean }> {
    checkPassword(password);
    if (!token) throw invalidLink();
    const used = await this.deps.mail.useToken(hashLinkToken(token), 'password-reset', this.deps.clock());
    const account = used && (await this.deps.billing.accountById(used.accountId));
    if (!used || !account || account.email !== used.email) throw invalidLink();
    await this.deps.accounts.setPassword(account, password); // ends every session of the account
    await this.deps.verification.markVerified(account.id);
    return { email: account.email, signedOut: true };
  }

  /** One request more on each hourly counter; refused (and uncounted) when one is full. */
  private async admit(subjects: readonly string[]): Promise<void> {
    const now = this.deps.clock();
    const hour = Math.floor(now / HOUR_MS);
    const endsAt = (hour + 1) * HOUR_MS;
    const caps = [RESETS_PER_NETWORK_PER_HOUR, RESETS_PER_ADDRESS_PER_HOUR];
    const counted: string[] = [];
    for (const [i, subject] of subjects.entries()) {
      const key = `${subject}|${hour}`;
      counted.push(key);
      if ((await this.deps.billing.increment(key, 1, endsAt)) > (caps[i] ?? 0)) {
        for (const done of counted) await this.deps.billing.increment(done, -1, endsAt);
        throw resourceExhausted(
          'PASSWORD_RESET_LIMIT',
          'too many password resets asked for from here or for this address; try again within the hour',
          Math.max(1, Math.ceil((endsAt - now) / 1000)),
        );
      }
    }
  }
}
