import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { status as grpcStatus } from '@grpc/grpc-js';
import { header, type Logger, OutboundError, readGrpcError, type SafeHttp } from '@webutil/kit';
import type {
  ClaimedWebhookDelivery,
  UpdateWebhookDeliveryRequest,
  WebhookAttemptRecord,
} from '@webutil/proto/webutil/billing/v1/webhooks';
import type { Context } from 'koa';
import { Webhook } from 'standardwebhooks';
import { BILLING_TIMEOUT_MS } from '../../billing-client.js';
import type { Clients } from '../../clients.js';
import { successBody } from '../../envelope.js';
import { type CallOptions, NEVER_CANCELLED } from '../../grpc-clients.js';
import { type Presentable, presenter } from '../../rest/message.js';
import type { Caller, RouteSpec } from '../../route-spec.js';
import { sandboxClientsFor } from '../../sandbox/clients.js';
import { isSample } from '../../sandbox/files.js';
import { nextAttemptAt, retryAfterMs, retryableStatus } from './retry.js';

const gzip = promisify(zlib.gzip);
const gunzip = promisify(zlib.gunzip);

export interface DeliveryOptions {
  clients: Clients;
  /** The route table: a delivery's `source` names the route that polls its job. */
  routes: readonly RouteSpec[];
  http: SafeHttp;
  log: Logger;
  /** The back-off's first pause (5 s; tests shorten it). */
  retryBaseMs: number;
  /** How often a running job is looked at. */
  pollMs: number;
  /** How often this process asks billing for due deliveries. */
  tickMs: number;
}

/** Job statuses after which nothing changes. */
const ENDED = new Set(['done', 'failed']);
/** Deliveries one process works on at once. */
const BATCH = 16;
/** A claimed delivery is this process's for this long (a send takes at most SEND_TIMEOUT_MS). */
const LEASE_MS = 60_000;
const SEND_TIMEOUT_MS = 15_000;
/** What is read of a receiver's answer: nothing of it is kept but the status. */
const MAX_ANSWER_BYTES = 4 * 1024;
/** A body billing would not keep (the job's envelope is far smaller in practice). */
const MAX_BODY_GZIP_BYTES = 8 * 1024 * 1024;
const USER_AGENT = 'WebUtil-Webhooks/1.0';

/** Who reads the job: the poll routes ignore their caller; this names the worker in logs. */
const WORKER: Caller = {
  credential: { clientIp: '' },
  quota: { callerKind: 'internal', limit: 0, remaining: 0 },
  subject: 'webhook-delivery',
};

/**
 * The webhook delivery worker every edge process runs (docs/decisions/0206-webhooks.md): it claims
 * due deliveries from billing under a lease; for a job still running it looks again later; for one
 * that ended it renders the poll route's answer (the same presenter and envelope, so the body is
 * exactly what a poll returns), signs it per Standard Webhooks with the account's secret and POSTs
 * it through the kit's safe client (address rules, no redirect followed), then records the attempt
 * and what comes next. Billing keeps the schedule, so retries outlive this process.
 */
export class WebhookDelivery {
  private readonly owner = `edge-${randomUUID()}`;
  private readonly polls = new Map<string, { spec: RouteSpec; present: (reply: Presentable<unknown>) => unknown }>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private tick: Promise<void> = Promise.resolve();

  constructor(private readonly options: DeliveryOptions) {
    for (const spec of options.routes) this.polls.set(spec.operation, { spec, present: presenter(spec.output) });
  }

