import { randomBytes } from 'node:crypto';
import { failedPrecondition, invalidArgument, resourceExhausted, unauthenticated } from '@webutil/kit';
import type {
  ClaimedWebhookDelivery,
  ListWebhookAttemptsResponse,
  UpdateWebhookDeliveryRequest,
} from '@webutil/proto/webutil/billing/v1/webhooks';
import type { Clock } from '../clock.js';
import type { AttemptOutcome, DeliveryState, SigningSecret, WebhookStore } from './store.js';

/**
 * Deliveries one account may have under way (reserved, waiting for their job, or retrying): with
 * crawls bounded per caller and retries for 30 minutes, a caller whose receiver is down piles them
 * up; past this, a start with a webhookUrl is refused (429) until some are over.
 */
export const OPEN_DELIVERIES_PER_ACCOUNT = 100;
/**
 * Sandbox starts' deliveries per account per minute: a test key spends nothing, so this alone keeps
 * it from making signed POSTs in bulk (decision 0281).
 */
export const SANDBOX_DELIVERIES_PER_MINUTE = 10;
/**
 * One account's deliveries under lease at once, across every edge (decision 0282): a receiver that
 * never answers holds at most these, and claims take accounts in turns, so other accounts' deliveries
 * go out on time.
 */
export const LEASED_PER_ACCOUNT = 4;
/**
 * The most a claim's bodies add up to (decision 0283): far below gRPC's 64 MB message limit, so a
 * claim of large bodies is always answered.
 */
export const CLAIM_MAX_BYTES = 8 * 1024 * 1024;
/**
 * The largest body kept for a delivery, gzip'd (decision 0283): the edge delivers a larger job's
 * envelope as a summary with its poll URL. With 100 deliveries under way per books, an account's
 * stored bodies stay under 25 MB; a delivery over keeps none.
 */
export const MAX_STORED_BODY_BYTES = 256 * 1024;
/** A rotated-out secret keeps signing beside the new one this long, so receivers can switch over. */
export const PREVIOUS_SECRET_MS = 24 * 3_600_000;
/** A reservation whose start never reported back (its edge died) is gone after this. */
const RESERVATION_MS = 10 * 60_000;
/** A delivery's row outlives its job (30 minutes) and its retries (30 minutes after the job ended). */
const DELIVERY_KEEP_MS = 24 * 3_600_000;
/** Attempts stay listed this long. */
export const ATTEMPT_KEEP_MS = 7 * 24 * 3_600_000;
/** The deliveries route lists at most this many attempts (the newest). */
export const MAX_LISTED_ATTEMPTS = 100;

const OUTCOMES: ReadonlySet<string> = new Set<AttemptOutcome>(['delivered', 'retrying', 'failed']);

/** `whsec_` and the base64 of 32 random bytes (the Standard Webhooks secret format, 24 to 64 bytes). */
export const newSecret = () => `whsec_${randomBytes(32).toString('base64')}`;
/** The webhook-id of a delivery, the same on every attempt. */
const newDeliveryId = () => `msg_${randomBytes(18).toString('base64url')}`;

/**
 * The webhook books a caller works in: the account's, or its sandbox's for a test key (their own
 * secret and deliveries, decision 0281). Only accounts have them; an anonymous caller (an ip:
 * subject) has none.
 */
