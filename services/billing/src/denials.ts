import { type Denial, Refusal } from '@webutil/proto/webutil/billing/v1/billing';

/** Refusals the edge turns into 401/403/402/429; each carries a machine reason and a message. */
export const unauthenticated = (reason: string, message: string): Denial => ({
  refusal: Refusal.REFUSAL_UNAUTHENTICATED,
  reason,
  message,
});

export const forbidden = (reason: string, message: string): Denial => ({
  refusal: Refusal.REFUSAL_FORBIDDEN,
  reason,
  message,
});

export const rateLimited = (retryAfterSeconds: number, message: string): Denial => ({
  refusal: Refusal.REFUSAL_RATE_LIMITED,
  reason: 'RATE_LIMITED',
  message,
  retryAfterSeconds,
});

export const insufficientCredits = (credits: number, remaining: number, anonymous: boolean): Denial => ({
  refusal: Refusal.REFUSAL_INSUFFICIENT_CREDITS,
  reason: 'INSUFFICIENT_CREDITS',
  message:
    `This request needs ${credits} credit${credits === 1 ? '' : 's'} and ${remaining} remain. ` +
    (anonymous
      ? 'Sign up for a plan, or wait for the cycle to renew: the anonymous allowance renews daily at 00:00 UTC.'
      : 'Buy a top-up pack or wait for the cycle to renew.'),
  remaining,
});

/** An API key's own credit limit for the cycle would be passed (402, like a short balance). */
export const keyCreditLimit = (credits: number, spent: number, limit: number): Denial => ({
  refusal: Refusal.REFUSAL_INSUFFICIENT_CREDITS,
  reason: 'KEY_CREDIT_LIMIT',
  message:
    `This request needs ${credits} credit${credits === 1 ? '' : 's'}; this API key may spend ${limit} per cycle ` +
    `and has spent ${spent}. Raise its limit by creating a new key, or wait for the cycle to renew.`,
});
