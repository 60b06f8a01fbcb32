import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { openSqliteStore } from '../src/stores/store-sqlite.js';

describe('an SQLite store file of an earlier release', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'billing-upgrade-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('gains the columns added since (usage targets, key limits), keeps its rows, records targets', async () => {
    const file = path.join(dir, 'billing.sqlite');
    const old = new Database(file);
    old.exec(
      'CREATE TABLE usage (account_id TEXT NOT NULL, operation TEXT NOT NULL, ' +
        'credits INTEGER NOT NULL, at INTEGER NOT NULL)',
    );
    // Keys before their own limits, reservations before they named the key.
    old.exec(
      'CREATE TABLE api_keys (id TEXT PRIMARY KEY, account_id TEXT NOT NULL, name TEXT NOT NULL, ' +
        'prefix TEXT NOT NULL, hash TEXT NOT NULL UNIQUE, created_at INTEGER NOT NULL, last_used_at INTEGER, ' +
        'revoked_at INTEGER)',
    );
    old.exec(
      'CREATE TABLE reservations (id TEXT PRIMARY KEY, account_id TEXT, allowance_key TEXT, cycle_end INTEGER, ' +
        'from_cycle INTEGER NOT NULL, from_top_up INTEGER NOT NULL, expires_at INTEGER NOT NULL)',
    );
    old.prepare('INSERT INTO usage VALUES (?, ?, ?, ?)').run('a1', 'down-check', 1, 1_000);
    old.close();
    const store = openSqliteStore(file);
    try {
      const columns = (table: string) => {
        const db = new Database(file, { readonly: true });
        try {
          return (db.pragma(`table_info(${table})`) as { name: string }[]).map((c) => c.name);
        } finally {
          db.close();
        }
      };
      expect(columns('usage')).to.include('target');
      expect(columns('api_keys')).to.include.members(['credit_limit', 'expires_at', 'allowed_operations']);
      expect(columns('reservations')).to.include('key_id');
      await store.addUsage([
        { accountId: 'a1', operation: 'meta-scan', credits: 1, at: 2_000, target: 'https://e.test/' },
      ]);
      expect(await store.recentUsage('a1', 5)).to.deep.equal([
        { accountId: 'a1', operation: 'meta-scan', credits: 1, at: 2_000, target: 'https://e.test/' },
        { accountId: 'a1', operation: 'down-check', credits: 1, at: 1_000 },
      ]);
    } finally {
      await store.close();
    }
  });

  it('gains the API keys’ limit and mode columns: a key made before them is a live key without limits', async () => {
    const file = path.join(dir, 'keys.sqlite');
    const old = new Database(file);
    old.exec(
      'CREATE TABLE api_keys (id TEXT PRIMARY KEY, account_id TEXT NOT NULL, name TEXT NOT NULL, ' +
        'prefix TEXT NOT NULL, hash TEXT NOT NULL UNIQUE, created_at INTEGER NOT NULL, last_used_at INTEGER, ' +
        'revoked_at INTEGER)',
    );
    old
      .prepare('INSERT INTO api_keys VALUES (?, ?, ?, ?, ?, ?, NULL, NULL)')
      .run('k1', 'a1', 'ci', 'wu_live_Ab', 'h1', 1);
    old.close();
    const store = openSqliteStore(file);
    try {
      expect(await store.apiKeyByHash('h1')).to.include({ mode: 'live', creditLimit: null, allowedOperations: null });
    } finally {
      await store.close();
    }
  });
});
