/** Webhooks: an account's signing secret and its delivery attempts (docs/decisions/0206-webhooks.md). */
import { BILLING_TIMEOUT_MS } from '../../billing-client.js';
import { noStore } from '../../envelope.js';
import { noInput } from '../../rest/common.js';
import { type RouteSpec, route } from '../../route-spec.js';
import { WebhookDeliveries, WebhookSecret, webhookDeliveriesInput } from './schemas.js';

export const webhookRoutes: RouteSpec[] = [
  route({
    method: 'POST',
    path: '/webhooks/secret',
    operation: 'rotate-webhook-secret',
    summary:
      'Creates the account’s webhook signing secret, or replaces it (the old one keeps signing beside it for ' +
      '24 hours); the secret is returned this once. A session or an API key without limits; a test key makes ' +
      'its sandbox’s own secret.',
    credits: 0,
    callers: 'owner',
    input: noInput,
    output: WebhookSecret,
    status: 201,
    errors: { account_required: 401, owner_required: 403 },
    timeoutMs: BILLING_TIMEOUT_MS,
    call: (c, _input, options, caller) =>
      c.webhooks.rotateWebhookSecret({ subject: caller.subject, sandbox: caller.sandbox === true }, options),
    headers: noStore,
  }),
  route({
    method: 'GET',
    path: '/webhooks/deliveries',
    operation: 'webhook-deliveries',
    summary:
      'The account’s most recent webhook delivery attempts (at most 100, kept 7 days), newest first, and when ' +
      'its signing secret was made. A session or an API key without limits; a test key lists its sandbox’s.',
    credits: 0,
    callers: 'owner',
    input: webhookDeliveriesInput,
    output: WebhookDeliveries,
    errors: { account_required: 401, owner_required: 403 },
    timeoutMs: BILLING_TIMEOUT_MS,
    call: (c, input, options, caller) =>
      c.webhooks.listWebhookAttempts(
        { subject: caller.subject, limit: input.limit ?? 50, sandbox: caller.sandbox === true },
        options,
      ),
    headers: noStore,
  }),
];
