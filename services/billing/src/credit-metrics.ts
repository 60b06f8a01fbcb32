import { counter } from '@webutil/kit';

/** Credits of committed calls (Prometheus). */
export const creditsSpent = counter({ name: 'webutil_credits_spent_total', help: 'Credits spent by committed calls' });

/** Credits of metered calls billing refused, by the refusal's reason (Prometheus). */
export const creditsRefused = counter({
  name: 'webutil_credits_refused_total',
  help: 'Credits asked for by metered calls that billing refused, by reason',
  labelNames: ['reason'],
});

/** Holds nobody settled before they expired, refunded by the sweep (Prometheus). */
export const expiredHolds = counter({
  name: 'webutil_billing_expired_holds_total',
  help: 'Holds refunded by the expiry sweep because no edge settled them',
});

/** Their credits. */
export const expiredHoldCredits = counter({
  name: 'webutil_billing_expired_hold_credits_total',
  help: 'Credits returned by the expiry sweep from holds no edge settled',
});
