/**
 * Alert delivery (decision 0465): each alert of a run goes to the monitor's channels, unless it falls
 * in a maintenance window. Signed webhooks are job webhooks' machinery: billing books the delivery
 * with its body and the edge's delivery worker signs (Standard Webhooks, the account's secret),
 * sends and retries it, listed at GET /v1/webhooks/deliveries. Email goes through the kit's mailer
 * (SMTP, or the dev outbox); Slack-compatible URLs are POSTed through the safe client, under the
 * address policy of every fetch. Each channel is tried a bounded number of times; a failure is
 * logged and never fails the run.
 */
import { promisify } from 'node:util';
import { gzip as gzipCallback } from 'node:zlib';
import { credentials, status as grpcStatus, Metadata } from '@grpc/grpc-js';
import { AddressPolicy, type Logger, OutboundError, SafeHttp } from '@webutil/kit';
import { createMailer, type Mailer } from '@webutil/kit/mail';
import {
  type AttachWebhookDeliveryRequest,
  type ReserveWebhookDeliveryRequest,
  WebhookServiceClient,
} from '@webutil/proto/webutil/billing/v1/webhooks';
import { MonitorAlerts } from '@webutil/proto/webutil/monitor/v1/monitor';
import { type AlertInput, alertMessages } from './alert-messages.js';
import { inMaintenance } from './in-maintenance.js';
import type { MonitorRecord } from './store/store.js';

const gzip = promisify(gzipCallback);

/** Where a run hands its alerts (run-monitor.ts calls it). */
export interface AlertSink {
  deliver(monitor: MonitorRecord, alert: AlertInput): Promise<void>;
}

/** A delivery's `source` in billing's books: its body is given at once, no job is polled. */
export const ALERT_WEBHOOK_SOURCE = 'monitor-alert';
const SLACK_TIMEOUT_MS = 10_000;
/** Bytes of a Slack receiver's answer read (and dropped). */
const SLACK_ANSWER_BYTES = 4_096;
const BILLING_TIMEOUT_MS = 5_000;

/** Billing's webhook books, the two calls an alert needs. */
export interface WebhookBooks {
  reserve(request: ReserveWebhookDeliveryRequest): Promise<string>;
  attach(request: AttachWebhookDeliveryRequest): Promise<void>;
}

/** The books over billing's WebhookService client. */
export function webhookBooksOf(client: WebhookServiceClient): WebhookBooks {
  const options = () => ({ deadline: Date.now() + BILLING_TIMEOUT_MS });
  return {
    reserve: (request) =>
      new Promise((resolve, reject) =>
        client.reserveWebhookDelivery(request, new Metadata(), options(), (err, reply) =>
          err ? reject(err) : resolve(reply.deliveryId),
        ),
      ),
    attach: (request) =>
      new Promise((resolve, reject) =>
        client.attachWebhookDelivery(request, new Metadata(), options(), (err) => (err ? reject(err) : resolve())),
      ),
  };
}

/** The service's settings alert delivery needs (the names of the variables that hold them). */
export interface AlertSettings {
  /** BILLING_ADDR: billing's WebhookService, where signed deliveries are booked. */
  billingAddress: string;
  /** WEBUTIL_ALLOW_TARGETS: private ranges outbound URLs may reach (none in production). */
  allowTargets: readonly string[];
  /** SMTP_URL and MAIL_FROM (the kit's mailEnv); without SMTP_URL, DATA_DIR/mail/ and the log. */
  smtpUrl?: string;
  mailFrom: string;
  dataDir: string;
}

/** Alert delivery over the service's own clients, and how to close them (main.ts's sink). */
export function openAlertDelivery(settings: AlertSettings, log: Logger): { sink: AlertSink; close(): void } {
  const client = new WebhookServiceClient(settings.billingAddress, credentials.createInsecure());
  const mailer = createMailer({ smtpUrl: settings.smtpUrl, from: settings.mailFrom, dataDir: settings.dataDir, log });
  const http = new SafeHttp({ policy: new AddressPolicy(settings.allowTargets), connectionsPerOrigin: 4 });
  return {
    sink: new AlertDelivery({ webhooks: webhookBooksOf(client), mailer, http, log }),
    close: () => {
      client.close();
      mailer.close();
    },
  };
}

export interface AlertDeliveryOptions {
  /** Absent: signed webhooks cannot be booked (logged per alert). */
  webhooks?: WebhookBooks;
  mailer: Mailer;
  /** The safe client with the service's address policy (WEBUTIL_ALLOW_TARGETS). */
  http: SafeHttp;
  log: Logger;
  /** Tries per channel (default 3), and the pause after the first failure, doubling (default 2 s). */
  attempts?: number;
  retryBaseMs?: number;
}

