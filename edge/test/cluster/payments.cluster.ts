import { type MongoUnderTest, startMongo } from '@webutil/scripts/mongo-under-test';
import { type OwnNats, startOwnNats } from '@webutil/scripts/nats-under-test';
import { StripeStandIn } from '@webutil/scripts/stripe-stand-in';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { json } from '../billing-helpers.js';
import { balance, checkout, customer, deliver, EASY_CHALLENGE, PRICES, stripeEnv } from '../payments-helpers.js';

/** Deliveries of each event to each edge, all at once. */
const COPIES = 4;

/**
 * Issue 39 in the multi-replica topology (two edges, two billing, NATS, jongodb): Stripe delivers
 * the same events more than once, to whichever edge, at the same time; each payment changes the
 * account's credits and plan exactly once.
 */
describe('payments in a cluster (two edges, two billing, jongodb, a Stripe stand-in)', function () {
  this.timeout(300_000);
  let nats: OwnNats;
  let mongo: MongoUnderTest;
  let stripe: StripeStandIn;
  let stack: TestStack;

  before(async () => {
    [nats, mongo, stripe] = await Promise.all([startOwnNats(), startMongo(), StripeStandIn.start(PRICES)]);
    stack = await startTestStack({
      env: { ...EASY_CHALLENGE, NATS_URL: nats.url, MONGO_URL: mongo.url },
      envFor: { billing: stripeEnv(stripe) },
      replicas: { billing: 2 },
      edges: 2,
    });
    process.stdout.write(`      store: ${mongo.label}\n`);
  });
  after(async () => {
    await stack?.stop();
    await Promise.all([stripe?.stop(), nats?.dispose(), mongo?.stop()]);
  });

  /** Each event delivered COPIES times to each edge at once: the outcomes, by event. */
  async function storm(...payloads: string[]): Promise<string[][]> {
    const sent = payloads.flatMap((payload, p) =>
      Array.from({ length: COPIES * 2 }, async (_, i) => {
        const res = await deliver(stack, payload, stripe.sign(payload), stack.edgeUrls[i % 2]);
        const body = await json(res);
        expect(res.status, JSON.stringify(body)).to.equal(200);
        return { p, outcome: String(body.data.outcome) };
      }),
    );
    const answers = await Promise.all(sent);
    return payloads.map((_, p) => answers.filter((a) => a.p === p).map((a) => a.outcome));
  }
  const applied = (outcomes: string[]) => outcomes.filter((o) => o === 'applied').length;

  it('a pack, a plan, an upgrade and a refund, each event stormed at both edges, change the account once', async () => {
    const { browser, email } = await customer(stack);

    const pack = await checkout(browser, { pack: 5000 });
    const [packOutcomes] = await storm(stripe.event('checkout.session.completed', stripe.pay(pack.sessionId)));
    expect(applied(packOutcomes!)).to.equal(1);
    expect(await balance(stack, email)).to.deep.equal({ plan: 'FREE', cycle: 100, topUp: 5000 });

    const plan = await checkout(browser, { plan: 'STARTER' });
    stripe.pay(plan.sessionId);
    const subscription = stripe.subscriptionOf(plan.sessionId);
    const invoice = stripe.invoices.get(String(subscription.latest_invoice))!;
    // The invoice's and the subscription's events for the same period, racing each other.
    const [paid, created] = await storm(
      stripe.event('invoice.paid', invoice),
      stripe.event('customer.subscription.created', subscription),
    );
    // One of the sixteen deliveries starts the cycle; the others find it started.
    expect(applied(paid!) + applied(created!)).to.equal(1);
    expect(await balance(stack, email)).to.deep.equal({ plan: 'STARTER', cycle: 3000, topUp: 5000 });

    const upgraded = stripe.changePrice(subscription.id, 'price_growth');
    // Two events of the same upgrade (Stripe sends one per change; a replay has a new id here).
    const upgrades = await storm(
      stripe.event('customer.subscription.updated', upgraded),
      stripe.event('customer.subscription.updated', upgraded),
    );
    expect(applied(upgrades.flat())).to.equal(1);
    expect(await balance(stack, email)).to.deep.equal({ plan: 'GROWTH', cycle: 15000, topUp: 5000 });

    const refunded = stripe.refund(stripe.chargeOf(pack.sessionId).id, 1950);
    const [refundOutcomes] = await storm(stripe.event('charge.refunded', refunded));
    expect(applied(refundOutcomes!)).to.equal(1);
    expect(await balance(stack, email)).to.deep.equal({ plan: 'GROWTH', cycle: 15000, topUp: 2500 });
  });
});
