/**
 * Card payments through Stripe (docs/decisions/0381-stripe-payments.md). Checkout and the customer
 * portal are Stripe's pages; credits move only on Stripe's signed events, each applied once by its
 * id and by the paid object's id, in the same store change as the credits, from the object as
 * Stripe tells it when asked again (events come late, twice and out of order).
 */
import { failedPrecondition, invalidArgument, type Logger, notFound, unavailable } from '@webutil/kit';
import type {
  ApplyStripeEventResponse,
  CreateCheckoutRequest,
  GetPricesResponse,
} from '@webutil/proto/webutil/billing/v1/payments';
import { StripeEventOutcome } from '@webutil/proto/webutil/billing/v1/payments';
import type Stripe from 'stripe';
import type { Clock } from '../clock.js';
import { PLANS } from '../plans.js';
import { type Account, type BillingStore, PAYMENT_KEY, type PaymentChange } from '../stores/store.js';
import { type Catalogue, isPaidPlan, itemOfPrice, PACKS, type PaidPlan, type Price } from './catalogue.js';
import { loggedNotices, type PaymentNotices } from './notices.js';
import { refundedCredits, type SubscriptionState, subscriptionChange } from './subscriptions.js';

/** What an operator runs instead of a card payment (the pricing page shows it when none is configured). */
export const OPERATOR_COMMAND = 'npm run admin -- add-top-up --email E --credits N (or set-plan --email E --plan P)';

export interface PaymentSettings {
  stripe: Stripe;
  webhookSecret: string;
  /** Seconds a signed event stays acceptable (Stripe's SDK default: 300). */
  toleranceSeconds: number;
  catalogue: Catalogue;
  /** How long past a period's end a plan holds while its renewal is unpaid (decision 0413). */
  graceMs: number;
}

type Outcome = 'applied' | 'duplicate' | 'ignored';
const OUTCOMES: Record<Outcome, StripeEventOutcome> = {
  applied: StripeEventOutcome.STRIPE_EVENT_OUTCOME_APPLIED,
  duplicate: StripeEventOutcome.STRIPE_EVENT_OUTCOME_DUPLICATE,
  ignored: StripeEventOutcome.STRIPE_EVENT_OUTCOME_IGNORED,
};

const notConfigured = () =>
  failedPrecondition(
    'PAYMENTS_NOT_CONFIGURED',
    `card payments are not configured on this deployment; an operator runs ${OPERATOR_COMMAND}`,
  );

export class Payments {
  constructor(
    /** Undefined when the deployment has no Stripe settings. */
    private readonly settings: PaymentSettings | undefined,
    private readonly store: BillingStore,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly notices: PaymentNotices = loggedNotices(log),
  ) {}

  prices(): GetPricesResponse {
    const catalogue = this.settings?.catalogue;
    if (!catalogue) return { configured: false, currency: '', plans: [], packs: [], operatorCommand: OPERATOR_COMMAND };
    return {
      configured: true,
      currency: catalogue.currency,
      plans: [...catalogue.plans].map(([plan, { amount }]) => ({
        plan,
        creditsPerCycle: PLANS[plan].creditsPerCycle,
        amount,
      })),
      packs: [...catalogue.packs].map(([credits, { amount }]) => ({ credits, amount })),
      operatorCommand: OPERATOR_COMMAND,
    };
  }

  /** The plan's monthly card price, where this deployment sells it. */
  planPrice(plan: string): { amount: number; currency: string } | undefined {
    const catalogue = this.settings?.catalogue;
    const price = catalogue && isPaidPlan(plan) ? catalogue.plans.get(plan) : undefined;
    return price && catalogue ? { amount: price.amount, currency: catalogue.currency } : undefined;
  }

