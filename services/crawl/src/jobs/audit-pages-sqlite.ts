import { setUpSqlite } from '@webutil/kit';
import type Database from 'better-sqlite3';
import type { AuditedPage } from '../site-audit/page-checks.js';
import { type AuditPageStore, fromRecord, pageRecord, READ_BATCH, type StoredAffected } from './audit-pages.js';
import type { GroupCommit } from './group-commit.js';
import { SqliteFile } from './sqlite-file.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS audit_pages (
  job_id TEXT NOT NULL,
  url TEXT NOT NULL,
  depth INTEGER NOT NULL,
  record TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (job_id, url)
);
CREATE INDEX IF NOT EXISTS audit_pages_order ON audit_pages (job_id, depth, url);
CREATE INDEX IF NOT EXISTS audit_pages_expires_at ON audit_pages (expires_at);
CREATE TABLE IF NOT EXISTS audit_affected (
  job_id TEXT NOT NULL,
  issue_id TEXT NOT NULL,
  url TEXT NOT NULL,
  seq INTEGER NOT NULL,
  detail TEXT NOT NULL,
  sources TEXT NOT NULL,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (job_id, issue_id, url, seq)
);
CREATE INDEX IF NOT EXISTS audit_affected_expires_at ON audit_affected (expires_at);
`;

interface Row {
  url: string;
  depth: number;
  record: string;
}

/** A site audit's pages in the embedded store: a table of the crawl jobs' SQLite file. */
export class SqliteAuditPages implements AuditPageStore {
  private readonly db: Database.Database;
  private readonly statements;
  private readonly insertAffected: Database.Transaction<(rows: readonly Record<string, unknown>[]) => number>;

  private readonly file: SqliteFile;
  /** The page workers' records committed a group at a time, with the other writes to the file. */
  private readonly group: GroupCommit;

  constructor(file: string) {
    this.file = SqliteFile.acquire(file);
    this.db = setUpSqlite(this.file.db, { schema: SCHEMA });
    this.statements = {
      insert: this.db.prepare(
        `INSERT OR IGNORE INTO audit_pages (job_id, url, depth, record, expires_at)
         VALUES (@jobId, @url, @depth, @record, @expiresAt)`,
      ),
      first: this.db.prepare<[string, number], Row>(
        'SELECT url, depth, record FROM audit_pages WHERE job_id = ? ORDER BY depth, url LIMIT ?',
      ),
      after: this.db.prepare<[string, number, string, number], Row>(
        `SELECT url, depth, record FROM audit_pages WHERE job_id = ? AND (depth, url) > (?, ?)
         ORDER BY depth, url LIMIT ?`,
      ),
      // The URLs as one JSON value: one statement for any number of them.
      get: this.db.prepare<[string, string], Pick<Row, 'record'>>(
        'SELECT record FROM audit_pages WHERE job_id = ? AND url IN (SELECT value FROM json_each(?))',
      ),
      count: this.db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM audit_pages WHERE job_id = ?'),
      clear: this.db.prepare<[string]>('DELETE FROM audit_pages WHERE job_id = ?'),
      sweep: this.db.prepare<[number]>('DELETE FROM audit_pages WHERE expires_at <= ?'),
      insertAffected: this.db.prepare(
        `INSERT OR IGNORE INTO audit_affected (job_id, issue_id, url, seq, detail, sources, expires_at)
         VALUES (@jobId, @issueId, @url, @seq, @detail, @sources, @expiresAt)`,
      ),
      affected: this.db.prepare<
        [string, string, number, number],
        { issue_id: string; url: string; seq: number; detail: string; sources: string }
      >(
        `SELECT issue_id, url, seq, detail, sources FROM audit_affected WHERE job_id = ? AND issue_id = ?
         ORDER BY url, seq LIMIT ? OFFSET ?`,
      ),
      clearAffected: this.db.prepare<[string]>('DELETE FROM audit_affected WHERE job_id = ?'),
      sweepAffected: this.db.prepare<[number]>('DELETE FROM audit_affected WHERE expires_at <= ?'),
    };
    const runAll = (statement: Database.Statement) =>
      this.db.transaction((rows: readonly Record<string, unknown>[]) => {
        let added = 0;
        for (const row of rows) added += statement.run(row).changes;
        return added;
      });
    this.group = this.file.group;
    this.insertAffected = runAll(this.statements.insertAffected);
  }

  async add(jobId: string, pages: readonly AuditedPage[], expiresAt: Date): Promise<number> {
    const at = expiresAt.getTime();
    const rows = pages.map((page) => ({
      jobId,
      url: page.url,
      depth: page.depth,
      record: pageRecord(page),
      expiresAt: at,
    }));
    const { insert } = this.statements;
    return this.group.run(() => rows.reduce((added, row) => added + insert.run(row).changes, 0));
  }

  async *read(jobId: string, batch = READ_BATCH): AsyncGenerator<AuditedPage[]> {
    let rows = this.statements.first.all(jobId, batch);
    while (rows.length > 0) {
      yield rows.map((row) => fromRecord(row.record));
      const last = rows[rows.length - 1] as Row;
      rows = this.statements.after.all(jobId, last.depth, last.url, batch);
    }
  }

  async get(jobId: string, urls: readonly string[]): Promise<AuditedPage[]> {
    if (urls.length === 0) return [];
    const rows = this.statements.get.all(jobId, JSON.stringify(urls));
    return rows.map((row) => fromRecord(row.record));
  }

  async count(jobId: string): Promise<number> {
    return this.statements.count.get(jobId)?.n ?? 0;
  }

  async clear(jobId: string): Promise<number> {
    return this.statements.clear.run(jobId).changes;
  }

  async addAffected(jobId: string, rows: readonly StoredAffected[], expiresAt: Date): Promise<void> {
    const at = expiresAt.getTime();
    this.insertAffected.immediate(
      rows.map((row) => ({ jobId, ...row, sources: JSON.stringify(row.sources), expiresAt: at })),
    );
  }

  async affected(jobId: string, issueId: string, offset: number, limit: number): Promise<StoredAffected[]> {
    return this.statements.affected.all(jobId, issueId, limit, offset).map((row) => ({
      issueId: row.issue_id,
      url: row.url,
      seq: row.seq,
      detail: row.detail,
      sources: JSON.parse(row.sources) as string[],
    }));
  }

  async clearAffected(jobId: string): Promise<number> {
    return this.statements.clearAffected.run(jobId).changes;
  }

  async sweep(now = new Date()): Promise<number> {
    const at = now.getTime();
    return this.statements.sweep.run(at).changes + this.statements.sweepAffected.run(at).changes;
  }

  async close(): Promise<void> {
    await this.file.release();
  }
}
