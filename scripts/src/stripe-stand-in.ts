/**
 * A local stand-in of the Stripe API endpoints billing calls (Stripe cannot be reached from the
 * tests), answering objects shaped as Stripe's published API describes them: customers, Checkout
 * Sessions (create, retrieve with expand[]=line_items, list by payment_intent), customer-portal
 * sessions, subscriptions (retrieve, list), invoices and charges (retrieve), refunds (list), and
 * the hosted checkout page (opening it pays, and sends the browser back to the session's success
 * URL). Tests act as Stripe's dashboard and clock: renew a subscription (paid or declined), change
 * its price, cancel it, refund a charge. Billing's
 * official SDK reaches it through its host/port/protocol options (STRIPE_API_URL). Tests move a
 * session to paid as Stripe's hosted page would, and sign events as Stripe does, with the SDK's
 * own test-header helper.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';

export interface StandInPrice {
  id: string;
  /** Smallest currency unit. */
  unitAmount: number;
  currency: string;
  /** A plan's monthly price, or a one-time (pack) price. */
  recurring: boolean;
}

type StripeObject = Record<string, unknown> & { id: string };

interface StoredSession {
  session: StripeObject;
  lineItems: StripeObject[];
}

/** One API request the stand-in received, for assertions. */
export interface StandInRequest {
  method: string;
  path: string;
  idempotencyKey: string | undefined;
  params: Record<string, unknown>;
}

const id = (prefix: string) => `${prefix}_test_${randomBytes(12).toString('hex')}`;
const now = () => Math.floor(Date.now() / 1000);
/** A month as the stand-in's periods count it (Stripe's are calendar months). */
const MONTH_S = 30 * 86_400;

export class StripeStandIn {
  readonly customers = new Map<string, StripeObject>();
  readonly sessions = new Map<string, StoredSession>();
  readonly subscriptions = new Map<string, StripeObject>();
  readonly invoices = new Map<string, StripeObject>();
  readonly charges = new Map<string, StripeObject>();
  readonly refunds = new Map<string, StripeObject>();
  readonly requests: StandInRequest[] = [];
  /** The secret key billing must send (Authorization: Bearer). */
  readonly secretKey = `sk_test_${randomBytes(12).toString('hex')}`;
  /** The webhook endpoint's signing secret. */
  readonly webhookSecret = `whsec_${randomBytes(24).toString('base64')}`;
  private readonly prices: Map<string, StandInPrice>;
  /** Only for its webhook helpers (no API call is made with it). */
  private readonly sdk = new Stripe('sk_test_signing_only');

  private constructor(
    private readonly server: Server,
    prices: readonly StandInPrice[],
  ) {
    this.prices = new Map(prices.map((price) => [price.id, price]));
  }