  /** A Checkout Session for the item asked for; its price comes from the catalogue, never the caller. */
  async checkout(
    account: Account,
    item: CreateCheckoutRequest['item'],
    returnUrl: string,
  ): Promise<{ url: string; sessionId: string }> {
    const { stripe, catalogue } = this.configured();
    let price: Price | undefined;
    let what: string;
    if (item?.$case === 'plan') {
      if (!isPaidPlan(item.plan)) throw invalidArgument('INVALID_PLAN', 'plan must be STARTER, GROWTH or SCALE');
      price = catalogue.plans.get(item.plan);
      what = `plan:${item.plan}`;
    } else if (item?.$case === 'pack') {
      if (!(PACKS as readonly number[]).includes(item.pack))
        throw invalidArgument('INVALID_PACK', `pack must be one of ${PACKS.join(', ')} (credits)`);
      price = catalogue.packs.get(item.pack);
      what = `pack:${item.pack}`;
    } else {
      throw invalidArgument('INVALID_PURCHASE', 'name a plan or a pack');
    }
    if (!price) throw failedPrecondition('PRICE_NOT_CONFIGURED', `${what} has no price on this deployment`);
    const subscription = item.$case === 'plan';
    // One subscription per account: a plan held by one changes in the customer portal.
    if (subscription && account.paidThrough !== null)
      throw failedPrecondition('SUBSCRIPTION_EXISTS', 'the account has a plan subscription: change it in the portal');
    const customer = await this.customerOf(account);
    const session = await this.stripeCall('create a checkout session', () =>
      stripe.checkout.sessions.create({
        mode: subscription ? 'subscription' : 'payment',
        customer,
        client_reference_id: account.id,
        line_items: [{ price: price.priceId, quantity: 1 }],
        metadata: { accountId: account.id, item: what },
        success_url: `${returnUrl}?checkout=success&session_id={CHECKOUT_SESSION_ID}`,
        cancel_url: `${returnUrl}?checkout=cancelled`,
      }),
    );
    if (!session.url) throw unavailable('PAYMENT_PROVIDER_FAILED', 'Stripe answered a checkout session without a URL');
    return { url: session.url, sessionId: session.id };
  }

  async portal(account: Account, returnUrl: string): Promise<{ url: string }> {
    const { stripe } = this.configured();
    const customer = await this.customerOf(account);
    const session = await this.stripeCall('create a portal session', () =>
      stripe.billingPortal.sessions.create({ customer, return_url: returnUrl }),
    );
    return { url: session.url };
  }

  /** Verifies one delivered event and applies it (or says why not). */
  async applyEvent(payload: string, signature: string): Promise<ApplyStripeEventResponse> {
    const { stripe, webhookSecret, toleranceSeconds } = this.configured();
    let event: Stripe.Event;
    try {
      event = stripe.webhooks.constructEvent(payload, signature, webhookSecret, toleranceSeconds);
    } catch (err) {
      throw invalidArgument('INVALID_SIGNATURE', `the Stripe-Signature does not verify: ${(err as Error).message}`);
    }
    const outcome = await this.apply(event);
    this.log.info({ eventId: event.id, type: event.type, outcome }, 'stripe event');
    return { eventId: event.id, eventType: event.type, outcome: OUTCOMES[outcome] };
  }

  private apply(event: Stripe.Event): Promise<Outcome> {
    switch (event.type) {
      case 'checkout.session.completed':
      case 'checkout.session.async_payment_succeeded':
        return this.checkoutPaid(event.id, event.data.object.id);
      case 'invoice.paid':
      case 'invoice.payment_failed':
        return this.invoiceSettled(event.id, event.data.object.id);
      case 'customer.subscription.created':
      case 'customer.subscription.updated':
      case 'customer.subscription.deleted':
        return this.subscriptionChanged(event.id, event.data.object.id);
      case 'charge.refunded':
        return this.chargeRefunded(event.id, event.data.object.id);
      default:
        return Promise.resolve('ignored');
    }
  }

  /**
   * A subscription's invoice paid or not, as Stripe tells the invoice and its subscription now: the
   * subscription decides the plan; a paid invoice is receipted once, a failed one noticed once.
   */
  private async invoiceSettled(eventId: string, invoiceId: string): Promise<Outcome> {
    const { stripe } = this.configured();
    const invoice = await this.stripeCall('read the invoice', () => stripe.invoices.retrieve(invoiceId));
    const subscription = invoice.parent?.subscription_details?.subscription;
    const subscriptionId = typeof subscription === 'string' ? subscription : subscription?.id;
    if (!subscriptionId) return 'ignored';
    const { outcome, account, plan } = await this.syncSubscription(eventId, subscriptionId);
    if (!account || !plan) return outcome;
    if (invoice.status === 'paid') {
      if ((await this.store.applyPayment(this.keyed(account.id, `receipt:${invoice.id}`))) === 'applied')
        await this.notify(() =>
          this.notices.receipt(account, {
            kind: 'plan',
            item: `plan:${plan}`,
            amount: invoice.amount_paid,
            currency: invoice.currency,
            paidObject: invoice.id,
          }),
        );
    } else if (invoice.status === 'open' && account.paidThrough !== null) {
      if ((await this.store.applyPayment(this.keyed(account.id, `failed:${invoice.id}`))) === 'applied')
        await this.notify(() =>
          this.notices.renewalFailed(account, {
            plan: account.plan,
            invoice: invoice.id,
            graceEndsAt: account.paidThrough ?? 0,
          }),
        );
    }
    return outcome;
  }

  private async subscriptionChanged(eventId: string, subscriptionId: string): Promise<Outcome> {
    return (await this.syncSubscription(eventId, subscriptionId)).outcome;
  }

