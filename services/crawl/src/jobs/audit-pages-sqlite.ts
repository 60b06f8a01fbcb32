import { setUpSqlite } from '@webutil/kit';
import Database from 'better-sqlite3';
import type { AuditedPage } from '../site-audit/page-checks.js';
import { type AuditPageStore, fromRecord, pageRecord, READ_BATCH } from './audit-pages.js';

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
  private readonly insertAll: Database.Transaction<(rows: readonly Record<string, unknown>[]) => number>;

  constructor(file: string) {
    this.db = setUpSqlite(new Database(file), { schema: SCHEMA });
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
      count: this.db.prepare<[string], { n: number }>('SELECT count(*) AS n FROM audit_pages WHERE job_id = ?'),
      clear: this.db.prepare<[string]>('DELETE FROM audit_pages WHERE job_id = ?'),
      sweep: this.db.prepare<[number]>('DELETE FROM audit_pages WHERE expires_at <= ?'),
    };
    const { insert } = this.statements;
    this.insertAll = this.db.transaction((rows) => {
      let added = 0;
      for (const row of rows) added += insert.run(row).changes;
      return added;
    });
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
    return this.insertAll.immediate(rows);
  }

  async *read(jobId: string, batch = READ_BATCH): AsyncGenerator<AuditedPage[]> {
    let rows = this.statements.first.all(jobId, batch);
    while (rows.length > 0) {
      yield rows.map((row) => fromRecord(row.record));
      const last = rows[rows.length - 1] as Row;
      rows = this.statements.after.all(jobId, last.depth, last.url, batch);
    }
  }

  async count(jobId: string): Promise<number> {
    return this.statements.count.get(jobId)?.n ?? 0;
  }

  async clear(jobId: string): Promise<number> {
    return this.statements.clear.run(jobId).changes;
  }

  async sweep(now = new Date()): Promise<number> {
    return this.statements.sweep.run(now.getTime()).changes;
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