  start(): void {
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.tick;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.tick = this.work().then(
        (full) => this.schedule(full ? 0 : this.options.tickMs),
        (err: unknown) => {
          this.options.log.debug({ err: readGrpcError(err) }, 'webhook deliveries: billing unavailable');
          this.schedule(this.options.tickMs * 2);
        },
      );
    }, ms);
    this.timer.unref();
  }

  /** One round: the due deliveries, worked on at once; true when the batch was full (more may wait). */
  private async work(): Promise<boolean> {
    const { deliveries } = await this.options.clients.webhooks.claimWebhookDeliveries(
      { owner: this.owner, limit: BATCH, leaseMs: LEASE_MS },
      this.call(),
    );
    await Promise.all(
      deliveries.map((delivery) =>
        this.deliver(delivery).catch((err: unknown) =>
          // The lease runs out and the delivery is claimed again.
          this.options.log.warn({ err, webhookId: delivery.id }, 'webhook delivery could not be worked on'),
        ),
      ),
    );
    return deliveries.length === BATCH;
  }

  private async deliver(delivery: ClaimedWebhookDelivery): Promise<void> {
    const now = Date.now();
    let bodyGzip = delivery.bodyGzip ? Buffer.from(delivery.bodyGzip) : undefined;
    let endedAt = delivery.endedAtMs === undefined ? undefined : Number(delivery.endedAtMs);
    let first: Pick<UpdateWebhookDeliveryRequest, 'bodyGzip' | 'endedAtMs'> = {};
    if (!bodyGzip || endedAt === undefined) {
      const envelope = await this.jobEnvelope(delivery);
      if (envelope === 'running') return this.update(delivery, { nextAtMs: String(now + this.options.pollMs) });
      if (typeof envelope === 'string') return this.update(delivery, { abandoned: envelope });
      bodyGzip = await gzip(envelope);
      endedAt = now;
      if (bodyGzip.length > MAX_BODY_GZIP_BYTES)
        return this.update(delivery, { abandoned: 'the job’s envelope is too large to deliver' });
      first = { bodyGzip, endedAtMs: String(endedAt) };
    }
    if (!delivery.secret) return this.update(delivery, { ...first, abandoned: 'the account has no signing secret' });
    const body = await gunzip(bodyGzip);
    const sent = await this.send(delivery, body);
    const made = delivery.attempts + 1;
    let outcome: 'delivered' | 'retrying' | 'failed';
    let nextAt: number | undefined;
    if (sent.statusCode !== undefined && sent.statusCode >= 200 && sent.statusCode < 300) outcome = 'delivered';
    else if (sent.retryable) {
      nextAt = nextAttemptAt(endedAt, made, Date.now(), this.options.retryBaseMs, sent.retryAfterMs);
      outcome = nextAt === undefined ? 'failed' : 'retrying';
    } else outcome = 'failed';
    const attempt: WebhookAttemptRecord = {
      atMs: String(sent.at),
      statusCode: sent.statusCode,
      error: sent.error,
      durationMs: sent.durationMs,
      outcome,
    };
    await this.update(delivery, { ...first, attempt, nextAtMs: nextAt === undefined ? undefined : String(nextAt) });
  }

  /**
   * The job's envelope as its poll route answers it, once the job has ended; 'running' while it
   * runs; a reason when it cannot be had (the job is gone, the route unknown).
   */
  private async jobEnvelope(delivery: ClaimedWebhookDelivery): Promise<Buffer | string> {
    const poll = this.polls.get(delivery.source);
    if (!poll) return `no route ${delivery.source} to read the job with`;
    let reply: unknown;
    try {
      // A sandbox start's job is a sample: its envelope is the sample's (decision 0207).
      const { clients } = this.options;
      reply = await poll.spec.call(
        isSample(delivery.jobId) ? sandboxClientsFor(clients) : clients,
        { job_id: delivery.jobId },
        { requestId: `webhook-${delivery.id}`, timeoutMs: poll.spec.timeoutMs, signal: NEVER_CANCELLED },
        WORKER,
      );
    } catch (err) {
      if (readGrpcError(err).code === grpcStatus.NOT_FOUND) return 'the job is gone (jobs are kept 30 minutes)';
      throw err; // the crawl service is down: claimed again once the lease runs out
    }
    const presented = poll.spec.present ? poll.spec.present(reply, undefined as unknown as Context) : reply;
    const fields = poll.present(presented as Presentable<unknown>) as { status?: unknown };
    if (!ENDED.has(String(fields.status))) return 'running';
    return Buffer.from(JSON.stringify(successBody(fields, poll.spec.envelope ?? 'data')));
  }

  /** One signed POST; never throws. */
  private async send(delivery: ClaimedWebhookDelivery, body: Buffer) {
    const at = Date.now();
    const timestamp = new Date(Math.floor(at / 1000) * 1000);
    const headers = {
      'content-type': 'application/json',
      accept: '*/*',
      'user-agent': USER_AGENT,
      'webhook-id': delivery.id,
      'webhook-timestamp': String(timestamp.getTime() / 1000),
      'webhook-signature': new Webhook(delivery.secret).sign(delivery.id, timestamp, body),
      'x-webutil-job-id': delivery.jobId,
    };
    const started = performance.now();
    const durationMs = () => Math.round(performance.now() - started);
    try {
      const res = await this.options.http.fetch(delivery.url, {
        method: 'POST',
        body,
        headers,
        maxRedirects: 0,
        timeoutMs: SEND_TIMEOUT_MS,
        maxBodyBytes: MAX_ANSWER_BYTES,
      });
      await res.dump();
      const redirect = res.redirectLimitReached ? 'a redirect, which is not followed' : undefined;
      return {
        at,
        statusCode: res.status,
        error: redirect,
        durationMs: durationMs(),
        retryable: retryableStatus(res.status),
        retryAfterMs: retryAfterMs(header(res.headers, 'retry-after'), Date.now()),
      };
    } catch (err) {
      const outbound = err instanceof OutboundError ? err : undefined;
      return {
        at,
        statusCode: undefined,
        error: outbound?.message ?? 'the request failed',
        durationMs: durationMs(),
        // A refused address stays refused; every other network failure may pass.
        retryable: outbound?.kind !== 'blocked',
        retryAfterMs: 0,
      };
    }
  }

  private async update(
    delivery: ClaimedWebhookDelivery,
    change: Omit<UpdateWebhookDeliveryRequest, 'id' | 'owner'>,
  ): Promise<void> {
    const { updated } = await this.options.clients.webhooks.updateWebhookDelivery(
      { id: delivery.id, owner: this.owner, ...change },
      this.call(),
    );
    if (!updated) this.options.log.warn({ webhookId: delivery.id }, 'webhook delivery lease lost; not recorded');
  }

  private call(): CallOptions {
    return { requestId: `webhooks-${this.owner}`, timeoutMs: BILLING_TIMEOUT_MS, signal: NEVER_CANCELLED };
  }
}
