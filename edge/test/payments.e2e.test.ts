import { type StandInPrice, StripeStandIn } from '@webutil/scripts/stripe-stand-in';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { Browser, eventually, expectFailure, json } from './billing-helpers.js';

const PASSWORD = 'a long enough password';
/** Proof of work is a browser's job; tests solve a smaller puzzle, the same way. */
const EASY_CHALLENGE = { CHALLENGE_MAX_NUMBER: '5000' };
const PRICES: StandInPrice[] = [
  { id: 'price_starter', unitAmount: 2900, currency: 'eur', recurring: true },
  { id: 'price_growth', unitAmount: 7900, currency: 'eur', recurring: true },
  { id: 'price_pack_1000', unitAmount: 900, currency: 'eur', recurring: false },
  { id: 'price_pack_5000', unitAmount: 3900, currency: 'eur', recurring: false },
  // A price of the Stripe account this deployment does not sell.
  { id: 'price_other', unitAmount: 100, currency: 'eur', recurring: false },
];
const STRIPE_PRICES =
  'STARTER=price_starter:2900,GROWTH=price_growth:7900,PACK_1000=price_pack_1000:900,PACK_5000=price_pack_5000:3900';
let emails = 0;
const email = () => `payer${++emails}-${Date.now()}@example.test`;

