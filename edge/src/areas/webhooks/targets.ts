import { AddressPolicy, type LookupHost, parseTargetUrl, resolveTarget, ServiceError } from '@webutil/kit';
import { z } from 'zod';
import { HttpError } from '../../envelope.js';

/** The longest webhookUrl taken. */
export const MAX_WEBHOOK_URL_LENGTH = 2048;

/**
 * Where deliveries may go: the address rules of every fetch (the kit's AddressPolicy, the same
 * WEBUTIL_ALLOW_TARGETS), set once by main.ts; until then, only public addresses.
 */
let rules: { policy: AddressPolicy; lookup?: LookupHost } = { policy: new AddressPolicy() };

export function setWebhookTargets(policy: AddressPolicy, lookup?: LookupHost): void {
  rules = { policy, lookup };
}

export const webhookTargets = () => rules;

/** Why a webhookUrl is not taken as written, if it is not: http or https, a real host, no credentials. */
function problemOf(value: string): string | undefined {
  if (value.length > MAX_WEBHOOK_URL_LENGTH) return `is too long (at most ${MAX_WEBHOOK_URL_LENGTH} characters)`;
  if (!/^https?:\/\//i.test(value)) return 'must be an http:// or https:// URL';
  try {
    parseTargetUrl(value);
  } catch (err) {
    if (err instanceof ServiceError) return `is not usable: ${err.message}`;
    throw err;
  }
  return undefined;
}

/** The optional webhookUrl of a job start, as written (its address is checked by `checkWebhookTarget`). */
export const webhookUrlField = z
  .string({ error: 'webhookUrl must be a string' })
  .trim()
  .superRefine((value, ctx) => {
    const problem = problemOf(value);
    if (problem)
      ctx.addIssue({ code: 'custom', message: `webhookUrl ${problem}`, params: { code: 'invalid_webhook_url' } });
  })
  .optional()
  .meta({
    description:
      'When the job ends (done or failed), its envelope, as the poll answers it, is POSTed here, signed per the ' +
      'Standard Webhooks specification with the account’s signing secret (POST /v1/webhooks/secret); retried ' +
      'on network errors, 408, 429 and 5xx for up to 30 minutes. An http or https URL of at most 2,048 ' +
      'characters on a public address; needs an account with a signing secret.',
    example: 'https://example.com/hooks/webutil',
  });

/**
 * The webhookUrl's host resolves to an address the rules allow (a 400 naming the field now, not
 * a failed delivery later). Deliveries are checked again at connect time by the safe client.
 */
export async function checkWebhookTarget(url: string): Promise<void> {
  const { policy, lookup } = rules;
  try {
    await resolveTarget(new URL(url).hostname, policy, lookup);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new HttpError(400, 'invalid_webhook_url', `webhookUrl cannot be delivered to: ${why}`);
  }
}
