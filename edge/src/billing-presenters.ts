/** How the quota, challenge, session and API-key routes present billing's replies. */
import type { ApiKey, CreateChallengeResponse, Quota, Session } from '@webutil/proto/webutil/billing/v1/billing';
import type { Context } from 'koa';
import { cookie, SESSION_COOKIE } from './caller.js';
import { dataEnvelope } from './envelope.js';
import type { Presented } from './pipeline.js';

/** Quota, challenges and account data are per caller and change with every call. */
export const NO_STORE = { 'Cache-Control': 'no-store' };

export function presentQuota(quota: Quota) {
  return { callerKind: quota.callerKind, ...(quota.plan ? { plan: quota.plan } : {}), limit: quota.limit, remaining: quota.remaining };
}

/** `data.challenge` is what the ALTCHA widget takes as its challenge JSON. */
export function presentChallenge({ challenge }: CreateChallengeResponse) {
  if (challenge?.$case === 'turnstile') return { provider: 'turnstile', siteKey: challenge.turnstile.siteKey };
  if (challenge?.$case !== 'altcha') throw new Error('billing returned no challenge');
  const { algorithm, challenge: puzzle, maxNumber, salt, signature } = challenge.altcha;
  return { provider: 'altcha', challenge: { algorithm, challenge: puzzle, maxnumber: maxNumber, salt, signature } };
}

/** Signed in: the session cookie, and the CSRF token the page sends back on state changes. */
export function presentSession(session: Session | undefined, ctx: Context, status: number): Presented {
  if (!session) throw new Error('billing returned no session');
  return {
    status,
    body: dataEnvelope({ account: session.account, csrfToken: session.csrfToken }),
    headers: { ...NO_STORE, 'Set-Cookie': cookie(ctx, SESSION_COOKIE, session.token, session.maxAgeSeconds) },
  };
}

export function presentKey(key: ApiKey | undefined) {
  if (!key) throw new Error('billing returned no key');
  return { id: key.id, name: key.name, prefix: key.prefix, createdAt: key.createdAt, lastUsedAt: key.lastUsedAt ?? null, revokedAt: key.revokedAt ?? null };
}
