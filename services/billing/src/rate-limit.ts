import type { Clock } from './clock.js';
import type { BillingStore } from './stores/store.js';

const MINUTE_MS = 60_000;

/**
 * Fixed one-minute windows counted in the store, so every billing replica shares them. Every
 * request counts, metered or free; past the limit the caller learns when the window ends.
 */
export class RateLimiter {
  constructor(
    private readonly store: BillingStore,
    private readonly clock: Clock,
  ) {}

  /** Counts one request of `subject`; returns the seconds to wait when it is over `perMinute`. */
  async hit(subject: string, perMinute: number): Promise<{ retryAfterSeconds: number } | undefined> {
    const now = this.clock();
    const window = Math.floor(now / MINUTE_MS);
    const windowEnd = (window + 1) * MINUTE_MS;
    const count = await this.store.increment(`rate|${subject}|${window}`, 1, windowEnd + MINUTE_MS);
    return count > perMinute ? { retryAfterSeconds: Math.max(1, Math.ceil((windowEnd - now) / 1000)) } : undefined;
  }
}
