import type { Context, Middleware } from 'koa';
import { CREDITS_HEADER, setCredits } from '../envelope.js';

/**
 * X-Credits-Remaining (and the RateLimit headers, which go with it) on every response. Routes set
 * it from their billing call; anything else (unknown routes, wrong methods, malformed bodies, the
 * OpenAPI document) reads the caller's balance (`peekCredits`, metering's), which counts a refused
 * request toward the caller's rate.
 * The liveness probe stays independent of billing.
 */
export const creditsHeader =
  (peekCredits: (ctx: Context) => Promise<number>): Middleware =>
  async (ctx, next) => {
    await next();
    if (ctx.path !== '/healthz' && !ctx.response.get(CREDITS_HEADER)) setCredits(ctx, await peekCredits(ctx));
  };