  /**
   * Brings the account in line with its subscription as Stripe tells it now (subscriptions.ts):
   * the event's key and the credit change in one store change, so each happens once.
   */
  private async syncSubscription(
    eventId: string,
    subscriptionId: string,
  ): Promise<{ outcome: Outcome; account?: Account; plan?: PaidPlan }> {
    const { stripe, catalogue, graceMs } = this.configured();
    const sub = await this.stripeCall('read the subscription', () => stripe.subscriptions.retrieve(subscriptionId));
    const account = await this.accountOf(sub.customer);
    const item = sub.items.data[0];
    const sold = item?.price && itemOfPrice(catalogue, item.price.id);
    const plan = sold && 'plan' in sold ? sold.plan : undefined;
    const paid = sub.status === 'active' || sub.status === 'trialing';
    if (paid && !plan)
      throw failedPrecondition('PRICE_UNKNOWN', `subscription ${sub.id} is for a price this deployment does not sell`);
    const ended = sub.status === 'canceled' || sub.status === 'unpaid' || sub.status === 'incomplete_expired';
    if (ended && (await this.otherSubscriptionPaid(sub))) return { outcome: 'ignored' };
    const state: SubscriptionState = {
      id: sub.id,
      status: sub.status,
      plan,
      periodStart: (item?.current_period_start ?? 0) * 1000,
      periodEnd: (item?.current_period_end ?? 0) * 1000,
      cancelAtPeriodEnd: sub.cancel_at_period_end,
    };
    const change = subscriptionChange(state, account, graceMs, this.clock());
    // Stripe's word changes nothing here (a replay, an event of a period already started): recorded nowhere.
    const paidThrough = change.paidThrough === undefined ? account.paidThrough : change.paidThrough;
    if (!change.cycle && !change.upgrade && paidThrough === account.paidThrough)
      return { outcome: 'ignored', account, ...(plan ? { plan } : {}) };
    const keys = [paymentKey('event', eventId), ...(change.key ? [paymentKey(...splitKey(change.key))] : [])];
    const outcome = await this.record({
      accountId: account.id,
      keys,
      ...(change.cycle
        ? {
            plan: {
              ...change.cycle,
              creditsPerCycle: account.creditsPerCycle,
              requestsPerMinute: account.requestsPerMinute,
            },
          }
        : {}),
      ...(change.upgrade ? { upgrade: change.upgrade } : {}),
      ...(change.paidThrough === undefined ? {} : { paidThrough: change.paidThrough }),
      at: this.clock(),
    });
    const now = (await this.store.accountById(account.id)) ?? account;
    return { outcome, account: now, ...(plan ? { plan } : {}) };
  }

  /** Whether the customer pays for another subscription (this one ended after a new one began). */
  private async otherSubscriptionPaid(sub: Stripe.Subscription): Promise<boolean> {
    const { stripe } = this.configured();
    const customer = typeof sub.customer === 'string' ? sub.customer : sub.customer.id;
    const active = await this.stripeCall('list the subscriptions', () =>
      stripe.subscriptions.list({ customer, status: 'active', limit: 10 }),
    );
    return active.data.some((other) => other.id !== sub.id);
  }

  /**
   * A pack's charge refunded, as Stripe lists its refunds now: each refund takes back its share of
   * the pack's credits once, from the top-ups left (what was spent stays spent).
   */
  private async chargeRefunded(eventId: string, chargeId: string): Promise<Outcome> {
    const { stripe } = this.configured();
    const charge = await this.stripeCall('read the charge', () => stripe.charges.retrieve(chargeId));
    const intent = typeof charge.payment_intent === 'string' ? charge.payment_intent : charge.payment_intent?.id;
    if (!intent) return 'ignored';
    const sessions = await this.stripeCall('find the checkout session', () =>
      stripe.checkout.sessions.list({ payment_intent: intent, limit: 1 }),
    );
    const found = sessions.data[0];
    if (found?.mode !== 'payment') return 'ignored';
    const account = await this.accountOf(charge.customer);
    const session = await this.readSession(found.id);
    const credits = this.packCredits(session);
    const refunds = await this.stripeCall('list the refunds', () =>
      stripe.refunds.list({ charge: charge.id, limit: 100 }),
    );
    const succeeded = refunds.data.filter((refund) => refund.status === 'succeeded');
    let outcome: Outcome = 'duplicate';
    for (const [i, refund] of succeeded.entries()) {
      const keys = [paymentKey('refund', refund.id)];
      // The event reports its newest refund; older ones it lists are caught up, each once.
      if (i === 0) keys.unshift(paymentKey('event', eventId));
      const applied = await this.record({
        accountId: account.id,
        keys,
        removeTopUpCredits: refundedCredits(credits, charge.amount, refund.amount),
        at: this.clock(),
      });
      if (applied === 'applied') outcome = 'applied';
    }
    return succeeded.length === 0 ? 'ignored' : outcome;
  }

