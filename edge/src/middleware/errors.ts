import type { Logger } from '@webutil/kit';
import type { Middleware } from 'koa';
import { failureBody, HttpError } from '../envelope.js';
import { closeAfterAnswer } from '../http-server.js';

/**
 * Renders every failure as the spec's envelope, including unknown routes (404), wrong methods
 * (405), body-parser failures and crashes (500, without a stack trace on the wire).
 */
export const errorEnvelope =
  (log: Logger): Middleware =>
  async (ctx, next) => {
    const started = performance.now();
    try {
      await next();
      if (ctx.body === undefined || ctx.body === null) {
        if (ctx.status === 405)
          throw new HttpError(405, 'method_not_allowed', `${ctx.method} is not allowed on ${ctx.path}`);
        if (ctx.status === 404) throw new HttpError(404, 'not_found', `no route for ${ctx.method} ${ctx.path}`);
      }
    } catch (err) {
      const httpError = toHttpError(err);
      if (httpError.status >= 500 && !(err instanceof HttpError))
        log.error({ err, requestId: ctx.state.requestId }, 'unhandled edge error');
      ctx.status = httpError.status;
      ctx.body = failureBody(httpError);
      ctx.set(httpError.headers);
      // Refused before its body was read (an upload judged by its headers): the rest of it is
      // discarded while the connection closes, gracefully, after the answer.
      if (!ctx.req.complete) closeAfterAnswer(ctx.res);
      // RFC 9110: every 401 names the scheme that would be accepted, whoever raised it.
      if (httpError.status === 401 && !ctx.response.get('WWW-Authenticate'))
        ctx.set('WWW-Authenticate', 'Bearer realm="webutil"');
    } finally {
      // The record is built only when it is written (a quieter LOG_LEVEL skips it on every request).
      if (log.isLevelEnabled('info'))
        log.info(
          {
            requestId: ctx.state.requestId,
            method: ctx.method,
            path: ctx.path,
            status: ctx.status,
            ms: Math.round(performance.now() - started),
          },
          'request',
        );
    }
  };

function toHttpError(err: unknown): HttpError {
  if (err instanceof HttpError) return err;
  const e = err as { status?: number; type?: string; expose?: boolean; message?: string };
  if (e.status === 413 || e.type === 'entity.too.large')
    return new HttpError(413, 'payload_too_large', 'the request body is too large');
  if (e.status === 415) return new HttpError(415, 'unsupported_media_type', 'unsupported content type');
  if (e.status && e.status >= 400 && e.status < 500)
    return new HttpError(e.status, 'invalid_request', e.expose && e.message ? e.message : 'invalid request');
  return new HttpError(500, 'internal_error', 'internal error');
}
