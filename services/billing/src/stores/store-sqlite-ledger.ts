import type Database from 'better-sqlite3';
import {
  type DailyUsage,
  freshCalls,
  type Hold,
  type HoldSpend,
  holdReleased,
  type KeyBudget,
  type KeyLimited,
  type KeyLimitedIf,
  keptOpen,
  type LedgerStore,
  type Reservation,
  type SettleResult,
  type Sweeps,
  settleCredits,
  type UsageRecord,
  unusedCredits,
} from './store.js';
import { accountStatements } from './store-sqlite-accounts.js';

const DAY_MS = 86_400_000;

interface ReservationRow {
  id: string;
  account_id: string | null;
  allowance_key: string | null;
  cycle_end: number | null;
  from_cycle: number;
  from_top_up: number;
  expires_at: number;
  key_id: string | null;
  /** The named calls a lease's hold has spent (JSON array). */
  spent_calls: string | null;
  /** What its partial settlements spent. */
  partly_spent: number | null;
  /** A settled hold remembered (until expires_at): what it spent. Null while it holds credits. */
  settled_spent: number | null;
}

/** A hold found under a retried authorization's name, unless it has been settled since. */
const liveHold = (r: ReservationRow): Reservation => {
  if (r.settled_spent !== null) throw holdReleased();
  return toReservation(r);
};

const toReservation = (r: ReservationRow): Reservation => ({
  id: r.id,
  accountId: r.account_id,
  allowanceKey: r.allowance_key,
  keyId: r.key_id,
  cycleEnd: r.cycle_end,
  fromCycle: r.from_cycle,
  fromTopUp: r.from_top_up,
  expiresAt: r.expires_at,
});

/**
 * Credit holds, key spend and usage in the embedded store. Each change of a hold and the balance it
 * came from is one IMMEDIATE transaction.
 */
