import { setUpSqlite } from '@webutil/kit';
import Database from 'better-sqlite3';
import type { BillingStore } from './store.js';
import { sqliteAccounts } from './store-sqlite-accounts.js';
import { sqliteCounters } from './store-sqlite-counters.js';
import { sqliteIdempotency } from './store-sqlite-idempotency.js';
import { sqliteLedger } from './store-sqlite-ledger.js';
import { sqlitePayments } from './store-sqlite-payments.js';
import { ADDED_COLUMNS, SCHEMA } from './store-sqlite-schema.js';
import { sqliteSessions } from './store-sqlite-sessions.js';

/**
 * The embedded store: one SQLite file (WAL, so the admin CLI can write while the service runs),
 * its parts one file each (store-sqlite-<aggregate>.ts) sharing the connection. Multi-statement
 * changes run in IMMEDIATE transactions, which serialize writers across processes.
 */
export function openSqliteStore(file: string): BillingStore {
  const db = setUpSqlite(new Database(file), { schema: SCHEMA, addedColumns: ADDED_COLUMNS });
  const counters = sqliteCounters(db);
  const sessions = sqliteSessions(db);
  const ledger = sqliteLedger(db);
  const idempotency = sqliteIdempotency(db);
  return {
    ...sqliteAccounts(db),
    ...ledger,
    ...sqlitePayments(db),
    ...sessions,
    ...idempotency,
    ...counters,
    async sweep(now: number): Promise<void> {
      for (const part of [counters, sessions, ledger, idempotency]) await part.sweep(now);
    },
    async close(): Promise<void> {
      db.close();
    },
  };
}