describe('payments: Stripe checkout, portal and events through the edge (a Stripe stand-in)', function () {
  this.timeout(90_000);
  let stripe: StripeStandIn;
  let stack: TestStack;

  before(async () => {
    stripe = await StripeStandIn.start(PRICES);
    stack = await startTestStack({
      env: EASY_CHALLENGE,
      envFor: {
        billing: {
          STRIPE_SECRET_KEY: stripe.secretKey,
          STRIPE_WEBHOOK_SECRET: stripe.webhookSecret,
          STRIPE_PRICES,
          STRIPE_CURRENCY: 'eur',
          STRIPE_API_URL: stripe.url,
          // Stripe delivers from a few addresses: the tests' many deliveries come from one.
          ANONYMOUS_REQUESTS_PER_MINUTE: '1000',
          SIGN_UPS_PER_NETWORK_PER_DAY: '50',
        },
      },
    });
  });
  after(async () => {
    await stack?.stop();
    await stripe?.stop();
  });

  /** A signed-in Free customer of the website. */
  async function customer(): Promise<{ browser: Browser; email: string }> {
    const browser = new Browser(stack);
    const address = email();
    const res = await browser.signUp(address, PASSWORD);
    expect(res.status, JSON.stringify(await res.clone().json())).to.equal(201);
    await browser.verifyEmail(address); // buying needs a verified address (decision 0422)
    return { browser, email: address };
  }

  /** The account's balance as the operator CLI reads it from the store. */
  const balance = async (address: string) => {
    const shown = await stack.admin('show', '--email', address);
    return { plan: shown.plan, cycle: shown.cycleCredits, topUp: shown.topUpCredits };
  };

  async function checkout(browser: Browser, item: object): Promise<{ url: string; sessionId: string }> {
    const res = await browser.post('/v1/billing/checkout', item);
    const body = await json(res);
    expect(res.status, JSON.stringify(body)).to.equal(200);
    return body.data;
  }

  /** Posts an event body to the webhook route as Stripe does. */
  const deliver = (payload: string, signature?: string, contentType = 'application/json') =>
    stack.api('/v1/billing/stripe-webhook', {
      method: 'POST',
      anonymous: true,
      headers: { 'content-type': contentType, ...(signature === undefined ? {} : { 'stripe-signature': signature }) },
      body: payload,
    });

  async function delivered(payload: string): Promise<string> {
    const res = await deliver(payload, stripe.sign(payload));
    const body = await json(res);
    expect(res.status, JSON.stringify(body)).to.equal(200);
    expect(body.data.eventId).to.equal(JSON.parse(payload).id);
    return body.data.outcome;
  }

  it('shows the configured prices, in the deployment’s currency', async () => {
    const res = await stack.api('/v1/billing/prices', { anonymous: true });
    const body = await json(res);
    expect(res.status).to.equal(200);
    expect(body.data).to.deep.include({ configured: true, currency: 'eur' });
    expect(body.data.plans).to.deep.equal([
      { plan: 'STARTER', creditsPerCycle: 3000, amount: 2900 },
      { plan: 'GROWTH', creditsPerCycle: 15000, amount: 7900 },
    ]);
    expect(body.data.packs).to.deep.equal([
      { credits: 1000, amount: 900 },
      { credits: 5000, amount: 3900 },
    ]);
  });

  it('checkout needs a session and its CSRF token; a bad purchase is a 400 and makes nothing at Stripe', async () => {
    const anonymous = await stack.api('/v1/billing/checkout', {
      method: 'POST',
      anonymous: true,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ pack: 1000 }),
    });
    await expectFailure(anonymous, 401, 'session_required');
    const { browser } = await customer();
    await expectFailure(
      await browser.post('/v1/billing/checkout', { pack: 1000 }, { csrf: false }),
      403,
      'csrf_failed',
    );
    await expectFailure(await browser.post('/v1/billing/checkout', {}), 400, 'invalid_request');
    await expectFailure(
      await browser.post('/v1/billing/checkout', { pack: 1000, plan: 'STARTER' }),
      400,
      'invalid_request',
    );
    await expectFailure(await browser.post('/v1/billing/checkout', { pack: 7 }), 400, 'invalid_request');
    await expectFailure(await browser.post('/v1/billing/checkout', { plan: 'FREE' }), 400, 'invalid_request');
    // SCALE and the 25,000 pack are sold by card only where the deployment prices them.
    await expectFailure(await browser.post('/v1/billing/checkout', { plan: 'SCALE' }), 409, 'price_not_configured');
    await expectFailure(await browser.post('/v1/billing/checkout', { pack: 25000 }), 409, 'price_not_configured');
    expect(stripe.sessions.size).to.equal(0);
    expect(stripe.customers.size).to.equal(0);
  });

  it('a pack bought twice, each paid event delivered three times, adds its credits twice', async () => {
    const { browser, email: address } = await customer();
    const before = await balance(address);
    expect(before).to.deep.equal({ plan: 'FREE', cycle: 100, topUp: 0 });
    for (const round of [1, 2]) {
      const { url, sessionId } = await checkout(browser, { pack: 5000 });
      expect(url).to.equal(`${stripe.url}/c/pay/${sessionId}`);
      const made = stripe.sessions.get(sessionId)!;
      // Stripe is told the price of the pack from the configuration, never anything the client sent.
      expect(made.session).to.include({ mode: 'payment', currency: 'eur', amount_total: 3900 });
      expect(made.lineItems.map((line) => (line.price as { id: string }).id)).to.deep.equal(['price_pack_5000']);
      expect(made.session.success_url).to.match(/\/account\?checkout=success&session_id=\{CHECKOUT_SESSION_ID\}$/);
      // Nothing moves before Stripe's word.
      expect((await balance(address)).topUp).to.equal((round - 1) * 5000);
      const event = stripe.event('checkout.session.completed', stripe.pay(sessionId));
      expect(await delivered(event)).to.equal('applied');
      expect(await delivered(event)).to.equal('duplicate');
      expect(await delivered(event)).to.equal('duplicate');
      expect(await balance(address)).to.deep.equal({ plan: 'FREE', cycle: 100, topUp: round * 5000 });
    }
    // One Stripe customer for the account, made once.
    expect(stripe.customers.size).to.equal(1);
    // The edge answers quota reads from its view of the caller, which shows a change made elsewhere
    // (here billing's, by the event) within CALLER_VIEW_MS (1 s); bound: ten times that.
    await eventually(async () => {
      const quota = await json(await browser.fetch('/v1/quota'));
      expect(quota.data.remaining).to.equal(100 + 10_000);
    }, 10_000);
  });

  it('acts on the session as Stripe tells it now: unpaid adds nothing; the same event once paid adds it', async () => {
    const { browser, email: address } = await customer();
    const { sessionId } = await checkout(browser, { pack: 1000 });
    // The event's copy says paid; Stripe, asked again, says the payment has not gone through yet.
    const copy = { ...stripe.sessions.get(sessionId)!.session, payment_status: 'paid', status: 'complete' };
    const event = stripe.event('checkout.session.completed', copy);
    expect(await delivered(event)).to.equal('ignored');
    expect((await balance(address)).topUp).to.equal(0);
    stripe.pay(sessionId);
    expect(await delivered(event)).to.equal('applied');
    // Another event for the same paid session (its delayed payment succeeding) adds nothing more.
    expect(await delivered(stripe.event('checkout.session.async_payment_succeeded', copy))).to.equal('duplicate');
    expect((await balance(address)).topUp).to.equal(1000);
  });

  it('bad deliveries are answered clearly and change nothing', async () => {
    const { browser, email: address } = await customer();
    const { sessionId } = await checkout(browser, { pack: 1000 });
    const event = stripe.event('checkout.session.completed', stripe.pay(sessionId));
    const before = await balance(address);

    await expectFailure(await deliver(event), 400, 'invalid_request');
    await expectFailure(await deliver(event, 't=1,v1=deadbeef'), 400, 'invalid_signature');
    const wrongSecret = stripe.sign(event, { secret: 'whsec_not_the_endpoints_secret' });
    await expectFailure(await deliver(event, wrongSecret), 400, 'invalid_signature');
    // Signed ten minutes ago: past the five minutes' tolerance (a replay of a captured delivery).
    const stale = stripe.sign(event, { timestamp: Math.floor(Date.now() / 1000) - 600 });
    await expectFailure(await deliver(event, stale), 400, 'invalid_signature');
    // Signed, then altered.
    const signature = stripe.sign(event);
    await expectFailure(
      await deliver(event.replace('"livemode":false', '"livemode":true'), signature),
      400,
      'invalid_signature',
    );
    await expectFailure(await deliver(event, stripe.sign(event), 'text/plain'), 415, 'unsupported_media_type');

    const unknownType = stripe.event('customer.created', { id: 'cus_test_someone', object: 'customer' });
    expect(await delivered(unknownType)).to.equal('ignored');

    // A paid session of a customer no account here pays as (made in Stripe's dashboard).
    const stranger = stripe.createCustomer({ email: 'stranger@example.test' });
    const theirs = stripe.createSession({
      mode: 'payment',
      customer: stranger.id,
      line_items: { 0: { price: 'price_pack_1000', quantity: '1' } },
    });
    if (typeof theirs === 'string') throw new Error(theirs);
    const strangers = stripe.event('checkout.session.completed', stripe.pay(theirs.id));
    await expectFailure(await deliver(strangers, stripe.sign(strangers)), 404, 'payment_customer_unknown');

    // A paid session of our customer for a price this deployment does not sell.
    const customerId = stripe.sessions.get(sessionId)!.session.customer as string;
    const other = stripe.createSession({
      mode: 'payment',
      customer: customerId,
      line_items: { 0: { price: 'price_other' } },
    });
    if (typeof other === 'string') throw new Error(other);
    const otherEvent = stripe.event('checkout.session.completed', stripe.pay(other.id));
    await expectFailure(await deliver(otherEvent, stripe.sign(otherEvent)), 422, 'price_unknown');

    expect(await balance(address)).to.deep.equal(before);
    // The genuine delivery still applies once.
    expect(await delivered(event)).to.equal('applied');
    expect(await delivered(event)).to.equal('duplicate');
    expect((await balance(address)).topUp).to.equal(before.topUp + 1000);
  });

  it('a plan’s checkout is a subscription at the plan’s configured price', async () => {
    const { browser, email: address } = await customer();
    const { sessionId } = await checkout(browser, { plan: 'GROWTH' });
    const made = stripe.sessions.get(sessionId)!;
    expect(made.session).to.include({ mode: 'subscription', amount_total: 7900 });
    expect(made.lineItems.map((line) => (line.price as { id: string }).id)).to.deep.equal(['price_growth']);
    // A subscription's checkout does not add top-up credits.
    const event = stripe.event('checkout.session.completed', stripe.pay(sessionId));
    expect(await delivered(event)).to.equal('ignored');
    expect(await balance(address)).to.deep.equal({ plan: 'FREE', cycle: 100, topUp: 0 });
  });

  it('the customer portal opens for the account’s Stripe customer', async () => {
    const { browser } = await customer();
    await expectFailure(await browser.post('/v1/billing/portal', {}, { csrf: false }), 403, 'csrf_failed');
    const res = await browser.post('/v1/billing/portal', {});
    const body = await json(res);
    expect(res.status, JSON.stringify(body)).to.equal(200);
    expect(body.data.url).to.match(new RegExp(`^${stripe.url}/p/session/bps_test_`));
    const made = stripe.requests.filter((r) => r.path === '/v1/billing_portal/sessions').at(-1)!;
    expect(made.params.return_url).to.match(/\/account$/);
    expect(stripe.customers.has(String(made.params.customer))).to.equal(true);
  });
});

