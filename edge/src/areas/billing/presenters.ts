/**
 * Where billing's replies differ in shape from the spec's JSON: the challenge union, cookies,
 * sign-in refusals, a key beside its secret, usage times, a Stripe event's outcome.
 */
import type {
  CreateApiKeyResponse,
  CreateChallengeResponse,
  ListUsageResponse,
  RevokeApiKeyResponse,
  Session,
  SignInResponse,
  SignUpResponse,
  SolveChallengeResponse,
} from '@webutil/proto/webutil/billing/v1/billing';
import type { ApplyStripeEventResponse } from '@webutil/proto/webutil/billing/v1/payments';
import * as payments from '@webutil/proto/webutil/billing/v1/payments.fields';
import type { Context } from 'koa';
import { httpErrorFromDenial } from '../../call-errors.js';
import { CLEARANCE_COOKIE, cookie, SESSION_COOKIE } from '../../caller.js';
import { NO_STORE } from '../../envelope.js';

/** `data.challenge` is what the ALTCHA widget takes as its challenge JSON. */
export function presentChallenge({ challenge }: CreateChallengeResponse) {
  if (challenge?.$case === 'turnstile') return { provider: 'turnstile', siteKey: challenge.turnstile.siteKey };
  if (challenge?.$case !== 'altcha') throw new Error('billing returned no challenge');
  const { algorithm, challenge: puzzle, maxNumber, salt, signature } = challenge.altcha;
  return { provider: 'altcha', challenge: { algorithm, challenge: puzzle, maxnumber: maxNumber, salt, signature } };
}

export const clearanceHeaders = (reply: SolveChallengeResponse, ctx: Context) => ({
  ...NO_STORE,
  'Set-Cookie': cookie(ctx, CLEARANCE_COOKIE, reply.clearance, reply.maxAgeSeconds),
});

/** The session of a successful sign-in or sign-up; a refused one is its 401 or 429. */
export function signedIn(reply: SignInResponse | SignUpResponse, ctx: Context): Session {
  if (reply.outcome?.$case !== 'session') throw httpErrorFromDenial(ctx, reply.outcome?.denial, 0);
  return reply.outcome.session;
}

/** Signed in: the session cookie (the body carries the account and the CSRF token). */
export function signedInHeaders(reply: SignInResponse | SignUpResponse, ctx: Context): Record<string, string> {
  const session = signedIn(reply, ctx);
  return { ...NO_STORE, 'Set-Cookie': cookie(ctx, SESSION_COOKIE, session.token, session.maxAgeSeconds) };
}

export const presentSignedOut = () => ({ signedOut: true });

export const signedOutHeaders = (_reply: unknown, ctx: Context) => ({
  'Set-Cookie': cookie(ctx, SESSION_COOKIE, '', 0),
});

/** A new key: its record, and the full key this once. */
export const presentNewKey = (reply: CreateApiKeyResponse) => ({ ...reply.key, key: reply.secret });

export const presentRevokedKey = (reply: RevokeApiKeyResponse) => reply.key;

/** Billing keeps epoch milliseconds; the spec's times are ISO 8601. */
export const presentUsage = (reply: ListUsageResponse) => ({
  usage: reply.entries.map(({ operation, credits, atMs, target }) => ({
    operation,
    credits,
    at: new Date(Number(atMs)).toISOString(),
    target: target ?? null,
  })),
});

/** The outcome as its REST value (the proto enum's name). */
export function presentStripeEvent(reply: ApplyStripeEventResponse) {
  const outcome = Object.entries(payments.StripeEventOutcome.values).find(([, value]) => value === reply.outcome)?.[0];
  return { ...reply, outcome: outcome as keyof typeof payments.StripeEventOutcome.values };
}
