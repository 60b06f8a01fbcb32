/**
 * When a webhook delivery is tried again (docs/decisions/0206-webhooks.md): after a network error,
 * 408, 429 or 5xx, with exponential back-off (the base, 5 s by default, doubling: 5 s, 10 s, 20 s
 * ...; at most 10 minutes apart, longer only when the receiver's Retry-After asks), for up to 30
 * minutes after the job ended. Anything else (2xx delivered; a redirect or another 4xx) is final.
 */
export const RETRY_WINDOW_MS = 30 * 60_000;
export const MAX_RETRY_DELAY_MS = 10 * 60_000;

/** An answer worth trying again. */
export const retryableStatus = (status: number) => status === 408 || status === 429 || status >= 500;

/** The pause after the `attemptsMade`-th failed attempt (1 after the first). */
export const retryDelay = (attemptsMade: number, baseMs: number) =>
  Math.min(baseMs * 2 ** Math.max(0, attemptsMade - 1), MAX_RETRY_DELAY_MS);

/**
 * When to try again, or undefined when that would pass the 30 minutes after `endedAt`. A
 * Retry-After longer than the back-off is honoured (within the cap).
 */
export function nextAttemptAt(
  endedAt: number,
  attemptsMade: number,
  now: number,
  baseMs: number,
  retryAfterMs = 0,
): number | undefined {
  const delay = Math.max(retryDelay(attemptsMade, baseMs), Math.min(retryAfterMs, MAX_RETRY_DELAY_MS));
  const at = now + delay;
  return at <= endedAt + RETRY_WINDOW_MS ? at : undefined;
}

/** Retry-After as milliseconds: delay-seconds or an HTTP date; 0 when absent or unreadable. */
export function retryAfterMs(value: string | undefined, now: number): number {
  if (!value) return 0;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? 0 : Math.max(0, at - now);
}
