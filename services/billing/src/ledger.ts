import { randomUUID } from 'node:crypto';
import type { Clock } from './clock.js';
import { creditsSpent } from './credit-metrics.js';
import { type AnonymousAllowance, cycleEndAfter, PLANS, utcDay } from './plans.js';
import type { Account, BillingStore, Reservation } from './stores/store.js';

/** Whose credits a call spends: an account's (sessions, API keys) or an anonymous subject's day. */
export type Payer = { kind: 'account'; account: Account } | { kind: 'anonymous'; subject: string };

export interface Balance {
  /** Credits per cycle (accounts) or per UTC day (anonymous). */
  limit: number;
  /** Cycle credits left plus top-ups, or the day's allowance left. */
  remaining: number;
}

export type ReserveResult = { reservationId: string; balance: Balance } | { short: Balance };

export interface LedgerOptions {
  anonymous: AnonymousAllowance;
  /** How long past its route's deadline an unsettled hold lives before its credits return. */
  reservationGraceMs: number;
}

/**
 * Credits: holds before a call, spend or refund after it, expiry of holds nobody settled (an edge
 * that died mid-call), monthly cycle renewal and the anonymous daily allowance.
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

  /** The account as of now: a cycle that has ended is renewed (once, even when racing) first. */
  async current(account: Account): Promise<Account> {
    const now = this.clock();
    if (now < account.cycleEnd) return account;
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

  async reserve(payer: Payer, credits: number, holdMs: number): Promise<ReserveResult> {
    const hold = { id: randomUUID(), expiresAt: this.clock() + holdMs + this.options.reservationGraceMs };
    let reservation: Reservation | undefined;
    if (payer.kind === 'account') {
      const account = await this.current(payer.account);
      reservation = await this.store.reserveCredits(account.id, credits, hold);
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
    return reservation ? { reservationId: reservation.id, balance } : { short: balance };
  }

  /**
   * Spends or refunds a hold; false when it was already settled or had expired. The balance is
   * not read again: the hold already took the credits, and the edge knows what a refund returns.
   * An account's spent call is recorded under `operation` for its recent usage.
   */
  async settle(reservationId: string, outcome: 'spend' | 'refund', operation = ''): Promise<boolean> {
    const reservation = await this.store.settle(reservationId, outcome);
    if (!reservation) return false;
    if (outcome === 'spend') {
      const credits = reservation.fromCycle + reservation.fromTopUp;
      creditsSpent.inc(credits);
      if (reservation.accountId)
        await this.store.addUsage({ accountId: reservation.accountId, operation, credits, at: this.clock() });
    }
    return true;
  }

  /** An account's most recent spent calls, newest first. */
  recentUsage(account: Account, limit = 50) {
    return this.store.recentUsage(account.id, limit);
  }

  /** Refunds holds whose time ran out; returns how many. */
  async expireHolds(batch = 100): Promise<number> {
    let refunded = 0;
    for (;;) {
      const expired = await this.store.expiredReservations(this.clock(), batch);
      for (const reservation of expired) {
        if (await this.store.settle(reservation.id, 'refund')) refunded++;
      }
      if (expired.length < batch) return refunded;
    }
  }

  /** Today's (UTC) allowance counter of an anonymous subject; it outlives the day by a day. */
  private allowanceKey(subject: string): { key: string; expiresAt: number } {
    const { day, endsAt } = utcDay(this.clock());
    return { key: `allowance|${day}|${subject}`, expiresAt: endsAt + 86_400_000 };
  }
}
