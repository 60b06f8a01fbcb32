import { counter } from '@webutil/kit';

/** Credits of committed calls (Prometheus). */
export const creditsSpent = counter({ name: 'webutil_credits_spent_total', help: 'Credits spent by committed calls' });

/** Credits of metered calls billing refused, by the refusal's reason (Prometheus). */
export const creditsRefused = counter({
  name: 'webutil_credits_refused_total',
  help: 'Credits asked for by metered calls that billing refused, by reason',
  labelNames: ['reason'],
});
