import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';

const SAFE_ID = /^[\w.:-]{1,128}$/;

/** Every response carries X-Request-Id: the caller's, when it is a sane token, else a new one. */
export const requestId = (): Middleware => (ctx, next) => {
  const incoming = ctx.get('x-request-id');
  const id = SAFE_ID.test(incoming) ? incoming : randomUUID();
  ctx.state.requestId = id;
  ctx.res.setHeader('X-Request-Id', id); // not ctx.set, which allocates on every response
  return next();
};
