import Stripe from 'stripe';
import { type Catalogue, parseCatalogue } from './catalogue.js';
import type { PaymentSettings } from './payments.js';

interface PaymentConfig {
  STRIPE_SECRET_KEY?: string;
  STRIPE_WEBHOOK_SECRET?: string;
  STRIPE_PRICES: string;
  STRIPE_CURRENCY: string;
  STRIPE_API_URL?: string;
  STRIPE_WEBHOOK_TOLERANCE_S: number;
  PAYMENT_GRACE_DAYS: number;
}

/** The Stripe client and catalogue; undefined without Stripe's keys. A bad STRIPE_PRICES stops the process. */
export function paymentSettings(config: PaymentConfig): PaymentSettings | undefined {
  if (!config.STRIPE_SECRET_KEY || !config.STRIPE_WEBHOOK_SECRET) return undefined;
  let catalogue: Catalogue;
  try {
    catalogue = parseCatalogue(config.STRIPE_PRICES, config.STRIPE_CURRENCY);
  } catch (err) {
    process.stderr.write(`config error: ${(err as Error).message}\n`);
    process.exit(78); // EX_CONFIG
  }
  const api = config.STRIPE_API_URL ? new URL(config.STRIPE_API_URL) : undefined;
  const stripe = new Stripe(config.STRIPE_SECRET_KEY, {
    ...(api
      ? { host: api.hostname, port: api.port || undefined, protocol: api.protocol === 'http:' ? 'http' : 'https' }
      : {}),
    maxNetworkRetries: 2,
    timeout: 10_000,
    telemetry: false,
  });
  return {
    stripe,
    webhookSecret: config.STRIPE_WEBHOOK_SECRET,
    toleranceSeconds: config.STRIPE_WEBHOOK_TOLERANCE_S,
    catalogue,
    graceMs: config.PAYMENT_GRACE_DAYS * 86_400_000,
  };
}
