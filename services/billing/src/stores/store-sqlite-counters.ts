import type Database from 'better-sqlite3';
import type { CounterStore, Sweeps } from './store.js';
import { returned } from './store-sqlite-schema.js';

/** Named counters and secrets in the embedded store. */
export function sqliteCounters(db: Database.Database): CounterStore & Sweeps {
  const q = {
    increment: db.prepare<{ key: string; by: number; expiresAt: number }, { value: number }>(
      `INSERT INTO counters (key, value, expires_at) VALUES (@key, max(@by, 0), @expiresAt)
       ON CONFLICT (key) DO UPDATE SET value = value + @by RETURNING value`,
    ),
    counter: db.prepare<[string], { value: number }>('SELECT value FROM counters WHERE key = ?'),
    insertSecret: db.prepare('INSERT INTO secrets (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING'),
    secret: db.prepare<[string], { value: string }>('SELECT value FROM secrets WHERE name = ?'),
    sweepCounters: db.prepare('DELETE FROM counters WHERE expires_at <= ?'),
  };

  return {
    async increment(key: string, by: number, expiresAt: number): Promise<number> {
      return returned(q.increment.get({ key, by, expiresAt })).value;
    },

    async counter(key: string): Promise<number> {
      return q.counter.get(key)?.value ?? 0;
    },

    async secret(name: string, candidate: string): Promise<string> {
      q.insertSecret.run(name, candidate);
      return returned(q.secret.get(name)).value;
    },

    async sweep(now: number): Promise<void> {
      q.sweepCounters.run(now);
    },
  };
}