export function webhookBooks(subject: string, sandbox: boolean): string {
  if (!subject.startsWith('account:'))
    throw unauthenticated('ACCOUNT_REQUIRED', 'webhooks belong to an account: sign in or send an API key');
  return sandbox ? `${subject}:sandbox` : subject;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** The books of webhook deliveries (docs/decisions/0206-webhooks.md); the edge does the sending. */
export class Webhooks {
  constructor(
    private readonly store: WebhookStore,
    private readonly clock: Clock,
  ) {}

  /** A new secret; the one it replaces keeps signing beside it for PREVIOUS_SECRET_MS. */
  async rotateSecret(subject: string, sandbox = false): Promise<{ secret: string; createdAt: string }> {
    const books = webhookBooks(subject, sandbox);
    const now = this.clock();
    const replaced = await this.store.secretOf(books);
    const secret = {
      secret: newSecret(),
      createdAt: now,
      previous: replaced?.secret ?? null,
      previousUntil: replaced ? now + PREVIOUS_SECRET_MS : 0,
    };
    await this.store.setSecret(books, secret);
    return { secret: secret.secret, createdAt: iso(secret.createdAt) };
  }

  async reserve(subject: string, source: string, url: string, sandbox = false): Promise<string> {
    const books = webhookBooks(subject, sandbox);
    if (!(await this.store.secretOf(books)))
      throw failedPrecondition(
        'WEBHOOK_SECRET_MISSING',
        sandbox
          ? 'webhookUrl needs the sandbox’s signing secret: create it first with POST /v1/webhooks/secret ' +
              'and this test key'
          : 'webhookUrl needs the account’s signing secret: create it first with POST /v1/webhooks/secret ' +
              '(or on the account page)',
      );
    const now = this.clock();
    const id = newDeliveryId();
    const limits = {
      maxOpen: OPEN_DELIVERIES_PER_ACCOUNT,
      perMinute: sandbox ? SANDBOX_DELIVERIES_PER_MINUTE : undefined,
    };
    const reserved = await this.store.reserve(
      { id, subject: books, source, url, createdAt: now, expiresAt: now + RESERVATION_MS },
      limits,
      now,
    );
    if (!reserved)
      throw resourceExhausted(
        'TOO_MANY_WEBHOOKS',
        sandbox
          ? `sandbox starts may send at most ${SANDBOX_DELIVERIES_PER_MINUTE} webhooks a minute ` +
              `(and have ${OPEN_DELIVERIES_PER_ACCOUNT} under way); start another in a minute`
          : `this account already has ${OPEN_DELIVERIES_PER_ACCOUNT} webhook deliveries under way, the most it ` +
              'may; start another when some are over',
        60,
      );
    return id;
  }

  /** Binds a reservation to its job, or with a body known now (a monitor's alert) makes it due at once. */
  async attach(id: string, jobId: string | undefined, bodyGzip?: Buffer): Promise<void> {
    if (bodyGzip && bodyGzip.length > MAX_STORED_BODY_BYTES)
      throw invalidArgument('WEBHOOK_BODY_TOO_LARGE', `a delivery's body is kept up to ${MAX_STORED_BODY_BYTES} bytes`);
    const now = this.clock();
    if (jobId) await this.store.attach(id, jobId, now, now + DELIVERY_KEEP_MS, bodyGzip);
    else await this.store.drop(id);
  }

  async claim(owner: string, limit: number, leaseMs: number, maxBytes = 0): Promise<ClaimedWebhookDelivery[]> {
    const now = this.clock();
    const claimed = await this.store.claim(owner, now, Math.min(Math.max(limit, 1), 64), leaseMs, {
      perSubject: LEASED_PER_ACCOUNT,
      maxBytes: maxBytes > 0 ? Math.min(maxBytes, CLAIM_MAX_BYTES) : CLAIM_MAX_BYTES,
    });
    const secrets = new Map<string, SigningSecret | undefined>();
    const out: ClaimedWebhookDelivery[] = [];
    for (const delivery of claimed) {
      if (!secrets.has(delivery.subject)) secrets.set(delivery.subject, await this.store.secretOf(delivery.subject));
      const secret = secrets.get(delivery.subject);
      out.push({
        id: delivery.id,
        source: delivery.source,
        jobId: delivery.jobId ?? '',
        url: delivery.url,
        bodyGzip: delivery.bodyGzip ?? undefined,
        endedAtMs: delivery.endedAt === null ? undefined : String(delivery.endedAt),
        attempts: delivery.attempts,
        secret: secret?.secret ?? '',
        previousSecrets: secret?.previous && secret.previousUntil > now ? [secret.previous] : [],
      });
    }
    return out;
  }

  async update(request: UpdateWebhookDeliveryRequest): Promise<boolean> {
    const { attempt } = request;
    if (attempt && !OUTCOMES.has(attempt.outcome)) throw new Error(`unknown outcome ${attempt.outcome}`);
    if (request.bodyGzip && request.bodyGzip.length > MAX_STORED_BODY_BYTES)
      throw invalidArgument(
        'WEBHOOK_BODY_TOO_LARGE',
        `a delivery's body is kept up to ${MAX_STORED_BODY_BYTES} bytes gzip'd; deliver a summary instead`,
      );
    const now = this.clock();
    const nextAt = request.nextAtMs === undefined ? now : Number(request.nextAtMs);
    const state: DeliveryState = attempt
      ? attempt.outcome === 'delivered'
        ? 'delivered'
        : attempt.outcome === 'failed'
          ? 'failed'
          : 'sending'
      : request.abandoned !== undefined
        ? 'failed'
        : request.endedAtMs !== undefined
          ? 'sending'
          : 'waiting';
    // The attempt's record needs the delivery's own facts; the lease guard is checked by the update.
    const [delivery] = attempt ? await this.deliveryFacts(request.id) : [];
    return this.store.update(request.id, {
      owner: request.owner,
      state,
      bodyGzip: request.bodyGzip ? Buffer.from(request.bodyGzip) : undefined,
      endedAt: request.endedAtMs === undefined ? undefined : Number(request.endedAtMs),
      nextAt,
      attempt:
        attempt && delivery
          ? {
              deliveryId: request.id,
              attempt: delivery.attempts + 1,
              subject: delivery.subject,
              jobId: delivery.jobId,
              url: delivery.url,
              at: Number(attempt.atMs),
              statusCode: attempt.statusCode ?? null,
              error: attempt.error ?? null,
              durationMs: attempt.durationMs,
              outcome: attempt.outcome as AttemptOutcome,
              nextAt: attempt.outcome === 'retrying' ? nextAt : null,
              expiresAt: now + ATTEMPT_KEEP_MS,
            }
          : undefined,
    });
  }

  async list(subject: string, limit: number, sandbox = false): Promise<ListWebhookAttemptsResponse> {
    const books = webhookBooks(subject, sandbox);
    const now = this.clock();
    const secret = await this.store.secretOf(books);
    const bound = limit > 0 ? Math.min(limit, MAX_LISTED_ATTEMPTS) : MAX_LISTED_ATTEMPTS;
    const attempts = await this.store.attempts(books, bound, now);
    return {
      secretCreatedAt: secret ? iso(secret.createdAt) : undefined,
      attempts: attempts.map((a) => ({
        webhookId: a.deliveryId,
        jobId: a.jobId,
        url: a.url,
        attempt: a.attempt,
        attemptedAt: iso(a.at),
        statusCode: a.statusCode ?? undefined,
        error: a.error ?? undefined,
        durationMs: a.durationMs,
        outcome: a.outcome,
        nextAttemptAt: a.nextAt === null ? undefined : iso(a.nextAt),
      })),
    };
  }

  private async deliveryFacts(id: string) {
    const found = await this.store.delivery(id);
    return found ? [{ ...found, jobId: found.jobId ?? '' }] : [];
  }
}
