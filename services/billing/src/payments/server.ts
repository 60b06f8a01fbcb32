import { bind, type Logger, type ServiceBinding } from '@webutil/kit';
import { PaymentServiceService } from '@webutil/proto/webutil/billing/v1/payments';
import type { Gate } from '../gate.js';
import type { EmailVerification } from '../mail/email-verification.js';
import type { Payments } from './payments.js';

/** PaymentService: prices, Checkout and portal sessions, Stripe's events (payments.ts). */
export function paymentService(
  payments: Payments,
  gate: Gate,
  log: Logger,
  verification: EmailVerification,
): ServiceBinding {
  return bind(
    PaymentServiceService,
    {
      getPrices: async () => payments.prices(),
      createCheckout: async ({ credential, item, returnUrl }) => {
        const { account } = await gate.session(credential);
        await verification.requireVerified(account); // buying needs a verified address (decision 0422)
        return payments.checkout(account, item, returnUrl);
      },
      createPortal: async ({ credential, returnUrl }) => {
        const { account } = await gate.session(credential);
        return payments.portal(account, returnUrl);
      },
      applyStripeEvent: ({ payload, signature }) => payments.applyEvent(payload, signature),
    },
    log,
  );
}
