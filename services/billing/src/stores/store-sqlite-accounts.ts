import type Database from 'better-sqlite3';
import {
  type Account,
  type AccountStore,
  type ApiKeyRecord,
  EmailTakenError,
  type KeyMode,
  type PlanChange,
} from './store.js';
import { type AccountRow, toAccount } from './store-sqlite-schema.js';

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

/** The account statements other parts' transactions use too (a payment changes the plan or adds top-ups). */
export function accountStatements(db: Database.Database): {
  accountById: Database.Statement<[string], AccountRow>;
  changePlan: Database.Statement;
  addTopUp: Database.Statement;
} {
  return {
    accountById: db.prepare<[string], AccountRow>('SELECT * FROM accounts WHERE id = ?'),
    changePlan: db.prepare(
      `UPDATE accounts SET plan = @plan, credits_per_cycle = @creditsPerCycle,
         requests_per_minute = @requestsPerMinute,
         cycle_anchor = @cycleAnchor, cycle_end = @cycleEnd, cycle_credits = @cycleCredits WHERE id = @id`,
    ),
    addTopUp: db.prepare('UPDATE accounts SET top_up_credits = top_up_credits + ? WHERE id = ?'),
  };
}

/** Accounts and their API keys in the embedded store. */
export function sqliteAccounts(db: Database.Database): AccountStore {
  const q = {
    ...accountStatements(db),
    insertAccount: db.prepare(
      `INSERT INTO accounts (id, email, password_hash, plan, credits_per_cycle, requests_per_minute,
         cycle_anchor, cycle_end, cycle_credits, top_up_credits, created_at, paid_through)
       VALUES (@id, @email, @passwordHash, @plan, @creditsPerCycle, @requestsPerMinute,
         @cycleAnchor, @cycleEnd, @cycleCredits, @topUpCredits, @createdAt, @paidThrough)`,
    ),
    accountByEmail: db.prepare<[string], AccountRow>('SELECT * FROM accounts WHERE email = ?'),
    setPasswordHash: db.prepare('UPDATE accounts SET password_hash = ? WHERE id = ?'),
    replacePasswordHash: db.prepare('UPDATE accounts SET password_hash = ? WHERE id = ? AND password_hash = ?'),
    renewCycle: db.prepare(
      `UPDATE accounts SET cycle_end = @cycleEnd, cycle_credits = @cycleCredits
       WHERE id = @id AND cycle_end = @expected`,
    ),
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
  };
  const accountById = async (id: string): Promise<Account | undefined> => {
    const row = q.accountById.get(id);
    return row && toAccount(row);
  };

  return {
    async insertAccount(account: Account): Promise<void> {
      try {
        q.insertAccount.run(account);
      } catch (err) {
        if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw new EmailTakenError(account.email);
        throw err;
      }
    },

    accountById,

    async accountByEmail(email: string): Promise<Account | undefined> {
      const row = q.accountByEmail.get(email);
      return row && toAccount(row);
    },

    async changePlan(id: string, change: PlanChange): Promise<Account | undefined> {
      q.changePlan.run({ id, ...change });
      return accountById(id);
    },

    async setPasswordHash(id: string, passwordHash: string): Promise<Account | undefined> {
      q.setPasswordHash.run(passwordHash, id);
      return accountById(id);
    },

    async replacePasswordHash(id: string, current: string, next: string): Promise<boolean> {
      return q.replacePasswordHash.run(next, id, current).changes === 1;
    },

    async addTopUp(id: string, credits: number): Promise<Account | undefined> {
      q.addTopUp.run(credits, id);
      return accountById(id);
    },

    async renewCycle(id: string, expected: number, next: { cycleEnd: number; cycleCredits: number }): Promise<void> {
      q.renewCycle.run({ id, expected, ...next });
    },

    async insertApiKey(key: ApiKeyRecord): Promise<void> {
      const allowedOperations = key.allowedOperations === null ? null : JSON.stringify(key.allowedOperations);
      q.insertApiKey.run({ ...key, allowedOperations });
    },

    async apiKeyByHash(hash: string): Promise<ApiKeyRecord | undefined> {
      const row = q.apiKeyByHash.get(hash);
      return row && toApiKey(row);
    },

    async apiKeysOf(accountId: string): Promise<ApiKeyRecord[]> {
      return q.apiKeysOf.all(accountId).map(toApiKey);
    },

    async revokeApiKey(accountId: string, keyId: string, at: number): Promise<ApiKeyRecord | undefined> {
      q.revokeApiKey.run(at, keyId, accountId);
      const row = q.apiKeyOf.get(keyId, accountId);
      return row && toApiKey(row);
    },

    async touchApiKey(keyId: string, at: number, everyMs: number): Promise<void> {
      q.touchApiKey.run({ id: keyId, at, everyMs });
    },
  };
}
