import type { AddedColumn } from '@webutil/kit';
import type { PlanName } from '../plans.js';
import type { Account } from './store.js';

/** Every table of the embedded store (its parts' statements read and write them). */
export const SCHEMA = `
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
  created_at INTEGER NOT NULL,
  paid_through INTEGER
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
export const ADDED_COLUMNS: readonly AddedColumn[] = [
  { table: 'usage', column: 'target', type: 'TEXT' },
  { table: 'api_keys', column: 'credit_limit', type: 'INTEGER' },
  { table: 'api_keys', column: 'expires_at', type: 'INTEGER' },
  { table: 'api_keys', column: 'allowed_operations', type: 'TEXT' },
  { table: 'api_keys', column: 'mode', type: "TEXT NOT NULL DEFAULT 'live'" },
  { table: 'reservations', column: 'key_id', type: 'TEXT' },
  { table: 'reservations', column: 'spent_calls', type: 'TEXT' },
  { table: 'reservations', column: 'partly_spent', type: 'INTEGER' },
  { table: 'reservations', column: 'settled_spent', type: 'INTEGER' },
  { table: 'accounts', column: 'paid_through', type: 'INTEGER' },
];

export interface AccountRow {
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
  paid_through: number | null;
}

export const toAccount = (r: AccountRow): Account => ({
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
  paidThrough: r.paid_through ?? null,
});

/** The row an upsert or insert-then-read always yields. */
export function returned<T>(row: T | undefined): T {
  if (row === undefined) throw new Error('the statement returned no row');
  return row;
}
