import type { Middleware } from 'koa';
import { CREDITS_HEADER, type Metering, setCredits } from '../credits.js';

/**
 * X-Credits-Remaining on every response. Routes set it from their billing call; anything else
 * (unknown routes, wrong methods, malformed bodies, the OpenAPI document) reads the caller's
 * balance, which counts a refused request toward the caller's rate. The liveness probe stays
 * independent of billing.
 */
export const creditsHeader =
  (metering: Metering): Middleware =>
  async (ctx, next) => {
    await next();
    if (ctx.path !== '/healthz' && !ctx.response.get(CREDITS_HEADER)) setCredits(ctx, await metering.peekCredits(ctx));
  };
