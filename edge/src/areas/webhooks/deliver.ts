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
import { type Caller, NOT_PRICED, type RouteSpec } from '../../route-spec.js';
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
  /** How often this process asks billing for due deliveries while it has room for more. */
  tickMs: number;
  /** PUBLIC_BASE_URL: a summary's poll URL is absolute on it. */
  publicBaseUrl: string;
}

/** Job statuses after which nothing changes. */
const ENDED = new Set(['done', 'failed']);
/**
 * Deliveries one process works on at once (decision 0282): a pool, refilled as each one ends, not a
 * batch waited for whole. Billing hands out at most 4 of one account's at once, across all edges.
 */
export const POOL_SIZE = 32;
/** Sends in flight to one receiver origin from this process; more wait their turn in billing. */
export const SENDS_PER_ORIGIN = 4;
/** A delivery whose origin is busy is claimable again this much later (no attempt counted). */
const ORIGIN_BUSY_MS = 1_000;
/** A claimed delivery is this process's for this long (a send takes at most SEND_TIMEOUT_MS). */
const LEASE_MS = 60_000;
/** A receiver has this long to answer; Standard Webhooks senders use 15 s or less. */
export const SEND_TIMEOUT_MS = 10_000;
/** The bodies one claim carries together, far below gRPC's 64 MB message limit (decision 0283). */
const CLAIM_MAX_BYTES = 8 * 1024 * 1024;
/** What is read of a receiver's answer: nothing of it is kept but the status. */
const MAX_ANSWER_BYTES = 4 * 1024;
/**
 * The largest job envelope delivered whole (decision 0283): a larger one is delivered as a summary
 * (its small fields and the poll URL), so what billing keeps stays small (256 KB gzip'd at most).
 */
export const MAX_DELIVERED_BODY_BYTES = 1024 * 1024;
const MAX_BODY_GZIP_BYTES = 256 * 1024;
const USER_AGENT = 'WebUtil-Webhooks/1.0';

/**
 * A job's envelope too large to deliver whole: its plain fields (status, counts, times), without
 * its objects and lists (the result), marked `truncated`, with the poll URL that answers it whole.
 */
export function summaryOf(fields: Record<string, unknown>, pollUrl: string): Record<string, unknown> {
  const plain = Object.entries(fields).filter(([, value]) => value === null || typeof value !== 'object');
  return { ...Object.fromEntries(plain), truncated: true, pollUrl };
}

