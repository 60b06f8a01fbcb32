import type { Middleware } from 'koa';
import { type BillingClient, CREDITS_HEADER, peekCredits, setCredits } from '../credits.js';

/**
 * X-Credits-Remaining on every response. Routes set it from their billing call; anything else
 * (unknown routes, wrong methods, malformed bodies, the OpenAPI document) reads the caller's
 * balance, which counts a refused request toward the caller's rate. The liveness probe stays
 * independent of billing.
 */
export const creditsHeader =
  (billing: BillingClient): Middleware =>
  async (ctx, next) => {
    await next();
    if (ctx.path !== '/healthz' && !ctx.response.get(CREDITS_HEADER)) setCredits(ctx, await peekCredits(billing, ctx));
  };
