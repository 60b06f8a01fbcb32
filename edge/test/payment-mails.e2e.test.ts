import { type ReceivedMail, readOutbox, waitForMail } from '@webutil/scripts/mail-under-test';
import { StripeStandIn } from '@webutil/scripts/stripe-stand-in';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { checkout, customer, delivered, EASY_CHALLENGE, PRICES, stripeEnv } from './payments-helpers.js';

const DAY_S = 86_400;
const GRACE_MS = 7 * 86_400_000;
const nowS = () => Math.floor(Date.now() / 1000);
const PUBLIC_BASE_URL = 'https://webutil.example';

/**
 * Issue 39's payment mails (decision 0424), from Stripe's signed events through the REST edge to
 * the dev outbox (DATA_DIR/mail/): a receipt with the amount for a paid pack and a paid plan
 * invoice, once however often the event comes; a failed renewal with the grace period's end; none
 * once the account turns receipts off.
 */
describe('payment mails: receipts and a failed renewal (embedded store, a Stripe stand-in)', function () {
  this.timeout(120_000);
  let stripe: StripeStandIn;
  let stack: TestStack;

  before(async () => {
    stripe = await StripeStandIn.start(PRICES);
    stack = await startTestStack({
      env: { ...EASY_CHALLENGE, PUBLIC_BASE_URL },
      envFor: { billing: stripeEnv(stripe) },
    });
  });
  after(async () => {
    await stack?.stop();
    await stripe?.stop();
  });

  const send = (payload: string) => delivered(stack, stripe, payload);
  const event = (type: string, object: { id: string }) => stripe.event(type, object as never);
  const mailTo = async (address: string, subject: string) =>
    (await readOutbox(stack.dataDir)).filter((m) => m.to.includes(address) && m.subject.includes(subject));
  const waitFor = (address: string, subject: string): Promise<ReceivedMail> =>
    waitForMail(
      () => readOutbox(stack.dataDir),
      (m) => m.to.includes(address) && m.subject.includes(subject),
    );
  /** Mail is sent off the answer's path: a moment for a mail that should not come. */
  const settle = () => new Promise((resolve) => setTimeout(resolve, 1500));

  it('a paid pack and a paid plan invoice each mail one receipt with the amount; replays mail none', async () => {
    const { browser, email } = await customer(stack);
    const { sessionId } = await checkout(browser, { pack: 5000 });
    const paid = event('checkout.session.completed', stripe.pay(sessionId));
    expect(await send(paid)).to.equal('applied');
    const receipt = await waitFor(email, 'Receipt: 5,000 top-up credits');
    expect(receipt.text).to.include('Paid: €39.00').and.include(`Reference: ${sessionId}`);
    expect(receipt.text).to.include(`${PUBLIC_BASE_URL}/account`);
    expect(await send(paid)).to.equal('duplicate');

    const plan = await checkout(browser, { plan: 'STARTER' });
    stripe.pay(plan.sessionId);
    const subscription = stripe.subscriptionOf(plan.sessionId);
    const invoice = stripe.invoices.get(String(subscription.latest_invoice))!;
    expect(await send(event('invoice.paid', invoice))).to.equal('applied');
    const planReceipt = await waitFor(email, 'Receipt: the Starter plan, one month');
    expect(planReceipt.text).to.include('Paid: €29.00').and.include(`Reference: ${invoice.id}`);
    // The same invoice again under a new event id, and the subscription's own event: no second receipt.
    await send(event('invoice.paid', stripe.invoices.get(invoice.id)!));
    await send(event('customer.subscription.created', subscription));
    await settle();
    expect(await mailTo(email, 'Receipt: 5,000')).to.have.length(1);
    expect(await mailTo(email, 'Receipt: the Starter')).to.have.length(1);
  });

  it('a failed renewal mails the plan’s grace date once; receipts off, a payment mails none', async () => {
    const { browser, email } = await customer(stack);
    const plan = await checkout(browser, { plan: 'STARTER' });
    stripe.pay(plan.sessionId);
    const subscription = stripe.subscriptionOf(plan.sessionId);
    // The period ended a day ago; its renewal is declined.
    const lastEnd = nowS() - DAY_S;
    stripe.setPeriod(subscription.id, lastEnd - 30 * DAY_S, lastEnd);
    expect(await send(event('invoice.paid', stripe.invoices.get(String(subscription.latest_invoice))!))).to.equal(
      'applied',
    );
    const failed = event('invoice.payment_failed', stripe.renew(subscription.id, false));
    await send(failed);
    const notice = await waitFor(email, 'renewal payment failed');
    const graceEnds = new Date(lastEnd * 1000 + GRACE_MS).toISOString().slice(0, 10);
    expect(notice.text).to.include(`The plan stays until ${graceEnds}`).and.include(`${PUBLIC_BASE_URL}/account`);
    await send(failed);
    await settle();
    expect(await mailTo(email, 'renewal payment failed')).to.have.length(1);

    // Receipts turned off on the account page's form: the next pack is credited, not mailed.
    const off = await browser.post('/v1/account/notices', { receipts: false });
    expect(off.status).to.equal(200);
    const pack = await checkout(browser, { pack: 1000 });
    expect(await send(event('checkout.session.completed', stripe.pay(pack.sessionId)))).to.equal('applied');
    await settle();
    expect(await mailTo(email, 'Receipt: 1,000')).to.have.length(0);
  });
});
