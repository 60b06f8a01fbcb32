import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { SqliteStore } from '../src/stores/sqlite.js';

describe('an SQLite store file of an earlier release', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'billing-upgrade-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('gains the usage target column, keeps its rows, and records targets from then on', async () => {
    const file = path.join(dir, 'billing.sqlite');
    const old = new Database(file);
    old.exec(
      'CREATE TABLE usage (account_id TEXT NOT NULL, operation TEXT NOT NULL, ' +
        'credits INTEGER NOT NULL, at INTEGER NOT NULL)',
    );
    old.prepare('INSERT INTO usage VALUES (?, ?, ?, ?)').run('a1', 'down-check', 1, 1_000);
    old.close();
    const store = new SqliteStore(file);
    try {
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
});
