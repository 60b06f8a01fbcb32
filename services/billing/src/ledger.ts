import { randomUUID } from 'node:crypto';
import type { Clock } from './clock.js';
import { creditsSpent, expiredHoldCredits, expiredHolds } from './credit-metrics.js';
import { type AnonymousAllowance, addMonths, cycleEndAfter, PLANS, utcDay } from './plans.js';
import type { Account, BillingStore, KeyBudget, Reservation, UsageRecord } from './stores/store.js';
import { type DayUsage, dailySeries, lastDays } from './usage-days.js';

/** Whose credits a call spends: an account's (sessions, API keys) or an anonymous subject's day. */
export type Payer = { kind: 'account'; account: Account } | { kind: 'anonymous'; subject: string };

export interface Balance {
  /** Credits per cycle (accounts) or per UTC day (anonymous). */
  limit: number;
  /** Cycle credits left plus top-ups, or the day's allowance left. */
  remaining: number;
}

/** A call a hold paid for: the route's operation, its credits, and what it worked on. */
export interface SpentCall {
  operation: string;
  credits: number;
  target?: string;
  /** A call paid from a lease: the hold spends it once, however often it is settled. */
  callId?: string;
}

/**
 * A settlement's answer: `spent`, its calls are spent (now, or by an earlier settlement of the same
 * calls); `expired`, it listed calls but the hold is gone unspent (expired, refunded, unknown);
 * `nothing`, it listed no calls. `ended`: this settlement ended the hold.
 */
export interface Settled {
  outcome: 'spent' | 'expired' | 'nothing';
  ended: boolean;
}

/**
 * How long a settled hold is remembered: longer than an edge retries a settlement (seconds), so a
 * retry whose first try landed is told its calls are spent rather than that the hold is gone.
 */
export const SETTLED_REMEMBERED_MS = 60_000;

/** `held`: the credits the hold took (a retried authorization finds the hold its first try took). */
export type ReserveResult =
  | { reservationId: string; held: number; balance: Balance }
  | { short: Balance }
  /** The API key's own limit for the cycle would be passed: `spent` so far, of `limit`. */
  | { keyShort: { spent: number; limit: number }; balance: Balance };

/** A hold name the edge may choose (AuthorizeRequest.reservation_id); any other is replaced by a UUID. */
const HOLD_NAME = /^[A-Za-z0-9_-]{8,64}$/;

/** Holds the expiry sweep refunded: how many, and their credits. */
export interface ExpiredRefunds {
  holds: number;
  credits: number;
}

export interface LedgerOptions {
  anonymous: AnonymousAllowance;
  /** How long past its route's deadline an unsettled hold lives before its credits return. */
  reservationGraceMs: number;
}

/**
 * Credits: holds before a call (or a lease of calls), settled after it (what the calls spent is
 * kept, the rest goes back), expiry of holds nobody settled (an edge that died mid-call), monthly
 * cycle renewal and the anonymous daily allowance.
 */
export class Ledger {
  constructor(
    private readonly store: BillingStore,
    private readonly clock: Clock,
    private readonly options: LedgerOptions,
  ) {}

  creditsPerCycle(account: Account): number {
    return account.creditsPerCycle ?? PLANS[account.plan].creditsPerCycle;
  }

  /**
   * The account as of now: a paid plan whose time ran out ends (the account is on Free), and a cycle
   * that has ended is renewed (once, even when racing) first; a paid plan's cycles start only when
   * its provider says the period is paid (decision 0411), so its ended cycle waits.
   */
  async current(account: Account): Promise<Account> {
    const now = this.clock();
    if (account.paidThrough !== null && now >= account.paidThrough) {
      await this.store.endPaidPlan(account.id, account.paidThrough, {
        plan: 'FREE',
        creditsPerCycle: account.creditsPerCycle,
        requestsPerMinute: account.requestsPerMinute,
        cycleAnchor: now,
        cycleEnd: addMonths(now, 1),
        cycleCredits: account.creditsPerCycle ?? PLANS.FREE.creditsPerCycle,
      });
      return (await this.store.accountById(account.id)) ?? account;
    }
    if (now < account.cycleEnd || account.paidThrough !== null) return account;
    await this.store.renewCycle(account.id, account.cycleEnd, {
      cycleEnd: cycleEndAfter(account.cycleAnchor, now),
      cycleCredits: this.creditsPerCycle(account),
    });
    return (await this.store.accountById(account.id)) ?? account;
  }

  /** Read fresh from the store: the payer's account object may predate a hold or a refund. */
  async balance(payer: Payer): Promise<Balance> {
    if (payer.kind === 'account') {
      const account = await this.current((await this.store.accountById(payer.account.id)) ?? payer.account);
      return { limit: this.creditsPerCycle(account), remaining: account.cycleCredits + account.topUpCredits };
    }
    const used = await this.store.counter(this.allowanceKey(payer.subject).key);
    const limit = this.options.anonymous.creditsPerDay;
    return { limit, remaining: Math.max(0, limit - used) };
  }

