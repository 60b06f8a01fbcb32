import { type MongoUnderTest, startMongo } from '@webutil/scripts/mongo-under-test';
import { StripeStandIn } from '@webutil/scripts/stripe-stand-in';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { type Browser, expectFailure, json } from './billing-helpers.js';
import { balance, checkout, customer, delivered, EASY_CHALLENGE, PRICES, stripeEnv } from './payments-helpers.js';

const DAY_S = 86_400;
const GRACE_MS = 7 * 86_400_000;
const nowS = () => Math.floor(Date.now() / 1000);
const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

/** Issue 39: plans' cycles, changes, grace and refunds on Stripe's word, through the edge, on each store. */
for (const backend of ['embedded', 'jongodb'] as const) {
  describe(`payments: subscriptions and refunds (${backend} store, a Stripe stand-in)`, function () {
    this.timeout(120_000);
    let stripe: StripeStandIn;
    let mongo: MongoUnderTest | undefined;
    let stack: TestStack;

    before(async () => {
      stripe = await StripeStandIn.start(PRICES);
      if (backend === 'jongodb') mongo = await startMongo();
      stack = await startTestStack({
        env: { ...EASY_CHALLENGE, ...(mongo ? { MONGO_URL: mongo.url } : {}) },
        envFor: { billing: stripeEnv(stripe) },
      });
    });
    after(async () => {
      await stack?.stop();
      await Promise.all([stripe?.stop(), mongo?.stop()]);
    });

    const send = (payload: string) => delivered(stack, stripe, payload);
    /** A replay, or an event of a state already applied: nothing changes (recorded before, or nothing to do). */
    const unchanged = async (payload: string) => expect(await send(payload)).to.be.oneOf(['duplicate', 'ignored']);
    const event = (type: string, object: { id: string }) => stripe.event(type, object as never);
    const account = async (browser: Browser) => (await json(await browser.fetch('/v1/auth/me'))).data.account;
    const period = (subscription: Record<string, unknown>) => {
      const item = (subscription.items as { data: { current_period_start: number; current_period_end: number }[] })
        .data[0]!;
      return { start: item.current_period_start, end: item.current_period_end };
    };

    /** A customer who paid a plan's checkout: the subscription and its first invoice, not yet told. */
    async function subscribed(plan: string) {
      const { browser, email } = await customer(stack);
      const { sessionId } = await checkout(browser, { plan });
      stripe.pay(sessionId);
      const subscription = stripe.subscriptionOf(sessionId);
      return { browser, email, subscription, invoice: String(subscription.latest_invoice) };
    }

    it('a paid invoice starts the plan’s cycle with Stripe’s dates; replays, older events change nothing', async () => {
      const { browser, email, subscription, invoice } = await subscribed('STARTER');
      expect(await balance(stack, email)).to.deep.equal({ plan: 'FREE', cycle: 100, topUp: 0 });
      const paid = event('invoice.paid', stripe.invoices.get(invoice)!);
      expect(await send(paid)).to.equal('applied');
      const first = period(subscription);
      expect(await balance(stack, email)).to.deep.equal({ plan: 'STARTER', cycle: 3000, topUp: 0 });
      expect(await account(browser)).to.deep.include({
        plan: 'STARTER',
        cycleEnds: iso(first.end),
        planPrice: 2900,
        currency: 'eur',
        paidThrough: new Date(first.end * 1000 + GRACE_MS).toISOString(),
        renews: true,
      });
      await unchanged(paid);
      // The subscription's own event for the same period, and the invoice's again under a new id: nothing more.
      await unchanged(event('customer.subscription.created', subscription));
      await unchanged(event('invoice.paid', stripe.invoices.get(invoice)!));
      expect(await balance(stack, email)).to.deep.equal({ plan: 'STARTER', cycle: 3000, topUp: 0 });
      // A plan is bought once; later changes go through the portal.
      await expectFailure(await browser.post('/v1/billing/checkout', { plan: 'GROWTH' }), 409, 'subscription_exists');

      // The next period, paid: a new cycle. The first period's invoice, delivered late, changes nothing.
      const renewal = stripe.renew(subscription.id, true);
      expect(await send(event('invoice.paid', renewal))).to.equal('applied');
      const second = period(subscription);
      expect(await account(browser)).to.deep.include({ plan: 'STARTER', cycleEnds: iso(second.end) });
      await unchanged(event('invoice.paid', stripe.invoices.get(invoice)!));
      expect((await account(browser)).cycleEnds).to.equal(iso(second.end));
    });

    it('an upgrade applies at once (once); a downgrade waits for the period’s end', async () => {
      const { browser, email, subscription, invoice } = await subscribed('STARTER');
      expect(await send(event('invoice.paid', stripe.invoices.get(invoice)!))).to.equal('applied');
      const { end } = period(subscription);
      const upgraded = stripe.changePrice(subscription.id, 'price_growth');
      const updated = event('customer.subscription.updated', upgraded);
      expect(await send(updated)).to.equal('applied');
      // The allowances' difference is added to the cycle; the cycle's end is Stripe's period's.
      expect(await balance(stack, email)).to.deep.equal({ plan: 'GROWTH', cycle: 15000, topUp: 0 });
      await unchanged(updated);
      await unchanged(event('customer.subscription.updated', upgraded));
      expect(await balance(stack, email)).to.deep.equal({ plan: 'GROWTH', cycle: 15000, topUp: 0 });
      expect((await account(browser)).planPrice).to.equal(7900);

      const downgraded = stripe.changePrice(subscription.id, 'price_starter');
      await unchanged(event('customer.subscription.updated', downgraded));
      expect(await balance(stack, email)).to.deep.equal({ plan: 'GROWTH', cycle: 15000, topUp: 0 });
      expect((await account(browser)).cycleEnds).to.equal(iso(end));
      const renewal = stripe.renew(subscription.id, true);
      expect(await send(event('invoice.paid', renewal))).to.equal('applied');
      expect(await balance(stack, email)).to.deep.equal({ plan: 'STARTER', cycle: 3000, topUp: 0 });
    });

    it('a cancellation holds the plan to the period’s end, then Free', async () => {
      const { browser, email, subscription, invoice } = await subscribed('STARTER');
      // A period ending in a few seconds (time enough for the calls before it), so its end is seen here.
      const end = nowS() + 15;
      stripe.setPeriod(subscription.id, end - 30 * DAY_S, end);
      expect(await send(event('invoice.paid', stripe.invoices.get(invoice)!))).to.equal('applied');
      const cancelling = event('customer.subscription.updated', stripe.cancel(subscription.id, 'period_end'));
      expect(await send(cancelling)).to.equal('applied');
      expect(await account(browser)).to.deep.include({ plan: 'STARTER', renews: false, paidThrough: iso(end) });
      while (Date.now() <= end * 1000 + 500) await new Promise((resolve) => setTimeout(resolve, 250));
      expect(await balance(stack, email)).to.deep.equal({ plan: 'FREE', cycle: 100, topUp: 0 });
      // Stripe's word that it ended, and the cancelling event again, change nothing more.
      await unchanged(event('customer.subscription.deleted', stripe.cancel(subscription.id, 'now')));
      await unchanged(cancelling);
      expect(await balance(stack, email)).to.deep.equal({ plan: 'FREE', cycle: 100, topUp: 0 });
    });

    it('a failed renewal keeps the plan through the grace period; past it, Free; paid later, the plan', async () => {
      // Within the grace: the period ended a day ago and its renewal is declined.
      const within = await subscribed('STARTER');
      const lastEnd = nowS() - DAY_S;
      stripe.setPeriod(within.subscription.id, lastEnd - 30 * DAY_S, lastEnd);
      expect(await send(event('invoice.paid', stripe.invoices.get(within.invoice)!))).to.equal('applied');
      const failed = stripe.renew(within.subscription.id, false);
      await unchanged(event('invoice.payment_failed', failed));
      expect(await balance(stack, within.email)).to.deep.equal({ plan: 'STARTER', cycle: 3000, topUp: 0 });
      expect(await account(within.browser)).to.deep.include({
        plan: 'STARTER',
        cycleEnds: iso(lastEnd),
        paidThrough: new Date(lastEnd * 1000 + GRACE_MS).toISOString(),
      });
      // Paid on a retry: the new period's cycle starts.
      expect(await send(event('invoice.paid', stripe.payInvoice(failed.id)))).to.equal('applied');
      expect((await account(within.browser)).cycleEnds).to.equal(iso(period(within.subscription).end));

      // Past the grace: the period ended ten days ago, its renewal unpaid.
      const past = await subscribed('STARTER');
      stripe.setPeriod(past.subscription.id, nowS() - 40 * DAY_S, nowS() - 10 * DAY_S);
      expect(await send(event('invoice.paid', stripe.invoices.get(past.invoice)!))).to.equal('applied');
      const unpaid = stripe.renew(past.subscription.id, false);
      await unchanged(event('invoice.payment_failed', unpaid));
      expect(await balance(stack, past.email)).to.deep.equal({ plan: 'FREE', cycle: 100, topUp: 0 });
      expect((await account(past.browser)).paidThrough).to.equal(undefined);
      // Paid at last: the plan is back for the period paid.
      expect(await send(event('invoice.paid', stripe.payInvoice(unpaid.id)))).to.equal('applied');
      expect(await balance(stack, past.email)).to.deep.equal({ plan: 'STARTER', cycle: 3000, topUp: 0 });
    });

    it('a refund takes back the pack’s unspent credits once; an operator’s grant stays', async () => {
      const { browser, email } = await customer(stack);
      const { sessionId } = await checkout(browser, { pack: 5000 });
      expect(await send(event('checkout.session.completed', stripe.pay(sessionId)))).to.equal('applied');
      await stack.admin('add-top-up', '--email', email, '--credits', '500');
      expect((await balance(stack, email)).topUp).to.equal(5500);
      const charge = stripe.chargeOf(sessionId);
      const half = event('charge.refunded', stripe.refund(charge.id, 1950));
      expect(await send(half)).to.equal('applied');
      expect((await balance(stack, email)).topUp).to.equal(3000);
      await unchanged(half);
      const rest = event('charge.refunded', stripe.refund(charge.id));
      // Delivered twice, and the first refund's event again under a new id: each refund counts once.
      expect(await send(rest)).to.equal('applied');
      await unchanged(rest);
      await unchanged(event('charge.refunded', stripe.charges.get(charge.id)!));
      expect((await balance(stack, email)).topUp).to.equal(500);
    });
  });
}