  /** A pack's checkout, paid as Stripe says now: its credits are added once. */
  private async checkoutPaid(eventId: string, sessionId: string): Promise<Outcome> {
    const session = await this.readSession(sessionId);
    // A subscription's checkout starts its plan through its paid invoice, not here.
    if (session.mode !== 'payment' || session.payment_status !== 'paid') return 'ignored';
    const account = await this.accountOf(session.customer);
    const credits = this.packCredits(session);
    if (credits === 0) return 'ignored';
    const outcome = await this.record({
      accountId: account.id,
      keys: [paymentKey('event', eventId), paymentKey('checkout', session.id)],
      topUpCredits: credits,
      at: this.clock(),
    });
    if (outcome === 'applied')
      await this.notify(() =>
        this.notices.receipt(account, {
          kind: 'pack',
          item: `pack:${credits}`,
          amount: session.amount_total ?? 0,
          currency: session.currency ?? '',
          paidObject: session.id,
        }),
      );
    return outcome;
  }

  private readSession(sessionId: string): Promise<Stripe.Checkout.Session> {
    const { stripe } = this.configured();
    return this.stripeCall('read the checkout session', () =>
      stripe.checkout.sessions.retrieve(sessionId, { expand: ['line_items'] }),
    );
  }

  /** The top-up credits a pack's checkout buys; a price not sold here is a 422 (Stripe retries). */
  private packCredits(session: Stripe.Checkout.Session): number {
    const { catalogue } = this.configured();
    let credits = 0;
    for (const line of session.line_items?.data ?? []) {
      const item = line.price && itemOfPrice(catalogue, line.price.id);
      if (!item || !('pack' in item))
        throw failedPrecondition(
          'PRICE_UNKNOWN',
          `checkout ${session.id} is for a price this deployment does not sell`,
        );
      credits += item.pack * (line.quantity ?? 1);
    }
    return credits;
  }

  /** A change that only records a key (a notice sent once). */
  private keyed(accountId: string, key: string): PaymentChange {
    return { accountId, keys: [paymentKey(...splitKey(key))], at: this.clock() };
  }

  /** A notice that fails is logged: the payment it tells of stands. */
  private async notify(send: () => Promise<void>): Promise<void> {
    try {
      await send();
    } catch (err) {
      this.log.warn({ err }, 'payment notice failed');
    }
  }

  private async record(change: PaymentChange): Promise<Outcome> {
    const outcome = await this.store.applyPayment(change);
    if (outcome === 'no_account') throw notFound('PAYMENT_CUSTOMER_UNKNOWN', 'the paying account no longer exists');
    return outcome;
  }

  /** The account a Stripe customer pays for; an unknown one is a 404 (Stripe delivers it again later). */
  private async accountOf(customer: string | { id: string } | null): Promise<Account> {
    const id = typeof customer === 'string' ? customer : customer?.id;
    const account = id ? await this.store.accountByPaymentCustomer(id) : undefined;
    if (!account) throw notFound('PAYMENT_CUSTOMER_UNKNOWN', `no account pays as Stripe customer ${id ?? '(none)'}`);
    return account;
  }

  /** The account's Stripe customer, made on its first purchase (one per account, whoever races). */
  private async customerOf(account: Account): Promise<string> {
    const known = await this.store.paymentCustomerOf(account.id);
    if (known) return known;
    const { stripe } = this.configured();
    const customer = await this.stripeCall('create a customer', () =>
      stripe.customers.create(
        { email: account.email, metadata: { accountId: account.id } },
        { idempotencyKey: `webutil-customer-${account.id}` },
      ),
    );
    const linked = await this.store.linkPaymentCustomer(account.id, customer.id);
    if (!linked) throw notFound('ACCOUNT_NOT_FOUND', 'the account no longer exists');
    return linked;
  }

  private configured(): PaymentSettings {
    if (!this.settings) throw notConfigured();
    return this.settings;
  }

  /** A Stripe API call; Stripe out of reach or failing is a 503 the caller (or Stripe's retry) may repeat. */
  private async stripeCall<T>(what: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      this.log.warn({ err }, `stripe: could not ${what}`);
      throw unavailable('PAYMENT_PROVIDER_FAILED', `Stripe could not ${what}; try again shortly`);
    }
  }
}

/** `kind:rest` as paymentKey's two parts. */
function splitKey(key: string): [string, string] {
  const at = key.indexOf(':');
  return [key.slice(0, at), key.slice(at + 1)];
}

/** A store key for a Stripe id; an id of another shape is not Stripe's. */
function paymentKey(kind: string, id: string): string {
  const key = `${kind}:${id}`;
  if (!PAYMENT_KEY.test(key)) throw invalidArgument('INVALID_EVENT', `not a Stripe id: ${id.slice(0, 100)}`);
  return key;
}
