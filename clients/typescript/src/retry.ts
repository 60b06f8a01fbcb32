/**
 * The fetch every call goes through: a credit-spending POST gets an Idempotency-Key (one per call,
 * kept across its retries, so a retry never pays twice), and a 429 or 503 is retried after its
 * Retry-After; a network error is retried only when the request is safe to repeat (a GET, or a
 * POST carrying its Idempotency-Key).
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { retryAfterSeconds } from './errors.js';
import { OPERATIONS } from './generated/operations.js';

export interface RetryOptions {
  /** Retries after the first try (default 3). */
  retries: number;
  /** The longest wait between tries, in ms, whatever Retry-After says (default 60 000). */
  maxDelayMs: number;
  /** Told before each retry (for progress output and logs). */
  onRetry?: (event: { attempt: number; delayMs: number; status: number; method: string; url: string }) => void;
}

const RETRIED_STATUSES = new Set([429, 503]);

/** The templates of the credit-spending POST paths, from the contract. */
const SPENDING = Object.values(OPERATIONS)
  .filter((operation) => operation.method === 'POST' && operation.credits > 0)
  .map((operation) => new RegExp(`^${operation.path.replace(/\{\w+\}/g, '[^/]+')}$`));

export const spendsCredits = (method: string, pathname: string) =>
  method === 'POST' && SPENDING.some((pattern) => pattern.test(pathname.replace(/^\/api(?=\/v1\/)/, '')));

/** Waits `ms` unless the signal aborts first. */
const wait = (ms: number, signal?: AbortSignal | null) => sleep(ms, undefined, signal ? { signal } : undefined);

export function retryingFetch(
  base: (request: Request) => Promise<Response>,
  options: RetryOptions,
): (request: Request) => Promise<Response> {
  return async (original) => {
    let request = original;
    const pathname = new URL(request.url).pathname;
    if (spendsCredits(request.method, pathname) && !request.headers.has('idempotency-key')) {
      const headers = new Headers(request.headers);
      headers.set('Idempotency-Key', randomUUID());
      request = new Request(request, { headers });
    }
    const repeatable = request.method === 'GET' || request.headers.has('idempotency-key');
    for (let attempt = 0; ; attempt++) {
      const last = attempt >= options.retries;
      let response: Response;
      try {
        response = await base(last ? request : request.clone());
      } catch (err) {
        if (last || !repeatable || request.signal.aborted) throw err;
        const delayMs = Math.min(options.maxDelayMs, 250 * 2 ** attempt);
        options.onRetry?.({ attempt: attempt + 1, delayMs, status: 0, method: request.method, url: request.url });
        await wait(delayMs, request.signal);
        continue;
      }
      if (last || !RETRIED_STATUSES.has(response.status)) return response;
      const after = retryAfterSeconds(response.headers);
      const delayMs = Math.min(options.maxDelayMs, after !== undefined ? after * 1000 : 1000 * 2 ** attempt);
      await response.body?.cancel().catch(() => undefined);
      options.onRetry?.({
        attempt: attempt + 1,
        delayMs,
        status: response.status,
        method: request.method,
        url: request.url,
      });
      await wait(delayMs, request.signal);
    }
  };
}