describe('payments: a deployment without Stripe settings', function () {
  this.timeout(90_000);
  let stack: TestStack;

  before(async () => {
    stack = await startTestStack({ env: EASY_CHALLENGE });
  });
  after(async () => stack?.stop());

  it('says payments are not configured and names the operator’s command; nothing breaks', async () => {
    const prices = await json(await stack.api('/v1/billing/prices', { anonymous: true }));
    expect(prices.data).to.deep.include({ configured: false, currency: '', plans: [], packs: [] });
    expect(prices.data.operatorCommand).to.match(/^npm run admin -- add-top-up/);
    const browser = new Browser(stack);
    const address = email();
    expect((await browser.signUp(address, PASSWORD)).status).to.equal(201);
    await browser.verifyEmail(address);
    await expectFailure(await browser.post('/v1/billing/checkout', { pack: 1000 }), 503, 'payments_not_configured');
    await expectFailure(await browser.post('/v1/billing/portal', {}), 503, 'payments_not_configured');
    const event = JSON.stringify({ id: 'evt_1', object: 'event', type: 'checkout.session.completed' });
    const res = await stack.api('/v1/billing/stripe-webhook', {
      method: 'POST',
      anonymous: true,
      headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=00' },
      body: event,
    });
    await expectFailure(res, 503, 'payments_not_configured');
  });
});