export function sqliteLedger(db: Database.Database): LedgerStore & Sweeps {
  const q = {
    accountById: accountStatements(db).accountById,
    takeCredits: db.prepare(
      `UPDATE accounts SET cycle_credits = cycle_credits - @fromCycle, top_up_credits = top_up_credits - @fromTopUp
       WHERE id = @id AND cycle_credits = @cycleCredits AND top_up_credits >= @fromTopUp`,
    ),
    takeAllowance: db.prepare<{ key: string; credits: number; max: number; expiresAt: number }, { value: number }>(
      `INSERT INTO counters (key, value, expires_at) VALUES (@key, @credits, @expiresAt)
       ON CONFLICT (key) DO UPDATE SET value = value + excluded.value WHERE value + excluded.value <= @max
       RETURNING value`,
    ),
    insertReservation: db.prepare(
      `INSERT INTO reservations
         (id, account_id, allowance_key, cycle_end, from_cycle, from_top_up, expires_at, key_id)
       VALUES (@id, @accountId, @allowanceKey, @cycleEnd, @fromCycle, @fromTopUp, @expiresAt, @keyId)`,
    ),
    reservationById: db.prepare<[string], ReservationRow>('SELECT * FROM reservations WHERE id = ?'),
    deleteReservation: db.prepare('DELETE FROM reservations WHERE id = ? AND settled_spent IS NULL'),
    rememberSettled: db.prepare(
      `UPDATE reservations SET settled_spent = @spent, expires_at = @until
       WHERE id = @id AND settled_spent IS NULL`,
    ),
    spendKeptOpen: db.prepare(
      `UPDATE reservations SET from_cycle = @fromCycle, from_top_up = @fromTopUp, spent_calls = @spentCalls,
         partly_spent = coalesce(partly_spent, 0) + @spent
       WHERE id = @id AND settled_spent IS NULL`,
    ),
    refundAccount: db.prepare(
      `UPDATE accounts SET cycle_credits = cycle_credits + CASE WHEN cycle_end = @cycleEnd THEN @toCycle ELSE 0 END,
         top_up_credits = top_up_credits + @toTopUp WHERE id = @id`,
    ),
    refundAllowance: db.prepare('UPDATE counters SET value = max(0, value - ?) WHERE key = ?'),
    keySpendOf: db.prepare<[string], { cycle_end: number; credits: number }>(
      'SELECT cycle_end, credits FROM key_spend WHERE key_id = ?',
    ),
    setKeySpend: db.prepare(
      `INSERT INTO key_spend (key_id, account_id, cycle_end, credits) VALUES (@keyId, @accountId, @cycleEnd, @credits)
       ON CONFLICT (key_id) DO UPDATE SET cycle_end = excluded.cycle_end, credits = excluded.credits`,
    ),
    refundKeySpend: db.prepare(
      'UPDATE key_spend SET credits = max(0, credits - @credits) WHERE key_id = @keyId AND cycle_end = @cycleEnd',
    ),
    keySpend: db.prepare<[string, number], { key_id: string; credits: number }>(
      'SELECT key_id, credits FROM key_spend WHERE account_id = ? AND cycle_end = ?',
    ),
    expiredReservations: db.prepare<[number, number], ReservationRow>(
      'SELECT * FROM reservations WHERE expires_at <= ? AND settled_spent IS NULL ORDER BY expires_at LIMIT ?',
    ),
    insertUsage: db.prepare(
      `INSERT INTO usage (account_id, operation, credits, at, target)
       VALUES (@accountId, @operation, @credits, @at, @target)`,
    ),
    recentUsage: db.prepare<[string, number], UsageRecord>(
      `SELECT account_id AS accountId, operation, credits, at, target FROM usage
       WHERE account_id = ? ORDER BY at DESC, rowid DESC LIMIT ?`,
    ),
    usageByDay: db.prepare<[string, number, number], DailyUsage>(
      `SELECT (at / ${DAY_MS}) * ${DAY_MS} AS day, operation, SUM(credits) AS credits, COUNT(*) AS calls FROM usage
       WHERE account_id = ? AND at >= ? AND at < ? GROUP BY day, operation ORDER BY day, operation`,
    ),
    sweepSettled: db.prepare('DELETE FROM reservations WHERE settled_spent IS NOT NULL AND expires_at <= ?'),
  };
  /** Transactions built once, not per call. */
  const tx = {
    reserveCredits: db.transaction(
      (accountId: string, credits: number, hold: Hold, key?: KeyBudget): Reservation | KeyLimited | undefined => {
        // A retried authorization: the hold its first try took (one released since is gone: refused).
        const existing = q.reservationById.get(hold.id);
        if (existing) return liveHold(existing);
        const row = q.accountById.get(accountId);
        if (!row || row.cycle_credits + row.top_up_credits < credits) return undefined;
        let keySpent = 0;
        if (key) {
          const spend = q.keySpendOf.get(key.id);
          keySpent = spend && spend.cycle_end === row.cycle_end ? spend.credits : 0;
          if (key.limit !== null && keySpent + credits > key.limit) return { keyLimited: { spent: keySpent } };
        }
        const fromCycle = Math.min(row.cycle_credits, credits);
        const taken = { id: accountId, cycleCredits: row.cycle_credits, fromCycle, fromTopUp: credits - fromCycle };
        if (q.takeCredits.run(taken).changes !== 1) return undefined;
        const reservation: Reservation = {
          ...hold,
          accountId,
          allowanceKey: null,
          keyId: key?.id ?? null,
          cycleEnd: row.cycle_end,
          fromCycle,
          fromTopUp: taken.fromTopUp,
        };
        q.insertReservation.run(reservation);
        if (key) q.setKeySpend.run({ keyId: key.id, accountId, cycleEnd: row.cycle_end, credits: keySpent + credits });
        return reservation;
      },
    ),
    reserveAllowance: db.transaction(
      (key: string, credits: number, max: number, expiresAt: number, hold: Hold): Reservation | undefined => {
        const existing = q.reservationById.get(hold.id);
        if (existing) return liveHold(existing);
        const taken = q.takeAllowance.get({ key, credits, max, expiresAt });
        if (!taken) return undefined;
        const reservation: Reservation = {
          ...hold,
          accountId: null,
          allowanceKey: key,
          keyId: null,
          cycleEnd: null,
          fromCycle: credits,
          fromTopUp: 0,
        };
        q.insertReservation.run(reservation);
        return reservation;
      },
    ),
    // A lease's calls in one commit, not one each.
    addUsage: db.transaction((records: readonly UsageRecord[]) => {
      for (const record of records) q.insertUsage.run({ ...record, target: record.target ?? null });
    }),
    settle: db.transaction((reservationId: string, spend: HoldSpend): SettleResult | undefined => {
      const row = q.reservationById.get(reservationId);
      if (!row) return undefined;
      if (row.settled_spent !== null) return { settledBefore: { spentCredits: row.settled_spent } };
      const reservation = toReservation(row);
      const spentBefore = row.spent_calls === null ? [] : (JSON.parse(row.spent_calls) as string[]);
      const { fresh, credits: spentCredits } = freshCalls(spend, spentBefore);
      if (spend.keepOpen) {
        const named = spend.calls.flatMap(({ callId }, i) => (fresh[i] && callId !== undefined ? [callId] : []));
        const spentCalls = JSON.stringify([...spentBefore, ...named]);
        const left = keptOpen(reservation, spentCredits);
        const spent = reservation.fromCycle + reservation.fromTopUp - left.fromCycle - left.fromTopUp;
        q.spendKeptOpen.run({ id: reservationId, ...left, spentCalls, spent });
        return { settled: reservation, fresh };
      }
      const spent = Math.min(spentCredits, reservation.fromCycle + reservation.fromTopUp);
      const ended =
        spend.rememberUntil === undefined
          ? q.deleteReservation.run(reservationId)
          : q.rememberSettled.run({
              id: reservationId,
              spent: spent + (row.partly_spent ?? 0),
              until: spend.rememberUntil,
            });
      if (ended.changes !== 1) return undefined;
      const { toCycle, toTopUp } = unusedCredits(reservation, spentCredits);
      if (toCycle + toTopUp > 0) {
        if (reservation.accountId) {
          q.refundAccount.run({ id: reservation.accountId, cycleEnd: reservation.cycleEnd, toCycle, toTopUp });
          // The key's spend of the hold's cycle; a key spend of a newer cycle is left alone.
          if (reservation.keyId)
            q.refundKeySpend.run({
              keyId: reservation.keyId,
              cycleEnd: reservation.cycleEnd,
              credits: toCycle + toTopUp,
            });
        } else if (reservation.allowanceKey) {
          q.refundAllowance.run(toCycle, reservation.allowanceKey);
        }
      }
      return { settled: reservation, fresh };
    }),
  };

  const ledger: LedgerStore & Sweeps = {
    async reserveCredits<K extends KeyBudget | undefined = undefined>(
      accountId: string,
      credits: number,
      hold: Hold,
      key?: K,
    ): Promise<Reservation | KeyLimitedIf<K> | undefined> {
      return tx.reserveCredits.immediate(accountId, credits, hold, key) as Reservation | KeyLimitedIf<K> | undefined;
    },

    async reserveAllowance(
      allowanceKey: string,
      credits: number,
      max: number,
      allowanceExpiresAt: number,
      hold: Hold,
    ): Promise<Reservation | undefined> {
      if (credits > max) return undefined;
      return tx.reserveAllowance.immediate(allowanceKey, credits, max, allowanceExpiresAt, hold);
    },

    async settle(reservationId: string, spentCredits: number): Promise<Reservation | undefined> {
      return settleCredits(ledger, reservationId, spentCredits);
    },

    async settleCalls(reservationId: string, spend: HoldSpend): Promise<SettleResult | undefined> {
      return tx.settle.immediate(reservationId, spend);
    },

    async expiredReservations(now: number, limit: number): Promise<Reservation[]> {
      return q.expiredReservations.all(now, limit).map(toReservation);
    },

    async keySpend(accountId: string, cycleEnd: number): Promise<Map<string, number>> {
      return new Map(q.keySpend.all(accountId, cycleEnd).map((r) => [r.key_id, r.credits]));
    },

    async addUsage(records: readonly UsageRecord[]): Promise<void> {
      tx.addUsage(records);
    },

    async recentUsage(accountId: string, limit: number): Promise<UsageRecord[]> {
      // A call that named no target has a NULL column; the record has no field.
      return q.recentUsage
        .all(accountId, limit)
        .map(({ target, ...record }) => (target ? { ...record, target } : record));
    },

    async usageByDay(accountId: string, from: number, to: number): Promise<DailyUsage[]> {
      return q.usageByDay.all(accountId, from, to);
    },

    async sweep(now: number): Promise<void> {
      q.sweepSettled.run(now);
    },
  };
  return ledger;
}
