import { bind, type Logger, type ServiceBinding } from '@webutil/kit';
import { WebhookServiceService } from '@webutil/proto/webutil/billing/v1/webhooks';
import type { Webhooks } from './webhooks.js';

/** WebhookService: the signing secrets and delivery books (webhooks.ts); the edge sends. */
export function webhookService(webhooks: Webhooks, log: Logger): ServiceBinding {
  return bind(
    WebhookServiceService,
    {
      rotateWebhookSecret: ({ subject, sandbox }) => webhooks.rotateSecret(subject, sandbox),
      reserveWebhookDelivery: async ({ subject, source, url, sandbox }) => ({
        deliveryId: await webhooks.reserve(subject, source, url, sandbox),
      }),
      attachWebhookDelivery: async ({ deliveryId, jobId, bodyGzip }) => {
        await webhooks.attach(deliveryId, jobId, bodyGzip && Buffer.from(bodyGzip));
        return {};
      },
      claimWebhookDeliveries: async ({ owner, limit, leaseMs, maxBytes }) => ({
        deliveries: await webhooks.claim(owner, limit, leaseMs, maxBytes),
      }),
      updateWebhookDelivery: async (request) => ({ updated: await webhooks.update(request) }),
      listWebhookAttempts: ({ subject, limit, sandbox }) => webhooks.list(subject, limit, sandbox),
    },
    log,
  );
}
