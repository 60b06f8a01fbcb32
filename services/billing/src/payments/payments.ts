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
import { type Catalogue, isPaidPlan, itemOfPrice, PACKS, type Price } from './catalogue.js';

/** What an operator runs instead of a card payment (the pricing page shows it when none is configured). */
export const OPERATOR_COMMAND = 'npm run admin -- add-top-up --email E --credits N (or set-plan --email E --plan P)';

export interface PaymentSettings {
  stripe: Stripe;
  webhookSecret: string;
  /** Seconds a signed event stays acceptable (Stripe's SDK default: 300). */
  toleranceSeconds: number;
  catalogue: Catalogue;
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
    const customer = await this.customerOf(account);
    const subscription = item.$case === 'plan';
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
      default:
        return Promise.resolve('ignored');
    }
  }

  /** A pack's checkout, paid as Stripe says now: its credits are added once. */
  private async checkoutPaid(eventId: string, sessionId: string): Promise<Outcome> {
    const { stripe, catalogue } = this.configured();
    const session = await this.stripeCall('read the checkout session', () =>
      stripe.checkout.sessions.retrieve(sessionId, { expand: ['line_items'] }),
    );
    // A subscription's checkout starts its plan through its paid invoice, not here.
    if (session.mode !== 'payment' || session.payment_status !== 'paid') return 'ignored';
    const account = await this.accountOf(session.customer);
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
    if (credits === 0) return 'ignored';
    return this.record({
      accountId: account.id,
      keys: [paymentKey('event', eventId), paymentKey('checkout', session.id)],
      topUpCredits: credits,
      at: this.clock(),
    });
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

/** A store key for a Stripe id; an id of another shape is not Stripe's. */
function paymentKey(kind: string, id: string): string {
  const key = `${kind}:${id}`;
  if (!PAYMENT_KEY.test(key)) throw invalidArgument('INVALID_EVENT', `not a Stripe id: ${id.slice(0, 100)}`);
  return key;
}
