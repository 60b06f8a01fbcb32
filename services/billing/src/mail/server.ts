import { bind, type Logger, type ServiceBinding } from '@webutil/kit';
import { AccountMailServiceService } from '@webutil/proto/webutil/billing/v1/account_mail';
import type { Gate } from '../gate.js';
import type { EmailVerification } from './email-verification.js';
import type { AccountNotices } from './notices.js';
import type { PasswordReset } from './password-reset.js';

export interface AccountMailDeps {
  gate: Gate;
  verification: EmailVerification;
  passwordReset: PasswordReset;
  notices: AccountNotices;
}

/** AccountMailService: verification links, password resets, notice settings (mail/*.ts). */
export function accountMailService(
  { gate, verification, passwordReset, notices }: AccountMailDeps,
  log: Logger,
): ServiceBinding {
  return bind(
    AccountMailServiceService,
    {
      verifyEmail: async ({ token }) => ({ ...(await verification.verify(token)), emailVerified: true }),
      resendVerification: async ({ credential, linkBase }) => {
        const { account } = await gate.session(credential);
        return verification.resend(account, linkBase);
      },
      requestPasswordReset: (request) => passwordReset.request(request),
      confirmPasswordReset: ({ token, password }) => passwordReset.confirm(token, password),
      getNoticeSettings: async ({ credential }) => {
        const { account } = await gate.session(credential);
        return { notices: await notices.settings(account.id) };
      },
      setNoticeSettings: async ({ credential, receipts, renewals, credits }) => {
        const { account } = await gate.session(credential);
        return { notices: await notices.change(account.id, { receipts, renewals, credits }) };
      },
      sendMonitorsPausedNotice: async ({ subject, monitors }) => ({
        email: await notices.monitorsPaused(subject, monitors),
      }),
    },
    log,
  );
}
