import type { RateWindow } from '@webutil/proto/webutil/billing/v1/billing';
import type { Clock } from './clock.js';
import type { BillingStore } from './stores/store.js';

const MINUTE_MS = 60_000;

/** A counted request's window; `retryAfterSeconds` when the request is past the limit. */
export interface Counted {
  window: RateWindow;
  retryAfterSeconds?: number;
}

/**
 * Fixed one-minute windows counted in the store, so every billing replica shares them. Every
 * request counts, metered or free; past the limit the caller learns when the window ends.
 */
export class RateLimiter {
  constructor(
    private readonly store: BillingStore,
    private readonly clock: Clock,
  ) {}

  /**
   * Counts `requests` (one, or none for a request counted before) of `subject` against `perMinute`;
   * the window also carries its `rendersInFlight`. A request counted before is never past the limit.
   */
  async hit(subject: string, perMinute: number, rendersInFlight: number, requests = 1): Promise<Counted> {
    const now = this.clock();
    const minute = Math.floor(now / MINUTE_MS);
    const used = await this.store.increment(rateKey(subject, minute), requests, (minute + 2) * MINUTE_MS);
    const window = { key: subject, perMinute, used, minute: String(minute), rendersInFlight };
    if (used <= perMinute || requests === 0) return { window };
    return { window, retryAfterSeconds: Math.max(1, Math.ceil(((minute + 1) * MINUTE_MS - now) / 1000)) };
  }

  /**
   * Adds requests another process answered on its own (the edge's free reads) to their windows.
   * Windows that have ended are past caring.
   */
  async add(subject: string, minute: number, requests: number): Promise<void> {
    if (requests <= 0 || minute < Math.floor(this.clock() / MINUTE_MS)) return;
    await this.store.increment(rateKey(subject, minute), requests, (minute + 2) * MINUTE_MS);
  }
}

const rateKey = (subject: string, minute: number) => `rate|${subject}|${minute}`;
