/**
 * A local stand-in of the Stripe API endpoints billing calls (Stripe cannot be reached from the
 * tests), answering objects shaped as Stripe's published API describes them: customers, Checkout
 * Sessions (create, retrieve with expand[]=line_items) and customer-portal sessions, and the hosted
 * checkout page (opening it pays, and sends the browser back to the session's success URL). Billing's
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

export class StripeStandIn {
  readonly customers = new Map<string, StripeObject>();
  readonly sessions = new Map<string, StoredSession>();
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
    Object.assign(stored.session, { status: 'complete', payment_status: 'paid' });
    return { ...stored.session };
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
        price: {
          id: price.id,
          object: 'price',
          active: true,
          currency: price.currency,
          type: price.recurring ? 'recurring' : 'one_time',
          recurring: price.recurring ? { interval: 'month', interval_count: 1 } : null,
          unit_amount: price.unitAmount,
        },
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
