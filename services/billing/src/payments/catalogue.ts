/**
 * What a deployment sells through Stripe: each paid plan's monthly price and each top-up pack's
 * price, as Stripe price ids with the amounts the pricing page shows, in one currency
 * (docs/decisions/0381-stripe-payments.md). Pure: read from STRIPE_PRICES and STRIPE_CURRENCY.
 */
import { env } from '@webutil/kit';

/** Plans a customer may buy by card; Free is the default and Enterprise a contract. */
export const PAID_PLANS = ['STARTER', 'GROWTH', 'SCALE'] as const;
export type PaidPlan = (typeof PAID_PLANS)[number];
/** Top-up packs, by the credits they add. */
export const PACKS = [1_000, 5_000, 25_000] as const;

export interface Price {
  /** Stripe's price id (price_...). */
  priceId: string;
  /** In the currency's smallest unit (cents), as shown on the pricing page. */
  amount: number;
}

export interface Catalogue {
  /** ISO 4217, lower case. */
  currency: string;
  plans: Map<PaidPlan, Price>;
  /** Pack credits -> price. */
  packs: Map<number, Price>;
}

/** What a Stripe price id buys here, if anything. */
export type PriceItem = { plan: PaidPlan } | { pack: number };

/** The variables that configure payments; without STRIPE_SECRET_KEY there are none. */
export const paymentEnv = {
  STRIPE_SECRET_KEY: env.optionalString(),
  /** The webhook endpoint's signing secret (whsec_...). */
  STRIPE_WEBHOOK_SECRET: env.optionalString(),
  /**
   * `ITEM=price_id:amount` pairs, comma-separated; ITEM is STARTER, GROWTH, SCALE, or PACK_<credits>
   * (PACK_1000, PACK_5000, PACK_25000); amount in the currency's smallest unit.
   */
  STRIPE_PRICES: env.string('-'),
  STRIPE_CURRENCY: env.string('usd'),
  /** Where the Stripe API is (a stand-in in tests); default Stripe's own. */
  STRIPE_API_URL: env.optionalString(),
  /** How old a signed event may be, in seconds (Stripe's default tolerance). */
  STRIPE_WEBHOOK_TOLERANCE_S: env.int(300, 1),
  /** Days a paid plan holds past its period's end while the renewal is unpaid; then the account is on Free. */
  PAYMENT_GRACE_DAYS: env.int(7, 0),
};

/** Parses STRIPE_PRICES; throws an Error naming the bad item. */
export function parseCatalogue(prices: string, currency: string): Catalogue {
  if (!/^[a-z]{3}$/.test(currency))
    throw new Error(`STRIPE_CURRENCY must be an ISO 4217 code, lower case: ${currency}`);
  const catalogue: Catalogue = { currency, plans: new Map(), packs: new Map() };
  const seen = new Set<string>();
  for (const entry of prices === '-' ? [] : prices.split(',')) {
    const match = /^\s*([A-Z0-9_]+)=(price_[A-Za-z0-9_]+):(\d{1,9})\s*$/.exec(entry);
    if (!match) throw new Error(`STRIPE_PRICES: "${entry.trim()}" is not ITEM=price_id:amount`);
    const [, item = '', priceId = '', amount = ''] = match;
    if (seen.has(priceId)) throw new Error(`STRIPE_PRICES: ${priceId} is named twice`);
    seen.add(priceId);
    const price = { priceId, amount: Number(amount) };
    const pack = /^PACK_(\d+)$/.exec(item);
    if (pack && (PACKS as readonly number[]).includes(Number(pack[1]))) catalogue.packs.set(Number(pack[1]), price);
    else if (isPaidPlan(item)) catalogue.plans.set(item, price);
    else throw new Error(`STRIPE_PRICES: ${item} is not one of ${[...PAID_PLANS, ...PACKS.map((n) => `PACK_${n}`)]}`);
  }
  return catalogue;
}

export function isPaidPlan(name: string): name is PaidPlan {
  return (PAID_PLANS as readonly string[]).includes(name);
}

/** What the price id buys in this catalogue; undefined for a price that is not ours. */
export function itemOfPrice(catalogue: Catalogue, priceId: string): PriceItem | undefined {
  for (const [plan, price] of catalogue.plans) if (price.priceId === priceId) return { plan };
  for (const [pack, price] of catalogue.packs) if (price.priceId === priceId) return { pack };
  return undefined;
}
