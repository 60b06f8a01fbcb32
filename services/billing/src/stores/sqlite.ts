import { type AddedColumn, setUpSqlite } from '@webutil/kit';
import Database from 'better-sqlite3';
import type { PlanName } from '../plans.js';
import {
  type Account,
  type ApiKeyRecord,
  type BillingStore,
  EmailTakenError,
  freshCalls,
  type Hold,
  type HoldSpend,
  holdReleased,
  type IdempotencyClaim,
  type IdempotencyRecord,
  type IdempotentAnswer,
  type KeyBudget,
  type KeyLimited,
  type KeyLimitedIf,
  type KeyMode,
  keptOpen,
  type PaymentChange,
  type PlanChange,
  type Reservation,
  type SessionRecord,
  type SettleResult,
  settleCredits,
  type UsageRecord,
  unusedCredits,
} from './store.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS accounts (
  id TEXT PRIMARY KEY,
  email TEXT NOT NULL UNIQUE,
  password_hash TEXT,
  plan TEXT NOT NULL,
  credits_per_cycle INTEGER,
  requests_per_minute INTEGER,
  cycle_anchor INTEGER NOT NULL,
  cycle_end INTEGER NOT NULL,
  cycle_credits INTEGER NOT NULL CHECK (cycle_credits >= 0),
  top_up_credits INTEGER NOT NULL CHECK (top_up_credits >= 0),
  created_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS api_keys (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  name TEXT NOT NULL,
  prefix TEXT NOT NULL,
  hash TEXT NOT NULL UNIQUE,
  created_at INTEGER NOT NULL,
  last_used_at INTEGER,
  revoked_at INTEGER,
  credit_limit INTEGER,
  expires_at INTEGER,
  allowed_operations TEXT,
  mode TEXT NOT NULL DEFAULT 'live'
);
CREATE INDEX IF NOT EXISTS api_keys_account ON api_keys (account_id);
CREATE TABLE IF NOT EXISTS sessions (
  id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  csrf_token TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_expiry ON sessions (expires_at);
CREATE INDEX IF NOT EXISTS sessions_account ON sessions (account_id);
CREATE TABLE IF NOT EXISTS reservations (
  id TEXT PRIMARY KEY,
  account_id TEXT,
  allowance_key TEXT,
  cycle_end INTEGER,
  from_cycle INTEGER NOT NULL,
  from_top_up INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  key_id TEXT
);
CREATE INDEX IF NOT EXISTS reservations_expiry ON reservations (expires_at);
CREATE TABLE IF NOT EXISTS key_spend (
  key_id TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  cycle_end INTEGER NOT NULL,
  credits INTEGER NOT NULL CHECK (credits >= 0)
);
CREATE INDEX IF NOT EXISTS key_spend_account ON key_spend (account_id);
CREATE TABLE IF NOT EXISTS counters (
  key TEXT PRIMARY KEY,
  value INTEGER NOT NULL CHECK (value >= 0),
  expires_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS counters_expiry ON counters (expires_at);
CREATE TABLE IF NOT EXISTS usage (
  account_id TEXT NOT NULL,
  operation TEXT NOT NULL,
  credits INTEGER NOT NULL,
  at INTEGER NOT NULL,
  target TEXT
);
CREATE INDEX IF NOT EXISTS usage_account ON usage (account_id, at DESC);
CREATE TABLE IF NOT EXISTS idempotency (
  id TEXT PRIMARY KEY,
  fingerprint TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  status INTEGER,
  body TEXT,
  headers TEXT
);
CREATE INDEX IF NOT EXISTS idempotency_expiry ON idempotency (expires_at);
CREATE TABLE IF NOT EXISTS secrets (
  name TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS payment_customers (
  account_id TEXT PRIMARY KEY,
  customer_id TEXT NOT NULL UNIQUE
);
CREATE TABLE IF NOT EXISTS payments (
  key TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  at INTEGER NOT NULL
);
`;

/** Columns added after a table was first created: a store file of an earlier release gains them. */
const ADDED_COLUMNS: readonly AddedColumn[] = [
  { table: 'usage', column: 'target', type: 'TEXT' },
  { table: 'api_keys', column: 'credit_limit', type: 'INTEGER' },
  { table: 'api_keys', column: 'expires_at', type: 'INTEGER' },
  { table: 'api_keys', column: 'allowed_operations', type: 'TEXT' },
  { table: 'api_keys', column: 'mode', type: "TEXT NOT NULL DEFAULT 'live'" },
  { table: 'reservations', column: 'key_id', type: 'TEXT' },
  { table: 'reservations', column: 'spent_calls', type: 'TEXT' },
  { table: 'reservations', column: 'partly_spent', type: 'INTEGER' },
  { table: 'reservations', column: 'settled_spent', type: 'INTEGER' },
];

interface AccountRow {
  id: string;
  email: string;
  password_hash: string | null;
  plan: PlanName;
  credits_per_cycle: number | null;
  requests_per_minute: number | null;
  cycle_anchor: number;
  cycle_end: number;
  cycle_credits: number;
  top_up_credits: number;
  created_at: number;
}

interface ApiKeyRow {
  id: string;
  account_id: string;
  name: string;
  prefix: string;
  hash: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
  credit_limit: number | null;
  expires_at: number | null;
  /** JSON array, or null. */
  allowed_operations: string | null;
  mode: KeyMode;
}

interface IdempotencyRow {
  id: string;
  fingerprint: string;
  expires_at: number;
  status: number | null;
  body: string | null;
  headers: string | null;
}

interface SessionRow {
  id: string;
  account_id: string;
  csrf_token: string;
  created_at: number;
  expires_at: number;
}

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

const toAccount = (r: AccountRow): Account => ({
  id: r.id,
  email: r.email,
  passwordHash: r.password_hash,
  plan: r.plan,
  creditsPerCycle: r.credits_per_cycle,
  requestsPerMinute: r.requests_per_minute,
  cycleAnchor: r.cycle_anchor,
  cycleEnd: r.cycle_end,
  cycleCredits: r.cycle_credits,
  topUpCredits: r.top_up_credits,
  createdAt: r.created_at,
});

const toApiKey = (r: ApiKeyRow): ApiKeyRecord => ({
  id: r.id,
  accountId: r.account_id,
  name: r.name,
  prefix: r.prefix,
  hash: r.hash,
  createdAt: r.created_at,
  lastUsedAt: r.last_used_at,
  revokedAt: r.revoked_at,
  creditLimit: r.credit_limit,
  expiresAt: r.expires_at,
  allowedOperations: r.allowed_operations === null ? null : (JSON.parse(r.allowed_operations) as string[]),
  mode: r.mode,
});

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

/** Thrown inside applyPayment's transaction to roll it back: a key of the payment was recorded before. */
class DuplicatePayment extends Error {}

/**
 * The embedded store: one SQLite file (WAL, so the admin CLI can write while the service runs).
 * Multi-statement changes run in IMMEDIATE transactions, which serialize writers across processes.
 */
export class SqliteStore implements BillingStore {
  private readonly db: Database.Database;
  private readonly q;
  /** Transactions built once, not per call. */
  private readonly tx;

  constructor(file: string) {
    this.db = setUpSqlite(new Database(file), { schema: SCHEMA, addedColumns: ADDED_COLUMNS });
    const db = this.db;
    this.q = {
      insertAccount: db.prepare(
        `INSERT INTO accounts (id, email, password_hash, plan, credits_per_cycle, requests_per_minute,
           cycle_anchor, cycle_end, cycle_credits, top_up_credits, created_at)
         VALUES (@id, @email, @passwordHash, @plan, @creditsPerCycle, @requestsPerMinute,
           @cycleAnchor, @cycleEnd, @cycleCredits, @topUpCredits, @createdAt)`,
      ),
      accountById: db.prepare<[string], AccountRow>('SELECT * FROM accounts WHERE id = ?'),
      accountByEmail: db.prepare<[string], AccountRow>('SELECT * FROM accounts WHERE email = ?'),
      changePlan: db.prepare(
        `UPDATE accounts SET plan = @plan, credits_per_cycle = @creditsPerCycle,
           requests_per_minute = @requestsPerMinute,
           cycle_anchor = @cycleAnchor, cycle_end = @cycleEnd, cycle_credits = @cycleCredits WHERE id = @id`,
      ),
      setPasswordHash: db.prepare('UPDATE accounts SET password_hash = ? WHERE id = ?'),
      replacePasswordHash: db.prepare('UPDATE accounts SET password_hash = ? WHERE id = ? AND password_hash = ?'),
      addTopUp: db.prepare('UPDATE accounts SET top_up_credits = top_up_credits + ? WHERE id = ?'),
      linkPaymentCustomer: db.prepare(
        `INSERT INTO payment_customers (account_id, customer_id)
         SELECT id, @customerId FROM accounts WHERE id = @accountId ON CONFLICT DO NOTHING`,
      ),
      paymentCustomerOf: db.prepare<[string], { customer_id: string }>(
        'SELECT customer_id FROM payment_customers WHERE account_id = ?',
      ),
      accountByPaymentCustomer: db.prepare<[string], AccountRow>(
        `SELECT accounts.* FROM payment_customers JOIN accounts ON accounts.id = payment_customers.account_id
         WHERE payment_customers.customer_id = ?`,
      ),
      recordPayment: db.prepare('INSERT INTO payments (key, account_id, at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING'),
      renewCycle: db.prepare(
        `UPDATE accounts SET cycle_end = @cycleEnd, cycle_credits = @cycleCredits
         WHERE id = @id AND cycle_end = @expected`,
      ),
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
      increment: db.prepare<{ key: string; by: number; expiresAt: number }, { value: number }>(
        `INSERT INTO counters (key, value, expires_at) VALUES (@key, max(@by, 0), @expiresAt)
         ON CONFLICT (key) DO UPDATE SET value = value + @by RETURNING value`,
      ),
      counter: db.prepare<[string], { value: number }>('SELECT value FROM counters WHERE key = ?'),
      insertApiKey: db.prepare(
        `INSERT INTO api_keys (id, account_id, name, prefix, hash, created_at, last_used_at, revoked_at,
           credit_limit, expires_at, allowed_operations, mode)
         VALUES (@id, @accountId, @name, @prefix, @hash, @createdAt, @lastUsedAt, @revokedAt,
           @creditLimit, @expiresAt, @allowedOperations, @mode)`,
      ),
      apiKeyByHash: db.prepare<[string], ApiKeyRow>('SELECT * FROM api_keys WHERE hash = ?'),
      apiKeysOf: db.prepare<[string], ApiKeyRow>('SELECT * FROM api_keys WHERE account_id = ? ORDER BY created_at, id'),
      revokeApiKey: db.prepare(
        'UPDATE api_keys SET revoked_at = ? WHERE id = ? AND account_id = ? AND revoked_at IS NULL',
      ),
      apiKeyOf: db.prepare<[string, string], ApiKeyRow>('SELECT * FROM api_keys WHERE id = ? AND account_id = ?'),
      touchApiKey: db.prepare(
        `UPDATE api_keys SET last_used_at = @at
         WHERE id = @id AND (last_used_at IS NULL OR last_used_at <= @at - @everyMs)`,
      ),
      insertUsage: db.prepare(
        `INSERT INTO usage (account_id, operation, credits, at, target)
         VALUES (@accountId, @operation, @credits, @at, @target)`,
      ),
      recentUsage: db.prepare<[string, number], UsageRecord>(
        `SELECT account_id AS accountId, operation, credits, at, target FROM usage
         WHERE account_id = ? ORDER BY at DESC, rowid DESC LIMIT ?`,
      ),
      insertSession: db.prepare(
        `INSERT INTO sessions (id, account_id, csrf_token, created_at, expires_at)
         VALUES (@id, @accountId, @csrfToken, @createdAt, @expiresAt)`,
      ),
      sessionById: db.prepare<[string], SessionRow>('SELECT * FROM sessions WHERE id = ?'),
      deleteSession: db.prepare('DELETE FROM sessions WHERE id = ?'),
      deleteSessionsOf: db.prepare('DELETE FROM sessions WHERE account_id = ?'),
      insertSecret: db.prepare('INSERT INTO secrets (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING'),
      secret: db.prepare<[string], { value: string }>('SELECT value FROM secrets WHERE name = ?'),
      dropExpiredIdempotency: db.prepare('DELETE FROM idempotency WHERE id = ? AND expires_at <= ?'),
      claimIdempotency: db.prepare(
        `INSERT INTO idempotency (id, fingerprint, expires_at) VALUES (@id, @fingerprint, @expiresAt)
         ON CONFLICT (id) DO NOTHING`,
      ),
      idempotencyById: db.prepare<[string], IdempotencyRow>('SELECT * FROM idempotency WHERE id = ?'),
      completeIdempotency: db.prepare(
        `UPDATE idempotency SET status = @status, body = @body, headers = @headers, expires_at = @expiresAt
         WHERE id = @id AND fingerprint = @fingerprint AND status IS NULL`,
      ),
      releaseIdempotency: db.prepare('DELETE FROM idempotency WHERE id = ? AND fingerprint = ? AND status IS NULL'),
      sweepIdempotency: db.prepare('DELETE FROM idempotency WHERE expires_at <= ?'),
      sweepCounters: db.prepare('DELETE FROM counters WHERE expires_at <= ?'),
      sweepSessions: db.prepare('DELETE FROM sessions WHERE expires_at <= ?'),
      sweepSettled: db.prepare('DELETE FROM reservations WHERE settled_spent IS NOT NULL AND expires_at <= ?'),
    };
    const q = this.q;
    this.tx = {
      // The keys and the change commit together: a key recorded before rolls the whole payment back.
      applyPayment: db.transaction((payment: PaymentChange): 'applied' | 'duplicate' | 'no_account' => {
        if (!q.accountById.get(payment.accountId)) return 'no_account';
        for (const key of payment.keys) {
          if (q.recordPayment.run(key, payment.accountId, payment.at).changes === 0) throw new DuplicatePayment();
        }
        if (payment.plan) q.changePlan.run({ id: payment.accountId, ...payment.plan });
        if (payment.topUpCredits) q.addTopUp.run(payment.topUpCredits, payment.accountId);
        return 'applied';
      }),
      claimIdempotency: db.transaction((claim: IdempotencyClaim, now: number): IdempotencyRecord | undefined => {
        q.dropExpiredIdempotency.run(claim.id, now);
        if (q.claimIdempotency.run(claim).changes === 1) return undefined;
        const row = returned(q.idempotencyById.get(claim.id));
        const record: IdempotencyRecord = { id: row.id, fingerprint: row.fingerprint, expiresAt: row.expires_at };
        if (row.status !== null)
          record.answer = { status: row.status, body: row.body ?? '', headers: row.headers ?? '{}' };
        return record;
      }),
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
          if (key)
            q.setKeySpend.run({ keyId: key.id, accountId, cycleEnd: row.cycle_end, credits: keySpent + credits });
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
  }

  async insertAccount(account: Account): Promise<void> {
    try {
      this.q.insertAccount.run(account);
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw new EmailTakenError(account.email);
      throw err;
    }
  }

  async accountById(id: string): Promise<Account | undefined> {
    const row = this.q.accountById.get(id);
    return row && toAccount(row);
  }

  async accountByEmail(email: string): Promise<Account | undefined> {
    const row = this.q.accountByEmail.get(email);
    return row && toAccount(row);
  }

  async changePlan(id: string, change: PlanChange): Promise<Account | undefined> {
    this.q.changePlan.run({ id, ...change });
    return this.accountById(id);
  }

  async setPasswordHash(id: string, passwordHash: string): Promise<Account | undefined> {
    this.q.setPasswordHash.run(passwordHash, id);
    return this.accountById(id);
  }

  async replacePasswordHash(id: string, current: string, next: string): Promise<boolean> {
    return this.q.replacePasswordHash.run(next, id, current).changes === 1;
  }

  async addTopUp(id: string, credits: number): Promise<Account | undefined> {
    this.q.addTopUp.run(credits, id);
    return this.accountById(id);
  }

  async linkPaymentCustomer(accountId: string, customerId: string): Promise<string | undefined> {
    this.q.linkPaymentCustomer.run({ accountId, customerId });
    return this.paymentCustomerOf(accountId);
  }

  async paymentCustomerOf(accountId: string): Promise<string | undefined> {
    return this.q.paymentCustomerOf.get(accountId)?.customer_id;
  }

  async accountByPaymentCustomer(customerId: string): Promise<Account | undefined> {
    const row = this.q.accountByPaymentCustomer.get(customerId);
    return row ? toAccount(row) : undefined;
  }

  async applyPayment(payment: PaymentChange): Promise<'applied' | 'duplicate' | 'no_account'> {
    try {
      return this.tx.applyPayment.immediate(payment);
    } catch (err) {
      if (err instanceof DuplicatePayment) return 'duplicate';
      throw err;
    }
  }

  async renewCycle(id: string, expected: number, next: { cycleEnd: number; cycleCredits: number }): Promise<void> {
    this.q.renewCycle.run({ id, expected, ...next });
  }

  async reserveCredits<K extends KeyBudget | undefined = undefined>(
    accountId: string,
    credits: number,
    hold: Hold,
    key?: K,
  ): Promise<Reservation | KeyLimitedIf<K> | undefined> {
    return this.tx.reserveCredits.immediate(accountId, credits, hold, key) as Reservation | KeyLimitedIf<K> | undefined;
  }

  async reserveAllowance(
    allowanceKey: string,
    credits: number,
    max: number,
    allowanceExpiresAt: number,
    hold: Hold,
  ): Promise<Reservation | undefined> {
    if (credits > max) return undefined;
    return this.tx.reserveAllowance.immediate(allowanceKey, credits, max, allowanceExpiresAt, hold);
  }

  async settle(reservationId: string, spentCredits: number): Promise<Reservation | undefined> {
    return settleCredits(this, reservationId, spentCredits);
  }

  async settleCalls(reservationId: string, spend: HoldSpend): Promise<SettleResult | undefined> {
    return this.tx.settle.immediate(reservationId, spend);
  }

  async expiredReservations(now: number, limit: number): Promise<Reservation[]> {
    return this.q.expiredReservations.all(now, limit).map(toReservation);
  }

  async increment(key: string, by: number, expiresAt: number): Promise<number> {
    return returned(this.q.increment.get({ key, by, expiresAt })).value;
  }

  async counter(key: string): Promise<number> {
    return this.q.counter.get(key)?.value ?? 0;
  }

  async insertApiKey(key: ApiKeyRecord): Promise<void> {
    const allowedOperations = key.allowedOperations === null ? null : JSON.stringify(key.allowedOperations);
    this.q.insertApiKey.run({ ...key, allowedOperations });
  }

  async keySpend(accountId: string, cycleEnd: number): Promise<Map<string, number>> {
    return new Map(this.q.keySpend.all(accountId, cycleEnd).map((r) => [r.key_id, r.credits]));
  }

  async apiKeyByHash(hash: string): Promise<ApiKeyRecord | undefined> {
    const row = this.q.apiKeyByHash.get(hash);
    return row && toApiKey(row);
  }

  async apiKeysOf(accountId: string): Promise<ApiKeyRecord[]> {
    return this.q.apiKeysOf.all(accountId).map(toApiKey);
  }

  async revokeApiKey(accountId: string, keyId: string, at: number): Promise<ApiKeyRecord | undefined> {
    this.q.revokeApiKey.run(at, keyId, accountId);
    const row = this.q.apiKeyOf.get(keyId, accountId);
    return row && toApiKey(row);
  }

  async addUsage(records: readonly UsageRecord[]): Promise<void> {
    this.tx.addUsage(records);
  }

  async recentUsage(accountId: string, limit: number): Promise<UsageRecord[]> {
    // A call that named no target has a NULL column; the record has no field.
    return this.q.recentUsage
      .all(accountId, limit)
      .map(({ target, ...record }) => (target ? { ...record, target } : record));
  }

  async touchApiKey(keyId: string, at: number, everyMs: number): Promise<void> {
    this.q.touchApiKey.run({ id: keyId, at, everyMs });
  }

  async insertSession(session: SessionRecord): Promise<void> {
    this.q.insertSession.run(session);
  }

  async sessionById(id: string): Promise<SessionRecord | undefined> {
    const row = this.q.sessionById.get(id);
    return (
      row && {
        id: row.id,
        accountId: row.account_id,
        csrfToken: row.csrf_token,
        createdAt: row.created_at,
        expiresAt: row.expires_at,
      }
    );
  }

  async deleteSession(id: string): Promise<void> {
    this.q.deleteSession.run(id);
  }

  async deleteSessionsOf(accountId: string): Promise<void> {
    this.q.deleteSessionsOf.run(accountId);
  }

  async claimIdempotency(claim: IdempotencyClaim, now: number): Promise<IdempotencyRecord | undefined> {
    return this.tx.claimIdempotency(claim, now);
  }

  async completeIdempotency(
    id: string,
    fingerprint: string,
    answer: IdempotentAnswer,
    expiresAt: number,
  ): Promise<boolean> {
    return this.q.completeIdempotency.run({ id, fingerprint, ...answer, expiresAt }).changes === 1;
  }

  async releaseIdempotency(id: string, fingerprint: string): Promise<void> {
    this.q.releaseIdempotency.run(id, fingerprint);
  }

  async secret(name: string, candidate: string): Promise<string> {
    this.q.insertSecret.run(name, candidate);
    return returned(this.q.secret.get(name)).value;
  }

  async sweep(now: number): Promise<void> {
    this.q.sweepCounters.run(now);
    this.q.sweepSessions.run(now);
    this.q.sweepSettled.run(now);
    this.q.sweepIdempotency.run(now);
  }

  async close(): Promise<void> {
    this.db.close();
  }
}

/** The row an upsert or insert-then-read always yields. */
function returned<T>(row: T | undefined): T {
  if (row === undefined) throw new Error('the statement returned no row');
  return row;
}