/** A failure worth another try: the channel may answer later. */
class Retryable extends Error {}

export class AlertDelivery implements AlertSink {
  private readonly attempts: number;
  private readonly retryBaseMs: number;

  constructor(private readonly options: AlertDeliveryOptions) {
    this.attempts = options.attempts ?? 3;
    this.retryBaseMs = options.retryBaseMs ?? 2_000;
  }

  /** Sends one alert on every channel of the monitor; resolves when each has succeeded or given up. */
  async deliver(monitor: MonitorRecord, alert: AlertInput): Promise<void> {
    const log = this.options.log.child({ monitorId: monitor.id, event: alert.event });
    const alerts = MonitorAlerts.fromPartial(JSON.parse(monitor.alertsJson) as object);
    if (inMaintenance(alerts.maintenance, Date.parse(alert.at))) {
      log.info('alert silenced by a maintenance window');
      return;
    }
    const messages = alertMessages(alert);
    const sends: [string, () => Promise<void>][] = [
      ...alerts.emails.map((to): [string, () => Promise<void>] => [
        `email ${to}`,
        () =>
          this.options.mailer.send({ to, ...messages.email }).catch((err: unknown) => {
            throw retryable(err);
          }),
      ]),
      ...alerts.slackUrls.map((url): [string, () => Promise<void>] => [
        `slack ${new URL(url).host}`,
        () => this.postSlack(url, messages.slack),
      ]),
    ];
    if (alerts.webhook && alerts.webhookUrl) {
      const url = alerts.webhookUrl;
      sends.push(['webhook', () => this.bookWebhook(monitor, url, messages.webhook)]);
    }
    await Promise.all(
      sends.map(async ([channel, send]) => {
        const error = await this.tries(send);
        if (error) log.warn({ channel, err: error.message }, 'an alert could not be delivered');
        else log.info({ channel }, 'alert delivered');
      }),
    );
  }

  /** Runs `send` until it succeeds, fails for good or has had its tries; the last error, if any. */
  private async tries(send: () => Promise<void>): Promise<Error | undefined> {
    for (let attempt = 1; ; attempt++) {
      try {
        await send();
        return undefined;
      } catch (err) {
        const error = err instanceof Error ? err : new Error(String(err));
        if (!(error instanceof Retryable) || attempt >= this.attempts) return error;
        await new Promise((resolve) => setTimeout(resolve, this.retryBaseMs * 2 ** (attempt - 1)));
      }
    }
  }

  private async postSlack(url: string, body: { text: string }): Promise<void> {
    let res: Awaited<ReturnType<SafeHttp['fetch']>>;
    try {
      res = await this.options.http.fetch(url, {
        method: 'POST',
        body: JSON.stringify(body),
        headers: { 'content-type': 'application/json' },
        maxRedirects: 0,
        timeoutMs: SLACK_TIMEOUT_MS,
        maxBodyBytes: SLACK_ANSWER_BYTES,
      });
    } catch (err) {
      // A refused address stays refused; anything else on the way may pass on another try.
      if (err instanceof OutboundError && err.kind === 'blocked') throw err;
      throw retryable(err);
    }
    await res.dump();
    if (res.status >= 200 && res.status < 300) return;
    const failure = new Error(`the Slack URL answered HTTP ${res.status}`);
    throw res.status === 408 || res.status === 429 || res.status >= 500 ? retryable(failure) : failure;
  }

  /** Books a signed delivery with its body in billing; the edge's worker signs, sends and retries it. */
  private async bookWebhook(monitor: MonitorRecord, url: string, body: object): Promise<void> {
    const books = this.options.webhooks;
    if (!books) throw new Error('no billing address to book signed webhooks with');
    const bodyGzip = await gzip(Buffer.from(JSON.stringify(body)));
    let deliveryId: string;
    try {
      deliveryId = await books.reserve({
        subject: monitor.subject,
        source: ALERT_WEBHOOK_SOURCE,
        url,
        sandbox: false,
      });
    } catch (err) {
      throw (err as { code?: number }).code === grpcStatus.UNAVAILABLE ? retryable(err) : err;
    }
    // The monitor's id names what the delivery is about (X-Webutil-Job-Id, the deliveries list).
    await books.attach({ deliveryId, jobId: monitor.id, bodyGzip }).catch((err: unknown) => {
      throw (err as { code?: number }).code === grpcStatus.UNAVAILABLE ? retryable(err) : err;
    });
  }
}

function retryable(err: unknown): Retryable {
  const error = new Retryable(err instanceof Error ? err.message : String(err));
  error.cause = err;
  return error;
}
