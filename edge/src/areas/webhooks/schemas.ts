/** Webhooks: the signing secret and the deliveries list (docs/decisions/0206-webhooks.md). */
import * as webhooks from '@webutil/proto/webutil/billing/v1/webhooks.fields';
import { z } from 'zod';
import { count, queryInteger, timestamp } from '../../rest/common.js';
import { restObject } from '../../rest/from-proto.js';

export const WebhookSecret = restObject(webhooks.RotateWebhookSecretResponse, {
  id: 'WebhookSecret',
  fields: {
    secret: {
      description:
        'whsec_ and the base64 of 32 random bytes: verify deliveries with it (any Standard Webhooks library). ' +
        'Shown this once; it replaces the previous secret at once.',
    },
    createdAt: { value: timestamp },
  },
});

const WebhookDeliveryAttempt = restObject(webhooks.WebhookDeliveryAttempt, {
  id: 'WebhookDeliveryAttempt',
  fields: {
    webhookId: { description: 'The webhook-id header: the same on every attempt of one delivery.' },
    jobId: { description: 'The job whose end was delivered.' },
    url: { description: 'The webhookUrl of the job’s start.' },
    attempt: { value: z.number().int().min(1), description: '1 for the first attempt of the delivery.' },
    attemptedAt: { value: timestamp },
    statusCode: { nullable: true, description: 'The receiver’s answer; null when none came (a network error).' },
    error: {
      nullable: true,
      description: 'What went wrong, when something did: a network error, or a redirect (never followed).',
    },
    durationMs: { value: count },
    outcome: {
      value: z.enum(['delivered', 'retrying', 'failed']),
      description:
        'delivered: the receiver answered 2xx. retrying: a network error, 408, 429 or 5xx, tried again at ' +
        'nextAttemptAt. failed: given up (another answer, a refused address, or 30 minutes of retries).',
    },
    nextAttemptAt: { nullable: true, value: timestamp, description: 'When the outcome is retrying.' },
  },
});

export const WebhookDeliveries = restObject(webhooks.ListWebhookAttemptsResponse, {
  id: 'WebhookDeliveries',
  fields: {
    secretCreatedAt: {
      nullable: true,
      value: timestamp,
      description: 'When the account’s signing secret was made; null when it has none yet.',
    },
    attempts: { value: WebhookDeliveryAttempt, description: 'The most recent delivery attempts, newest first.' },
  },
});

export const webhookDeliveriesInput = z.object({
  limit: queryInteger('limit', 1, 100, {
    description: 'How many attempts to list, newest first: 1 to 100. Default 50.',
    example: 20,
  }),
});