/** The origin a receiver's URL names (the per-origin bound's key). */
const originOf = (url: string) => {
  try {
    return new URL(url).origin;
  } catch {
    return url;
  }
};

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
  /** The deliveries this process works on now. */
  private readonly working = new Set<Promise<void>>();
  /** Sends in flight per receiver origin. */
  private readonly sending = new Map<string, number>();
  private stopped = false;
  private loop: Promise<void> = Promise.resolve();
  /** Wakes the claim loop early: a place in the pool came free, or the process stops. */
  private wake: () => void = () => undefined;

  constructor(private readonly options: DeliveryOptions) {
    for (const spec of options.routes) this.polls.set(spec.operation, { spec, present: presenter(spec.output) });
  }

  start(): void {
    this.loop = this.claimLoop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake();
    await this.loop;
    await Promise.allSettled([...this.working]);
  }

  /**
   * Claims as many due deliveries as the pool has room for, and again whenever room comes free
   * (at once when the last claim filled the pool, else after a tick): one slow receiver holds only
   * its own places, never the rest of the pool.
   */
  private async claimLoop(): Promise<void> {
    while (!this.stopped) {
      let pause = this.options.tickMs;
      const room = POOL_SIZE - this.working.size;
      if (room > 0) {
        try {
          const { deliveries } = await this.options.clients.webhooks.claimWebhookDeliveries(
            { owner: this.owner, limit: room, leaseMs: LEASE_MS, maxBytes: CLAIM_MAX_BYTES },
            this.call(),
          );
          for (const delivery of deliveries) this.begin(delivery);
        } catch (err) {
          this.options.log.debug({ err: readGrpcError(err) }, 'webhook deliveries: billing unavailable');
          pause = this.options.tickMs * 2;
        }
      }
      // A full pool waits for a place (or the tick, whichever first); otherwise the tick.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pause);
        timer.unref();
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
        if (this.stopped) this.wake();
      });
    }
  }

  private begin(delivery: ClaimedWebhookDelivery): void {
    const work: Promise<void> = this.deliver(delivery)
      .catch((err: unknown) =>
        // The lease runs out and the delivery is claimed again.
        this.options.log.warn({ err, webhookId: delivery.id }, 'webhook delivery could not be worked on'),
      )
      .finally(() => {
        this.working.delete(work);
        if (this.working.size === POOL_SIZE - 1) this.wake();
      });
    this.working.add(work);
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
      bodyGzip = await gzip(envelope.whole);
      // A large result goes as a summary with its poll URL: what billing keeps stays small.
      if (envelope.whole.length > MAX_DELIVERED_BODY_BYTES || bodyGzip.length > MAX_BODY_GZIP_BYTES)
        bodyGzip = await gzip(envelope.summary());
      endedAt = now;
      first = { bodyGzip, endedAtMs: String(endedAt) };
    }
    if (!delivery.secret) return this.update(delivery, { ...first, abandoned: 'the account has no signing secret' });
    const origin = originOf(delivery.url);
    // The receiver's origin has its most sends in flight: its turn comes again in a moment.
    if ((this.sending.get(origin) ?? 0) >= SENDS_PER_ORIGIN)
      return this.update(delivery, {
        ...first,
        endedAtMs: String(endedAt),
        nextAtMs: String(Date.now() + ORIGIN_BUSY_MS),
      });
    const body = await gunzip(bodyGzip);
    this.sending.set(origin, (this.sending.get(origin) ?? 0) + 1);
    const sent = await this.send(delivery, body).finally(() => {
      const left = (this.sending.get(origin) ?? 1) - 1;
      if (left > 0) this.sending.set(origin, left);
      else this.sending.delete(origin);
    });
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
   * The job's envelope as its poll route answers it, once the job has ended, and its summary (for
   * an envelope too large to deliver whole); 'running' while it runs; a reason when it cannot be
   * had (the job is gone, the route unknown).
   */
  private async jobEnvelope(
    delivery: ClaimedWebhookDelivery,
  ): Promise<{ whole: Buffer; summary: () => Buffer } | string> {
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
        NOT_PRICED,
      );
    } catch (err) {
      if (readGrpcError(err).code === grpcStatus.NOT_FOUND) return 'the job is gone (jobs are kept 30 minutes)';
      throw err; // the crawl service is down: claimed again once the lease runs out
    }
    const presented = poll.spec.present ? poll.spec.present(reply, undefined as unknown as Context) : reply;
    const fields = poll.present(presented as Presentable<unknown>) as Record<string, unknown>;
    if (!ENDED.has(String(fields.status))) return 'running';
    const body = (value: object) => Buffer.from(JSON.stringify(successBody(value, poll.spec.envelope ?? 'data')));
    const pollPath = poll.spec.path.replace(':job_id', encodeURIComponent(delivery.jobId));
    const pollUrl = `${this.options.publicBaseUrl}/v1${pollPath}`;
    return { whole: body(fields), summary: () => body(summaryOf(fields, pollUrl)) };
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
      // A rotated-out secret signs beside the new one for a day (space-separated, as the
      // specification allows), so a receiver still checking with it is not broken at once.
      'webhook-signature': [delivery.secret, ...delivery.previousSecrets]
        .map((secret) => new Webhook(secret).sign(delivery.id, timestamp, body))
        .join(' '),
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
