import type { Middleware } from 'koa';
import { HttpError } from './envelope.js';
import { continueBody } from './http-server.js';
import type { RawBody } from './route-spec.js';

/**
 * Reads a route's body as sent (RouteSpec.rawBody) into ctx.state.rawBody, as UTF-8 text: of the
 * route's media type, at most its `maxBytes` (a larger one is a 413, refused as it streams in).
 */
export function readRawBody(rules: RawBody): Middleware {
  return async (ctx, next) => {
    if (ctx.request.is(rules.contentType) === false)
      throw new HttpError(415, 'unsupported_media_type', `send the body as ${rules.contentType}`);
    const declared = Number(ctx.get('content-length') || 0);
    if (declared > rules.maxBytes) throw tooLarge(rules);
    continueBody(ctx.req, ctx.res);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > rules.maxBytes) throw tooLarge(rules);
      chunks.push(chunk);
    }
    ctx.state.rawBody = Buffer.concat(chunks).toString('utf8');
    return next();
  };
}

const tooLarge = (rules: RawBody) =>
  new HttpError(413, 'payload_too_large', `the body is larger than ${rules.maxBytes} bytes`);
