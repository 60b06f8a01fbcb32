/** Address verification, password reset and notice settings (decisions 0422 to 0424). */
import * as mail from '@webutil/proto/webutil/billing/v1/account_mail.fields';
import { z } from 'zod';
import { count, required } from '../../rest/common.js';
import { restObject } from '../../rest/from-proto.js';

const token = required('token')
  .max(200, 'token is not a link token')
  .meta({ description: 'The `token` query parameter of the mailed link.' });

export const verifyEmailInput = z.object({ token });

export const EmailVerified = restObject(mail.VerifyEmailResponse, {
  id: 'EmailVerified',
  fields: { emailVerified: { value: z.literal(true) } },
});

export const VerificationResent = restObject(mail.ResendVerificationResponse, {
  id: 'VerificationResent',
  fields: { sent: { description: 'False when the address was verified already (no mail sent).' } },
});

export const passwordResetInput = z.object({
  email: required('email').max(254, 'email is not a valid address'),
});

export const PasswordResetRequested = restObject(mail.RequestPasswordResetResponse, {
  id: 'PasswordResetRequested',
  description: 'The same answer whether or not the address has an account.',
  fields: { validMinutes: { value: count, description: 'How long a mailed link stays good.' } },
  add: { requested: z.literal(true) },
});

export const passwordResetConfirmInput = z.object({
  token,
  password: z
    .string({ error: (issue) => (issue.input === undefined ? 'password is required' : 'password must be a string') })
    .min(1, 'password is required')
    .meta({ description: 'The new password (at least 10 characters).' }),
});

export const PasswordResetDone = restObject(mail.ConfirmPasswordResetResponse, {
  id: 'PasswordResetDone',
  fields: {
    signedOut: { value: z.literal(true), description: 'Every session of the account ended; sign in again.' },
  },
});

const NoticeSettingsObject = restObject(mail.NoticeSettings, {
  id: 'NoticeSettings',
  fields: {
    receipts: { description: 'A receipt for each payment.' },
    renewals: { description: 'A renewal payment that failed.' },
    credits: { description: '80% and 100% of the cycle’s credits spent (once per cycle each).' },
  },
});
export const NoticeSettings = restObject(mail.GetNoticeSettingsResponse, {
  id: 'NoticeSettingsAnswer',
  fields: { notices: { value: NoticeSettingsObject } },
});

const flag = (description: string) => z.boolean({ error: 'must be true or false' }).optional().meta({ description });
export const noticeSettingsInput = z
  .object({
    receipts: flag('Mail a receipt for each payment.'),
    renewals: flag('Mail when a renewal payment fails.'),
    credits: flag('Mail at 80% and 100% of the cycle’s credits.'),
  })
  .refine(
    (v) => v.receipts !== undefined || v.renewals !== undefined || v.credits !== undefined,
    'name at least one of receipts, renewals, credits',
  );
