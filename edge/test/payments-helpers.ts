import type { StandInPrice, StripeStandIn } from '@webutil/scripts/stripe-stand-in';
import type { TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { Browser, json } from './billing-helpers.js';

export const PASSWORD = 'a long enough password';
/** Proof of work is a browser's job; tests solve a smaller puzzle, the same way. */
export const EASY_CHALLENGE = { CHALLENGE_MAX_NUMBER: '5000' };
export const PRICES: StandInPrice[] = [
  { id: 'price_starter', unitAmount: 2900, currency: 'eur', recurring: true },
  { id: 'price_growth', unitAmount: 7900, currency: 'eur', recurring: true },
  { id: 'price_pack_1000', unitAmount: 900, currency: 'eur', recurring: false },
  { id: 'price_pack_5000', unitAmount: 3900, currency: 'eur', recurring: false },
  // A price of the Stripe account this deployment does not sell.
  { id: 'price_other', unitAmount: 100, currency: 'eur', recurring: false },
];
export const STRIPE_PRICES =
  'STARTER=price_starter:2900,GROWTH=price_growth:7900,PACK_1000=price_pack_1000:900,PACK_5000=price_pack_5000:3900';

/** Billing's settings for a deployment selling through the stand-in. */
export function stripeEnv(stripe: StripeStandIn): Record<string, string> {
  return {
    STRIPE_SECRET_KEY: stripe.secretKey,
    STRIPE_WEBHOOK_SECRET: stripe.webhookSecret,
    STRIPE_PRICES,
    STRIPE_CURRENCY: 'eur',
    STRIPE_API_URL: stripe.url,
    // Stripe delivers from a few addresses: the tests' many deliveries come from one.
    ANONYMOUS_REQUESTS_PER_MINUTE: '1000',
    SIGN_UPS_PER_NETWORK_PER_DAY: '50',
  };
}

let emails = 0;
export const email = () => `payer${++emails}-${process.pid}-${Date.now()}@example.test`;

/** A signed-in Free customer of the website (on `edge`, default the stack's first). */
export async function customer(stack: TestStack): Promise<{ browser: Browser; email: string }> {
  const browser = new Browser(stack);
  const address = email();
  const res = await browser.signUp(address, PASSWORD);
  expect(res.status, JSON.stringify(await res.clone().json())).to.equal(201);
  await browser.verifyEmail(address); // buying needs a verified address (decision 0422)
  return { browser, email: address };
}

/** The account as the operator CLI reads it from the store. */
export async function balance(stack: TestStack, address: string) {
  const shown = await stack.admin('show', '--email', address);
  return { plan: shown.plan, cycle: shown.cycleCredits, topUp: shown.topUpCredits };
}

export async function checkout(browser: Browser, item: object): Promise<{ url: string; sessionId: string }> {
  const res = await browser.post('/v1/billing/checkout', item);
  const body = await json(res);
  expect(res.status, JSON.stringify(body)).to.equal(200);
  return body.data;
}

/** Posts an event body to an edge's webhook route as Stripe does. */
export function deliver(stack: TestStack, payload: string, signature?: string, edgeUrl?: string) {
  const headers = { 'content-type': 'application/json', ...(signature ? { 'stripe-signature': signature } : {}) };
  if (edgeUrl) return fetch(`${edgeUrl}/v1/billing/stripe-webhook`, { method: 'POST', headers, body: payload });
  return stack.api('/v1/billing/stripe-webhook', { method: 'POST', anonymous: true, headers, body: payload });
}

/** Delivers a signed event; its outcome (applied, duplicate, ignored). */
export async function delivered(
  stack: TestStack,
  stripe: StripeStandIn,
  payload: string,
  edgeUrl?: string,
): Promise<string> {
  const res = await deliver(stack, payload, stripe.sign(payload), edgeUrl);
  const body = await json(res);
  expect(res.status, JSON.stringify(body)).to.equal(200);
  expect(body.data.eventId).to.equal(JSON.parse(payload).id);
  return body.data.outcome;
}
