/** What an account is mailed: address verification, password reset, notice settings (decisions 0421-0424). */
import { BILLING_TIMEOUT_MS } from '../../billing-client.js';
import { noStore } from '../../envelope.js';
import type { CallOptions } from '../../grpc-clients.js';
import { noInput } from '../../rest/common.js';
import { type RouteSpec, route } from '../../route-spec.js';
import { signedOutHeaders } from '../billing/presenters.js';
import {
  EmailVerified,
  NoticeSettings,
  noticeSettingsInput,
  PasswordResetDone,
  PasswordResetRequested,
  passwordResetConfirmInput,
  passwordResetInput,
  VerificationResent,
  verifyEmailInput,
} from './schemas.js';

/** The base of mailed links: the website at PUBLIC_BASE_URL. */
export const linkBase = (options: CallOptions) => options.publicBaseUrl ?? '';

const LINK_ERRORS = { invalid_token: 400 };

export const accountMailRoutes: RouteSpec[] = [
  route({
    method: 'POST',
    path: '/auth/verify-email',
    operation: 'verify-email',
    summary:
      'Verifies the account’s address with the token of the link mailed at sign-up (single use, 48 hours). ' +
      'Until then the account works on the Free plan but may not create API keys or buy (403 email_not_verified).',
    credits: 0,
    callers: 'ip',
    input: verifyEmailInput,
    output: EmailVerified,
    errors: LINK_ERRORS,
    timeoutMs: BILLING_TIMEOUT_MS,
    call: (c, input, options) => c.accountMail.verifyEmail({ token: input.token }, options),
    headers: noStore,
  }),
  route({
    method: 'POST',
    path: '/auth/verify-email/resend',
    operation: 'verify-email-resend',
    summary: 'Mails the signed-in account a new verification link (older ones stop working); 5 an hour.',
    credits: 0,
    callers: 'session',
    input: noInput,
    output: VerificationResent,
    errors: { verification_resend_limit: 429 },
    timeoutMs: BILLING_TIMEOUT_MS,
    call: (c, _input, options, caller) =>
      c.accountMail.resendVerification({ credential: caller.credential, linkBase: linkBase(options) }, options),
    headers: noStore,
  }),
  route({
    method: 'POST',
    path: '/auth/password-reset',
    operation: 'password-reset',
    summary:
      'Mails a password-reset link (single use, 30 minutes) if the address has an account; the same answer ' +
      'whether or not it has. 3 requests an hour per address, 10 per client network.',
    credits: 0,
    callers: 'ip',
    input: passwordResetInput,
    output: PasswordResetRequested,
    status: 202,
    errors: { invalid_email: 400, password_reset_limit: 429 },
    timeoutMs: BILLING_TIMEOUT_MS,
    call: (c, input, options, caller) =>
      c.accountMail.requestPasswordReset(
        { email: input.email, clientIp: caller.credential.clientIp, linkBase: linkBase(options) },
        options,
      ),
    present: (reply) => ({ ...reply, requested: true as const }),
    headers: noStore,
  }),
  route({
    method: 'POST',
    path: '/auth/password-reset/confirm',
    operation: 'password-reset-confirm',
    summary:
      'Sets a new password with the token of a reset link; every session of the account ends (this one’s ' +
      'cookie is cleared too). Following the link also verifies the address.',
    credits: 0,
    callers: 'ip',
    input: passwordResetConfirmInput,
    output: PasswordResetDone,
    errors: { ...LINK_ERRORS, weak_password: 400, invalid_password: 400 },
    timeoutMs: BILLING_TIMEOUT_MS,
    call: (c, input, options) =>
      c.accountMail.confirmPasswordReset({ token: input.token, password: input.password }, options),
    headers: (reply, ctx) => ({ ...noStore(), ...signedOutHeaders(reply, ctx) }),
  }),
  route({
    method: 'GET',
    path: '/account/notices',
    operation: 'account-notices',
    summary: 'Which notices the account is mailed: receipts, failed renewals, 80%/100% of the cycle’s credits.',
    credits: 0,
    callers: 'session',
    input: noInput,
    output: NoticeSettings,
    timeoutMs: BILLING_TIMEOUT_MS,
    call: (c, _input, options, caller) => c.accountMail.getNoticeSettings({ credential: caller.credential }, options),
    headers: noStore,
  }),
  route({
    method: 'POST',
    path: '/account/notices',
    operation: 'account-notices-change',
    summary: 'Turns notices on or off; fields left out keep their value.',
    credits: 0,
    callers: 'session',
    input: noticeSettingsInput,
    output: NoticeSettings,
    timeoutMs: BILLING_TIMEOUT_MS,
    call: (c, input, options, caller) =>
      c.accountMail.setNoticeSettings({ credential: caller.credential, ...input }, options),
    headers: noStore,
  }),
];