  static async start(prices: readonly StandInPrice[]): Promise<StripeStandIn> {
    let standIn: StripeStandIn | undefined;
    const server = createServer((req, res) => void standIn?.handle(req, res));
    standIn = new StripeStandIn(server, prices);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return standIn;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The customer paid on Stripe's page: the session is complete and paid, as Stripe then shows it. */
  pay(sessionId: string): StripeObject {
    const stored = this.sessions.get(sessionId);
    if (!stored) throw new Error(`no checkout session ${sessionId}`);
    if (stored.session.payment_status === 'paid') return { ...stored.session };
    Object.assign(stored.session, { status: 'complete', payment_status: 'paid' });
    const customer = String(stored.session.customer);
    if (stored.session.mode === 'subscription') {
      const price = stored.lineItems[0]?.price as StripeObject;
      const subscription = this.createSubscription(customer, price, now(), now() + MONTH_S);
      stored.session.subscription = subscription.id;
      this.invoice(subscription, 'subscription_create', true);
    } else {
      const paymentIntent = id('pi');
      stored.session.payment_intent = paymentIntent;
      const charge: StripeObject = {
        id: id('ch'),
        object: 'charge',
        amount: stored.session.amount_total,
        amount_captured: stored.session.amount_total,
        amount_refunded: 0,
        captured: true,
        created: now(),
        currency: stored.session.currency,
        customer,
        livemode: false,
        paid: true,
        payment_intent: paymentIntent,
        refunded: false,
        status: 'succeeded',
      };
      this.charges.set(charge.id, charge);
    }
    return { ...stored.session };
  }

  /** The subscription a paid subscription-mode session made. */
  subscriptionOf(sessionId: string): StripeObject {
    const subscription = this.subscriptions.get(String(this.sessions.get(sessionId)?.session.subscription));
    if (!subscription) throw new Error(`checkout session ${sessionId} made no subscription`);
    return subscription;
  }

  /** The charge a paid payment-mode session made. */
  chargeOf(sessionId: string): StripeObject {
    const intent = this.sessions.get(sessionId)?.session.payment_intent;
    const charge = [...this.charges.values()].find((c) => c.payment_intent === intent);
    if (!charge) throw new Error(`checkout session ${sessionId} made no charge`);
    return charge;
  }

  /**
   * The subscription's next period begins where the current one ends, and Stripe invoices it: paid, or not
   * (status past_due, as when the card is declined). Answers the invoice.
   */
  renew(subscriptionId: string, paid: boolean): StripeObject {
    const subscription = this.subscription(subscriptionId);
    const item = itemOf(subscription);
    const start = Number(item.current_period_end);
    Object.assign(item, { current_period_start: start, current_period_end: start + MONTH_S });
    subscription.status = paid ? 'active' : 'past_due';
    return this.invoice(subscription, 'subscription_cycle', paid);
  }

  /** The failed renewal's invoice paid after all (a retry, or a new card). */
  payInvoice(invoiceId: string): StripeObject {
    const invoice = this.invoices.get(invoiceId);
    if (!invoice) throw new Error(`no invoice ${invoiceId}`);
    Object.assign(invoice, { status: 'paid', amount_paid: invoice.amount_due, amount_remaining: 0 });
    this.subscription(subscriptionOfInvoice(invoice)).status = 'active';
    return { ...invoice };
  }

  /** Moves the current period (seconds), e.g. into the past, as if it had begun earlier. */
  setPeriod(subscriptionId: string, start: number, end: number): void {
    Object.assign(itemOf(this.subscription(subscriptionId)), { current_period_start: start, current_period_end: end });
    for (const invoice of this.invoices.values())
      if (subscriptionOfInvoice(invoice) === subscriptionId)
        Object.assign(invoice, { period_start: start, period_end: end });
  }

  /** A plan change in the customer portal: the subscription's price is replaced. */
  changePrice(subscriptionId: string, priceId: string): StripeObject {
    const subscription = this.subscription(subscriptionId);
    const price = this.prices.get(priceId);
    if (!price?.recurring) throw new Error(`no recurring price ${priceId}`);
    itemOf(subscription).price = priceObject(price);
    return { ...subscription };
  }

  /** Cancellation in the portal: at the period's end, or `now` (the subscription ends at once). */
  cancel(subscriptionId: string, when: 'period_end' | 'now'): StripeObject {
    const subscription = this.subscription(subscriptionId);
    if (when === 'period_end') Object.assign(subscription, { cancel_at_period_end: true, canceled_at: now() });
    else Object.assign(subscription, { status: 'canceled', canceled_at: now(), ended_at: now() });
    return { ...subscription };
  }

  /** A refund of a charge (default: all of what is left), as the dashboard makes one. */
  refund(chargeId: string, amount?: number): StripeObject {
    const charge = this.charges.get(chargeId);
    if (!charge) throw new Error(`no charge ${chargeId}`);
    const left = Number(charge.amount) - Number(charge.amount_refunded);
    const refunded = Math.min(left, amount ?? left);
    const refund: StripeObject = {
      id: id('re'),
      object: 'refund',
      amount: refunded,
      charge: charge.id,
      created: now(),
      currency: charge.currency,
      payment_intent: charge.payment_intent,
      status: 'succeeded',
    };
    this.refunds.set(refund.id, refund);
    charge.amount_refunded = Number(charge.amount_refunded) + refunded;
    charge.refunded = charge.amount_refunded === charge.amount;
    return { ...charge };
  }

  /** An Event object (https://docs.stripe.com/api/events/object) carrying `object` as it is now. */
  event(type: string, object: StripeObject, eventId = id('evt')): string {
    return JSON.stringify({
      id: eventId,
      object: 'event',
      api_version: Stripe.API_VERSION,
      created: now(),
      data: { object },
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      type,
    });
  }

  /** The Stripe-Signature header for `payload`, as Stripe signs it (timestamp in seconds; default now). */
  sign(payload: string, options: { secret?: string; timestamp?: number } = {}): string {
    return this.sdk.webhooks.generateTestHeaderString({
      payload,
      secret: options.secret ?? this.webhookSecret,
      ...(options.timestamp === undefined ? {} : { timestamp: options.timestamp }),
    });
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    let body = '';
    for await (const chunk of req) body += chunk;
    const params = formParams(req.method === 'GET' ? url.searchParams : new URLSearchParams(body));
    this.requests.push({
      method: req.method ?? '',
      path: url.pathname,
      idempotencyKey: req.headers['idempotency-key'] as string | undefined,
      params,
    });
    const send = (status: number, payload: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json', 'request-id': id('req') });
      res.end(JSON.stringify(payload));
    };
    const fail = (status: number, message: string, code?: string) =>
      send(status, { error: { type: 'invalid_request_error', message, ...(code ? { code } : {}) } });
    // Stripe's hosted checkout page, as a customer's browser sees it: paying there sends it back.
    const page = /^GET \/c\/pay\/([A-Za-z0-9_]+)$/.exec(`${req.method} ${url.pathname}`);
    if (page) {
      const stored = this.sessions.get(page[1] ?? '');
      if (!stored) return fail(404, 'No such checkout page');
      this.pay(stored.session.id);
      const back = String(stored.session.success_url).replace('{CHECKOUT_SESSION_ID}', stored.session.id);
      res.writeHead(303, { location: back });
      return void res.end();
    }
    if (req.headers.authorization !== `Bearer ${this.secretKey}`) return fail(401, 'Invalid API Key provided');
    const route = `${req.method} ${url.pathname}`;
    if (route === 'POST /v1/customers') return send(200, this.createCustomer(params));
    if (route === 'POST /v1/checkout/sessions') {
      const created = this.createSession(params);
      return typeof created === 'string' ? fail(400, created) : send(200, created);
    }
    const retrieve = /^GET \/v1\/checkout\/sessions\/([A-Za-z0-9_]+)$/.exec(route);
    if (retrieve) {
      const stored = this.sessions.get(retrieve[1] ?? '');
      if (!stored) return fail(404, `No such checkout.session: '${retrieve[1]}'`, 'resource_missing');
      const expand = Object.values((params.expand as Record<string, string>) ?? {});
      return send(200, {
        ...stored.session,
        ...(expand.includes('line_items')
          ? {
              line_items: {
                object: 'list',
                data: stored.lineItems,
                has_more: false,
                url: `/v1/checkout/sessions/${stored.session.id}/line_items`,
              },
            }
          : {}),
      });
    }
    const found = this.retrieve(route, params);
    if (found) return found.object ? send(200, found.object) : fail(404, found.missing ?? '', 'resource_missing');
    if (route === 'POST /v1/billing_portal/sessions') {
      const customer = String(params.customer ?? '');
      if (!this.customers.has(customer)) return fail(400, `No such customer: '${customer}'`, 'resource_missing');
      const portalId = id('bps');
      return send(200, {
        id: portalId,
        object: 'billing_portal.session',
        configuration: id('bpc'),
        created: now(),
        customer,
        livemode: false,
        locale: null,
        on_behalf_of: null,
        return_url: params.return_url ?? null,
        url: `${this.url}/p/session/${portalId}`,
      });
    }
    return fail(404, `Unrecognized request URL (${req.method}: ${url.pathname})`);
  }

  /** GET of one object by id, and the lists billing reads; undefined for another route. */
  private retrieve(route: string, params: Record<string, unknown>): { object?: unknown; missing?: string } | undefined {
    const one = /^GET \/v1\/(subscriptions|invoices|charges)\/([A-Za-z0-9_]+)$/.exec(route);
    if (one) {
      const [, kind = '', objectId = ''] = one;
      const table = { subscriptions: this.subscriptions, invoices: this.invoices, charges: this.charges }[kind];
      const object = table?.get(objectId);
      return object ? { object: { ...object } } : { missing: `No such ${kind.replace(/s$/, '')}: '${objectId}'` };
    }
    const list = (data: StripeObject[], path: string) => ({
      object: { object: 'list', data: data.map((o) => ({ ...o })), has_more: false, url: path },
    });
    if (route === 'GET /v1/refunds')
      return list(
        // Newest first, as Stripe lists.
        [...this.refunds.values()].filter((r) => !params.charge || r.charge === params.charge).reverse(),
        '/v1/refunds',
      );
    if (route === 'GET /v1/subscriptions')
      return list(
        [...this.subscriptions.values()].filter(
          (s) =>
            (!params.customer || s.customer === params.customer) &&
            (params.status === 'all' || s.status === (params.status ?? 'active')),
        ),
        '/v1/subscriptions',
      );
    if (route === 'GET /v1/checkout/sessions')
      return list(
        [...this.sessions.values()]
          .map(({ session }) => session)
          .filter((s) => !params.payment_intent || s.payment_intent === params.payment_intent),
        '/v1/checkout/sessions',
      );
    return undefined;
  }

  private subscription(subscriptionId: string): StripeObject {
    const subscription = this.subscriptions.get(subscriptionId);
    if (!subscription) throw new Error(`no subscription ${subscriptionId}`);
    return subscription;
  }

  private createSubscription(customer: string, price: StripeObject, start: number, end: number): StripeObject {
    const subscriptionId = id('sub');
    const subscription: StripeObject = {
      id: subscriptionId,
      object: 'subscription',
      billing_cycle_anchor: start,
      cancel_at: null,
      cancel_at_period_end: false,
      canceled_at: null,
      created: start,
      currency: price.currency,
      customer,
      ended_at: null,
      items: {
        object: 'list',
        data: [
          {
            id: id('si'),
            object: 'subscription_item',
            created: start,
            current_period_start: start,
            current_period_end: end,
            price: { ...price },
            quantity: 1,
            subscription: subscriptionId,
          },
        ],
        has_more: false,
        url: `/v1/subscription_items?subscription=${subscriptionId}`,
      },
      latest_invoice: null,
      livemode: false,
      metadata: {},
      start_date: start,
      status: 'active',
    };
    this.subscriptions.set(subscriptionId, subscription);
    return subscription;
  }

  /** The invoice of the subscription's current period (https://docs.stripe.com/api/invoices/object). */
  private invoice(subscription: StripeObject, reason: string, paid: boolean): StripeObject {
    const item = itemOf(subscription);
    const amount = Number((item.price as { unit_amount: number }).unit_amount);
    const invoice: StripeObject = {
      id: id('in'),
      object: 'invoice',
      amount_due: amount,
      amount_paid: paid ? amount : 0,
      amount_remaining: paid ? 0 : amount,
      attempt_count: 1,
      billing_reason: reason,
      created: now(),
      currency: subscription.currency,
      customer: subscription.customer,
      livemode: false,
      parent: {
        type: 'subscription_details',
        quote_details: null,
        subscription_details: { metadata: {}, subscription: subscription.id },
      },
      period_start: item.current_period_start,
      period_end: item.current_period_end,
      status: paid ? 'paid' : 'open',
    };
    this.invoices.set(invoice.id, invoice);
    subscription.latest_invoice = invoice.id;
    return { ...invoice };
  }

  /** A customer as if made in Stripe's dashboard (no account of ours knows it). */
  createCustomer(params: Record<string, unknown>): StripeObject {
    const customer = {
      id: id('cus'),
      object: 'customer',
      created: now(),
      email: params.email ?? null,
      metadata: params.metadata ?? {},
      livemode: false,
      balance: 0,
      currency: null,
      delinquent: false,
      description: null,
      name: null,
    };
    this.customers.set(customer.id, customer);
    return customer;
  }

  createSession(params: Record<string, unknown>): StripeObject | string {
    const mode = String(params.mode ?? '');
    if (mode !== 'payment' && mode !== 'subscription') return 'Invalid mode: must be payment or subscription';
    const customer = String(params.customer ?? '');
    if (!this.customers.has(customer)) return `No such customer: '${customer}'`;
    const lines = Object.values((params.line_items as Record<string, Record<string, string>>) ?? {});
    if (lines.length === 0) return 'line_items is required';
    const lineItems: StripeObject[] = [];
    let amountTotal = 0;
    let currency = '';
    for (const line of lines) {
      const price = this.prices.get(line.price ?? '');
      if (!price) return `No such price: '${line.price}'`;
      if (price.recurring !== (mode === 'subscription'))
        return `price ${price.id} is ${price.recurring ? 'recurring' : 'one-time'}; mode is ${mode}`;
      const quantity = Number(line.quantity ?? 1);
      amountTotal += price.unitAmount * quantity;
      currency = price.currency;
      lineItems.push({
        id: id('li'),
        object: 'item',
        amount_subtotal: price.unitAmount * quantity,
        amount_total: price.unitAmount * quantity,
        currency: price.currency,
        description: null,
        price: priceObject(price),
        quantity,
      });
    }
    const sessionId = id('cs');
    const session: StripeObject = {
      id: sessionId,
      object: 'checkout.session',
      amount_subtotal: amountTotal,
      amount_total: amountTotal,
      cancel_url: params.cancel_url ?? null,
      client_reference_id: params.client_reference_id ?? null,
      created: now(),
      currency,
      customer,
      expires_at: now() + 86_400,
      livemode: false,
      metadata: params.metadata ?? {},
      mode,
      payment_intent: null,
      payment_status: 'unpaid',
      status: 'open',
      subscription: null,
      success_url: params.success_url ?? null,
      url: `${this.url}/c/pay/${sessionId}`,
    };
    this.sessions.set(sessionId, { session, lineItems });
    return { ...session };
  }
}

/** A Price object (https://docs.stripe.com/api/prices/object), as much as billing reads. */
function priceObject(price: StandInPrice): StripeObject {
  return {
    id: price.id,
    object: 'price',
    active: true,
    currency: price.currency,
    type: price.recurring ? 'recurring' : 'one_time',
    recurring: price.recurring ? { interval: 'month', interval_count: 1 } : null,
    unit_amount: price.unitAmount,
  };
}

/** A subscription's one item (billing sells one plan per subscription). */
function itemOf(subscription: StripeObject): StripeObject {
  const item = (subscription.items as { data: StripeObject[] }).data[0];
  if (!item) throw new Error(`subscription ${subscription.id} has no item`);
  return item;
}

function subscriptionOfInvoice(invoice: StripeObject): string {
  return String(
    (invoice.parent as { subscription_details: { subscription: string } }).subscription_details.subscription,
  );
}

/** Stripe's form encoding (`a[b][0][c]=v`) as nested objects; list indices stay object keys. */
function formParams(search: URLSearchParams): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  for (const [key, value] of search) {
    const path = key.replace(/\]/g, '').split('[');
    let node = root;
    for (const part of path.slice(0, -1)) {
      node[part] ??= {};
      node = node[part] as Record<string, unknown>;
    }
    node[path[path.length - 1] ?? ''] = value;
  }
  return root;
}
