/**
 * What a Stripe subscription, as Stripe tells it now, does to the account that pays for it
 * (docs/decisions/0411-subscription-cycles.md). Pure: the caller re-reads the subscription from
 * Stripe and applies the answer in one store change, keyed so each period's cycle starts once.
 */
import { PLAN_NAMES, PLANS, type PlanName } from '../plans.js';
import type { Account } from '../stores/store.js';
import type { PaidPlan } from './catalogue.js';

/** A subscription as billing needs it: what it sells, its paid period, whether it is ending. */
export interface SubscriptionState {
  id: string;
  /** Stripe's status: active, trialing, past_due, canceled, unpaid, incomplete, incomplete_expired, paused. */
  status: string;
  /** The plan its price sells here; undefined for a price this deployment does not sell. */
  plan: PaidPlan | undefined;
  /** The current period, epoch milliseconds. */
  periodStart: number;
  periodEnd: number;
  cancelAtPeriodEnd: boolean;
}

/** The account's plan as it stands, as far as a subscription is concerned. */
export type HeldPlan = Pick<Account, 'plan' | 'cycleEnd' | 'creditsPerCycle' | 'paidThrough' | 'cycleCredits'>;

/**
 * The change to make: `cycle`, a new plan and cycle (first payment, a renewal, or a downgrade once its
 * period has come); `upgrade`, a higher plan at once in the same cycle, adding the allowances'
 * difference; `paidThrough`, until when the paid plan holds (undefined: leave it). `key` names the
 * credit change so it happens once however many events ask for it.
 */
export interface SubscriptionChange {
  cycle?: { plan: PaidPlan; cycleAnchor: number; cycleEnd: number; cycleCredits: number };
  upgrade?: { plan: PaidPlan; addCycleCredits: number };
  paidThrough?: number | null;
  key?: string;
}

/** Statuses in which the current period is paid for. */
const PAID = new Set(['active', 'trialing']);
/** Statuses after which the subscription will not be paid again. */
const ENDED = new Set(['canceled', 'unpaid', 'incomplete_expired']);

export function planRank(plan: PlanName): number {
  return PLAN_NAMES.indexOf(plan);
}

/**
 * Stripe's word on a subscription, as a change of the account:
 * - paid (active, trialing): a period past the account's cycle (or the first paid one) starts a
 *   cycle of its plan; a higher plan within the cycle applies at once; a lower one waits for the
 *   next period. The plan then holds through the period's end plus `graceMs` (a renewal has that
 *   long to be paid), or only to the period's end when it is set to cancel;
 * - past_due (a failed renewal): nothing changes; the plan holds through the grace it was given;
 * - ended (canceled, unpaid, expired): the plan holds to the end of the cycle already paid for,
 *   and no later than now.
 */
export function subscriptionChange(
  sub: SubscriptionState,
  account: HeldPlan,
  graceMs: number,
  now: number,
): SubscriptionChange {
  if (ENDED.has(sub.status)) {
    if (account.paidThrough === null) return {};
    return { paidThrough: Math.min(account.paidThrough, Math.max(account.cycleEnd, now)) };
  }
  if (!PAID.has(sub.status) || !sub.plan) return {};
  const paidThrough = sub.cancelAtPeriodEnd ? sub.periodEnd : sub.periodEnd + graceMs;
  const allowance = (plan: PlanName) => account.creditsPerCycle ?? PLANS[plan].creditsPerCycle;
  const startsCycle = account.paidThrough === null || sub.periodEnd > account.cycleEnd;
  if (startsCycle)
    return {
      cycle: {
        plan: sub.plan,
        cycleAnchor: sub.periodStart,
        cycleEnd: sub.periodEnd,
        cycleCredits: allowance(sub.plan),
      },
      paidThrough,
      key: `cycle:${sub.id}:${sub.periodEnd}`,
    };
  if (planRank(sub.plan) > planRank(account.plan))
    return {
      upgrade: { plan: sub.plan, addCycleCredits: Math.max(0, allowance(sub.plan) - allowance(account.plan)) },
      paidThrough,
      key: `upgrade:${sub.id}:${sub.periodEnd}:${sub.plan}`,
    };
  return { paidThrough };
}

/**
 * Credits one refund of a pack takes back: the refunded share of the pack's credits (rounded down).
 * The store takes them from the top-ups left, never below zero: what was spent stays spent.
 */
export function refundedCredits(packCredits: number, amountPaid: number, amountRefunded: number): number {
  if (amountPaid <= 0 || amountRefunded <= 0) return 0;
  return Math.floor(packCredits * Math.min(1, amountRefunded / amountPaid));
}
