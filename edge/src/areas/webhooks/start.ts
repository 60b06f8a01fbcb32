import type { z } from 'zod';
import { BILLING_TIMEOUT_MS } from '../../billing-client.js';
import { HttpError } from '../../envelope.js';
import { type CallOptions, NEVER_CANCELLED } from '../../grpc-clients.js';
import type { RouteSpec } from '../../route-spec.js';
import { checkWebhookTarget, webhookUrlField } from './targets.js';

/** What a start with a webhookUrl may answer beyond the route's own failures. */
export const WEBHOOK_START_ERRORS = {
  invalid_webhook_url: 400,
  webhook_secret_missing: 400,
  account_required: 401,
  too_many_webhooks: 429,
};

const billingCall = (options: CallOptions): CallOptions => ({
  requestId: options.requestId,
  timeoutMs: BILLING_TIMEOUT_MS,
  signal: NEVER_CANCELLED,
});

/**
 * A job start that takes an optional `webhookUrl` (docs/decisions/0206-webhooks.md): the URL is
 * checked against the address rules and a delivery reserved in billing before the job is started
 * (a bad URL, an account without a signing secret or too many deliveries under way: 4xx, nothing
 * spent, no job); once started, the delivery is bound to the job, whose end the edge's delivery
 * worker (deliver.ts) POSTs as `poll` (the operation of the route that polls the job) answers it.
 * A job route adds webhooks by wrapping its start's row in its area's table:
 * `withWebhook(route({ ... }), '<poll operation>')`.
 */
export function withWebhook<In extends z.ZodObject, R extends { jobId: string }, Out extends z.ZodType>(
  spec: RouteSpec<In, R, Out>,
  poll: string,
): RouteSpec<z.ZodObject, R, Out> {
  const input = spec.input.extend({ webhookUrl: webhookUrlField });
  return {
    ...spec,
    input,
    errors: { ...spec.errors, ...WEBHOOK_START_ERRORS },
    call: async (clients, parsed, options, caller, price) => {
      const { webhookUrl, ...rest } = parsed as z.output<In> & { webhookUrl?: unknown };
      const startJob = () => spec.call(clients, rest as z.output<In>, options, caller, price);
      if (typeof webhookUrl !== 'string') return startJob();
      await checkWebhookTarget(webhookUrl);
      if (!caller.subject.startsWith('account:'))
        throw new HttpError(
          401,
          'account_required',
          'webhookUrl needs an account with a signing secret: sign in or send an API key',
        );
      const { deliveryId } = await clients.webhooks.reserveWebhookDelivery(
        { subject: caller.subject, source: poll, url: webhookUrl, sandbox: caller.sandbox === true },
        billingCall(options),
      );
      let reply: R;
      try {
        reply = await startJob();
      } catch (err) {
        // No job: the reservation goes (or expires on its own if billing cannot be told now).
        void clients.webhooks.attachWebhookDelivery({ deliveryId }, billingCall(options)).catch(() => undefined);
        throw err;
      }
      await clients.webhooks.attachWebhookDelivery({ deliveryId, jobId: reply.jobId }, billingCall(options));
      return reply;
    },
  };
}
