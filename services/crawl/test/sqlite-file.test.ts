import { mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { SqliteAuditPages } from '../src/jobs/audit-pages-sqlite.js';
import { SqliteFile } from '../src/jobs/sqlite-file.js';
import { SqlitePageFrontier } from '../src/site-audit/distributed/page-frontier-sqlite.js';

describe('SqliteFile (one connection per store file in a process)', () => {
  let dir: string;
  let file: string;

  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'sqlite-file-'));
    file = path.join(dir, 'crawl-jobs.sqlite');
  });

  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('gives the stores on one file one connection and one group, closed by the last release', async () => {
    const a = SqliteFile.acquire(file);
    const b = SqliteFile.acquire(path.join(dir, '.', 'crawl-jobs.sqlite'));
    expect(b).to.equal(a);
    expect(b.group).to.equal(a.group);
    await a.release();
    expect(a.db.open).to.equal(true);
    await b.release();
    expect(a.db.open).to.equal(false);
    // Opened again after the last release: a new connection.
    const c = SqliteFile.acquire(file);
    expect(c).to.not.equal(a);
    await c.release();
  });

  it("keeps SQLite's own 2 MB page cache (better-sqlite3 sets 16 MB, filled as an audit's file grows)", async () => {
    const opened = SqliteFile.acquire(file);
    try {
      expect(opened.db.pragma('cache_size', { simple: true })).to.equal(-2000);
    } finally {
      await opened.release();
    }
  });

  it("commits a turn's writes of the page store and the frontier together", async () => {
    const pages = new SqliteAuditPages(file);
    const frontier = new SqlitePageFrontier(file);
    // Another connection sees data_version move once per commit of this process.
    const other = new Database(file);
    try {
      const version = () => other.pragma('data_version', { simple: true }) as number;
      const expiresAt = new Date(Date.now() + 60_000);
      await frontier.open('job', 10, expiresAt);
      const before = version();
      await Promise.all([
        pages.add(
          'job',
          [{ url: 'http://a.test/', depth: 0, fromSitemap: false, redirects: 0, refused: false, links: [] }],
          expiresAt,
        ),
        frontier.insert('job', [{ url: 'http://a.test/b', depth: 1, fromSitemap: false }], expiresAt),
      ]);
      expect(version()).to.equal(before + 1);
      expect(await pages.count('job')).to.equal(1);
      expect((await frontier.counts('job')).queued).to.equal(1);
    } finally {
      other.close();
      await pages.close();
      await frontier.close();
    }
  });

  it('copies the write-ahead log into the file from a thread of its own once the file is busy', async function () {
    this.timeout(60_000);
    const shared = SqliteFile.acquire(file);
    try {
      shared.db.pragma('journal_mode = WAL');
      shared.db.exec('CREATE TABLE t (k INTEGER PRIMARY KEY, v TEXT NOT NULL)');
      const insert = shared.db.prepare('INSERT INTO t (v) VALUES (?)');
      const sizeBefore = statSync(file).size;
      // Enough groups to start the thread, each of a few KB of log (too little for the writer's backstop).
      for (let i = 0; i < 600; i += 1) await shared.group.run(() => insert.run('x'.repeat(2_000)));
      expect(shared.checkpointsAside).to.equal(true);
      const walPages = () => statSync(`${file}-wal`).size / 4096;
      expect(walPages()).to.be.lessThan(20_000);
      // Only a checkpoint writes the file itself: the thread's, since the writer's waits for 20,000 pages.
      const deadline = Date.now() + 30_000;
      while (statSync(file).size <= sizeBefore + 600 * 2_000 && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 50));
      expect(statSync(file).size).to.be.greaterThan(sizeBefore + 600 * 2_000);
    } finally {
      await shared.release();
    }
    expect(shared.checkpointsAside).to.equal(false);
  });
});