  /**
   * `key`: an API key's call, counted toward its spend this cycle and held to its limit. `name`:
   * the edge's name for the hold, so a retry finds it.
   */
  async reserve(payer: Payer, credits: number, holdMs: number, key?: KeyBudget, name?: string): Promise<ReserveResult> {
    const id = name && HOLD_NAME.test(name) ? name : randomUUID();
    const hold = { id, expiresAt: this.clock() + holdMs + this.options.reservationGraceMs };
    let reservation: Reservation | undefined;
    if (payer.kind === 'account') {
      const account = await this.current(payer.account);
      const held = await this.store.reserveCredits(account.id, credits, hold, key);
      if (held && 'keyLimited' in held) {
        const limit = key?.limit ?? 0;
        return { keyShort: { spent: held.keyLimited.spent, limit }, balance: await this.balance(payer) };
      }
      reservation = held;
    } else {
      const { key, expiresAt } = this.allowanceKey(payer.subject);
      reservation = await this.store.reserveAllowance(
        key,
        credits,
        this.options.anonymous.creditsPerDay,
        expiresAt,
        hold,
      );
    }
    const balance = await this.balance(payer);
    return reservation
      ? { reservationId: reservation.id, held: reservation.fromCycle + reservation.fromTopUp, balance }
      : { short: balance };
  }

  /**
   * Ends a hold: the credits of the calls it paid for (none for a failed call; every call served,
   * for a lease) are spent, the rest go back; with `keepOpen` (a lease's partial settlement) the
   * calls are spent and the rest stays held. A named call the hold spent before is not spent
   * again. A sum larger than the hold spends only the hold. The balance is not read again: the
   * hold already took the credits, and the edge knows what it left unspent. An account's spent
   * calls are recorded for its recent usage: at once, or into `usage` for the caller to record
   * together with other settlements' (recordUsage).
   */
  async settle(
    reservationId: string,
    spent: readonly SpentCall[],
    keepOpen = false,
    usage?: UsageRecord[],
  ): Promise<Settled> {
    const calls = spent.filter((call) => call.credits > 0);
    const listed = calls.length > 0;
    const result = await this.store.settleCalls(reservationId, {
      calls: calls.map(({ credits, callId }) => (callId === undefined ? { credits } : { credits, callId })),
      keepOpen,
      rememberUntil: this.clock() + SETTLED_REMEMBERED_MS,
    });
    if (!result) return { outcome: listed ? 'expired' : 'nothing', ended: false };
    if ('settledBefore' in result) {
      const spentBefore = result.settledBefore.spentCredits > 0;
      return { outcome: !listed ? 'nothing' : spentBefore ? 'spent' : 'expired', ended: false };
    }
    const { settled: reservation, fresh } = result;
    const charged = calls.filter((_, i) => fresh[i]);
    const asked = charged.reduce((sum, call) => sum + call.credits, 0);
    const total = Math.min(asked, reservation.fromCycle + reservation.fromTopUp);
    if (total > 0) creditsSpent.inc(total);
    const { accountId } = reservation;
    if (accountId && total > 0) {
      const at = this.clock();
      const records: UsageRecord[] = [];
      // Calls past the hold were not paid for; the one it ran out on shows what it did pay.
      let unrecorded = total;
      for (const { operation, credits, target } of charged) {
        if (unrecorded === 0) break;
        const paid = Math.min(credits, unrecorded);
        records.push({ accountId, operation, credits: paid, at, ...(target ? { target } : {}) });
        unrecorded -= paid;
      }
      if (usage) usage.push(...records);
      else await this.store.addUsage(records);
    }
    return { outcome: listed ? 'spent' : 'nothing', ended: !keepOpen };
  }

  /** Records the spent calls settle() collected (one write for a batch of settlements). */
  async recordUsage(usage: readonly UsageRecord[]): Promise<void> {
    if (usage.length > 0) await this.store.addUsage(usage);
  }

  /** Credits each of the account's keys has spent (and holds) this cycle. */
  async keySpend(account: Account): Promise<Map<string, number>> {
    const current = await this.current(account);
    return this.store.keySpend(current.id, current.cycleEnd);
  }

  /** An account's most recent spent calls, newest first. */
  recentUsage(account: Account, limit = 50) {
    return this.store.recentUsage(account.id, limit);
  }

  /**
   * An account's spent credits per UTC day and operation over its last `days` days, today the
   * last; none (a sandbox, which spends nothing): the same days at zero.
   */
  async usageByDay(accountId: string | undefined, days: number): Promise<DayUsage[]> {
    const { from, to } = lastDays(this.clock(), days);
    const rows = accountId === undefined ? [] : await this.store.usageByDay(accountId, from, to);
    return dailySeries(rows, from, days);
  }

  /**
   * Refunds holds whose time ran out (counted in webutil_billing_expired_holds_total and its
   * credits): each is a call whose edge never settled it (an edge that died, or a grant that never
   * reached it and was never released).
   */
  async expireHolds(batch = 100): Promise<ExpiredRefunds> {
    const refunded = { holds: 0, credits: 0 };
    for (;;) {
      const expired = await this.store.expiredReservations(this.clock(), batch);
      for (const reservation of expired) {
        if (!(await this.store.settle(reservation.id, 0))) continue;
        refunded.holds++;
        refunded.credits += reservation.fromCycle + reservation.fromTopUp;
      }
      if (expired.length < batch) break;
    }
    if (refunded.holds > 0) {
      expiredHolds.inc(refunded.holds);
      expiredHoldCredits.inc(refunded.credits);
    }
    return refunded;
  }

  /** Today's (UTC) allowance counter of an anonymous subject; it outlives the day by a day. */
  private allowanceKey(subject: string): { key: string; expiresAt: number } {
    const { day, endsAt } = utcDay(this.clock());
    return { key: `allowance|${day}|${subject}`, expiresAt: endsAt + 86_400_000 };
  }
}
