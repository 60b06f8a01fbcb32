import { CidrList, canonicalIp } from '@webutil/kit';
import type { ChallengeSolution, Credential } from '@webutil/proto/webutil/billing/v1/billing';
import type { Context, Middleware } from 'koa';
import { HttpError } from './envelope.js';

/** Cookie names (HttpOnly, SameSite=Lax, Secure over HTTPS). */
export const SESSION_COOKIE = 'wu_session';
export const CLEARANCE_COOKIE = 'wu_clearance';
/** A signed-in page sends its session's CSRF token in this header on state-changing requests. */
export const CSRF_HEADER = 'X-CSRF-Token';

/** RFC 6750 `Bearer <b64token>`; anything else in Authorization is refused, not ignored. */
const BEARER = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

/**
 * Sets ctx.state.clientIp and ctx.state.https. The client is the socket's peer, unless that peer
 * is a trusted proxy: then X-Forwarded-For is read from the right, skipping trusted proxies, and
 * the first address that is not one is the client. A header sent by anyone else is ignored, so
 * a spoofed X-Forwarded-For gets its sender nothing.
 */
export function clientAddress(trustedProxies: readonly string[]): Middleware {
  const trusted = new CidrList(trustedProxies);
  return async (ctx, next) => {
    const peer = canonicalIp(ctx.req.socket.remoteAddress ?? '') ?? '';
    let client = peer;
    let https = ctx.protocol === 'https';
    if (trusted.has(peer)) {
      const hops = ctx
        .get('x-forwarded-for')
        .split(',')
        .filter((hop) => hop.trim());
      for (const raw of hops.reverse()) {
        const hop = canonicalIp(raw);
        if (!hop) break; // garbage from a client: the last good hop stands
        client = hop;
        if (!trusted.has(hop)) break;
      }
      https ||= ctx.get('x-forwarded-proto').split(',')[0]?.trim() === 'https';
    }
    ctx.state.clientIp = client;
    ctx.state.https = https;
    await next();
  };
}

/** The caller's credential as billing reads it; a malformed Authorization header is a 401. */
export function credentialOf(ctx: Context): Credential {
  const credential: Credential = { clientIp: String(ctx.state.clientIp ?? '') };
  const authorization = ctx.get('authorization');
  if (authorization) {
    const bearer = BEARER.exec(authorization);
    if (!bearer) {
      throw new HttpError(
        401,
        'invalid_authorization',
        'the Authorization header must be "Bearer <API key>"',
        undefined,
        {
          'WWW-Authenticate': 'Bearer realm="webutil", error="invalid_request"',
        },
      );
    }
    credential.apiKey = bearer[1];
  }
  const session = ctx.cookies.get(SESSION_COOKIE);
  if (session) credential.sessionToken = session;
  const clearance = ctx.cookies.get(CLEARANCE_COOKIE);
  if (clearance) credential.clearance = clearance;
  const csrf = ctx.get(CSRF_HEADER);
  if (csrf) credential.csrfToken = csrf;
  return credential;
}

/** A solved challenge from a request body (`payload` for ALTCHA, or `turnstileToken`), if any. */
export function challengeSolution(body: { payload?: string; turnstileToken?: string }): ChallengeSolution | undefined {
  if (body.payload) return { kind: { $case: 'altchaPayload', altchaPayload: body.payload } };
  if (body.turnstileToken) return { kind: { $case: 'turnstileToken', turnstileToken: body.turnstileToken } };
  return undefined;
}

/** A Set-Cookie value; maxAgeSeconds 0 deletes the cookie. */
export function cookie(ctx: Context, name: string, value: string, maxAgeSeconds: number): string {
  return [
    `${name}=${value}`,
    'Path=/',
    `Max-Age=${maxAgeSeconds}`,
    'HttpOnly',
    'SameSite=Lax',
    ...(ctx.state.https ? ['Secure'] : []),
  ].join('; ');
}
