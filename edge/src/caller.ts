import type { Socket } from 'node:net';
import { CidrList, canonicalIp } from '@webutil/kit';
import type { ChallengeSolution, Credential } from '@webutil/proto/webutil/billing/v1/billing';
import type { RenderCaller } from '@webutil/proto/webutil/render/v1/render';
import type { Context, Middleware } from 'koa';
import { HttpError } from './envelope.js';
import type { Caller } from './route-spec.js';

/** Cookie names (HttpOnly, Secure over HTTPS; SameSite below). */
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
  // A connection's peer is read once, not per request on a kept-alive connection.
  const peers = new WeakMap<Socket, { address: string; trusted: boolean }>();
  return (ctx, next) => {
    const socket = ctx.req.socket;
    let peer = peers.get(socket);
    if (!peer) {
      const address = canonicalIp(socket.remoteAddress ?? '') ?? '';
      peer = { address, trusted: trusted.has(address) };
      peers.set(socket, peer);
    }
    let client = peer.address;
    let https = ctx.protocol === 'https';
    if (peer.trusted) {
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
    return next();
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
  // Koa makes its cookie jar on first use: a request without cookies (an API client's) needs none.
  if (ctx.req.headers.cookie) {
    const session = ctx.cookies.get(SESSION_COOKIE);
    if (session) credential.sessionToken = session;
    const clearance = ctx.cookies.get(CLEARANCE_COOKIE);
    if (clearance) credential.clearance = clearance;
  }
  const csrf = ctx.get(CSRF_HEADER);
  if (csrf) credential.csrfToken = csrf;
  return credential;
}

/** A caller among the edge's views and pending refunds: the credential billing knows it by. */
export function callerKey(credential: Credential): string {
  if (credential.apiKey !== undefined) return `key:${credential.apiKey}`;
  if (credential.sessionToken) return `session:${credential.sessionToken}`;
  return `ip:${credential.clientIp}`;
}

/** A solved challenge from a request body (`payload` for ALTCHA, or `turnstileToken`), if any. */
export function challengeSolution(body: { payload?: string; turnstileToken?: string }): ChallengeSolution | undefined {
  if (body.payload) return { kind: { $case: 'altchaPayload', altchaPayload: body.payload } };
  if (body.turnstileToken) return { kind: { $case: 'turnstileToken', turnstileToken: body.turnstileToken } };
  return undefined;
}

/**
 * The session cookie is Lax, so a link from elsewhere lands signed in (its credit-spending calls
 * need the CSRF token anyway). The clearance is Strict: a page elsewhere cannot make a visitor's
 * browser spend the network's anonymous allowance by navigating it to a metered GET route.
 */
const SAME_SITE: Record<string, 'Lax' | 'Strict'> = { [SESSION_COOKIE]: 'Lax', [CLEARANCE_COOKIE]: 'Strict' };

/** A Set-Cookie value; maxAgeSeconds 0 deletes the cookie. */
export function cookie(ctx: Context, name: string, value: string, maxAgeSeconds: number): string {
  return [
    `${name}=${value}`,
    'Path=/',
    `Max-Age=${maxAgeSeconds}`,
    'HttpOnly',
    `SameSite=${SAME_SITE[name] ?? 'Strict'}`,
    ...(ctx.state.https ? ['Secure'] : []),
  ].join('; ');
}

/** A caller's renders in flight when billing's answer names no bound (a billing older than the bound). */
const FALLBACK_RENDERS_IN_FLIGHT = 2;

/** Whose renders a call counts toward, and how many the caller may have in flight (its plan's figure). */
export function renderCaller({ rate, subject }: Caller): RenderCaller {
  return {
    subject,
    rendersInFlight: rate?.rendersInFlight || FALLBACK_RENDERS_IN_FLIGHT,
  };
}
