import { type AddedColumn, setUpSqlite } from '@webutil/kit';
import type Database from 'better-sqlite3';
import type { CrawlKind, CrawlProgress, JobError, JobStatus } from '../model.js';
import type { ScanOptions } from '../scan-options.js';
import { SqliteFile } from './sqlite-file.js';
import {
  type ActiveJob,
  asPacked,
  type Claim,
  type CrawlJob,
  type JobStore,
  type JobUpdate,
  type NewJob,
  owedToAnother,
  type PackedResult,
  unpackResult,
} from './store.js';

interface Row {
  id: string;
  kind: string;
  url: string;
  caller: string | null;
  weight: number | null;
  claims: number | null;
  check_fragments: number | null;
  options: string | null;
  input: Buffer | null;
  status: string;
  progress: string;
  result: Buffer | null;
  error: string | null;
  attempt: number;
  seq: number;
  created_at: number;
  updated_at: number;
  expires_at: number;
}

/** "(attempt, seq) is newer than the stored pair", as SQL. */
const NEWER = '(attempt < @attempt OR (attempt = @attempt AND seq < @seq))';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS crawl_jobs (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  url TEXT NOT NULL,
  caller TEXT,
  check_fragments INTEGER,
  options TEXT,
  input BLOB,
  status TEXT NOT NULL,
  progress TEXT NOT NULL,
  result BLOB,
  error TEXT,
  attempt INTEGER NOT NULL DEFAULT 0,
  seq INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS crawl_jobs_expires_at ON crawl_jobs (expires_at);
`;

/**
 * Columns added after the table was first created: jobs' callers (a file's earlier jobs count for
 * no caller), their options, and a list job's input (bookmark checks).
 */
const ADDED_COLUMNS: readonly AddedColumn[] = [
  { table: 'crawl_jobs', column: 'caller', type: 'TEXT' },
  { table: 'crawl_jobs', column: 'check_fragments', type: 'INTEGER' },
  { table: 'crawl_jobs', column: 'options', type: 'TEXT' },
  { table: 'crawl_jobs', column: 'input', type: 'BLOB' },
  { table: 'crawl_jobs', column: 'weight', type: 'INTEGER' },
  { table: 'crawl_jobs', column: 'claims', type: 'INTEGER' },
];

/** The embedded job store: one SQLite file under DATA_DIR (WAL, so polls never wait on writes). */
export class SqliteJobStore implements JobStore {
  private readonly db: Database.Database;
  private readonly statements;
  private readonly claimTurn: Database.Transaction<(id: string, now: number) => Claim>;

  private readonly file: SqliteFile;

  constructor(file: string) {
    this.file = SqliteFile.acquire(file);
    this.db = setUpSqlite(this.file.db, {
      schema: SCHEMA,
      addedColumns: ADDED_COLUMNS,
      // An index on an added column: made once a file of an earlier release has the column.
      afterColumns: 'CREATE INDEX IF NOT EXISTS crawl_jobs_caller ON crawl_jobs (caller, status)',
    });
    this.statements = {
      insert: this.db.prepare(
        `INSERT INTO crawl_jobs (id, kind, url, caller, weight, check_fragments, options, input, status, progress,
           created_at, updated_at, expires_at)
         VALUES (@id, @kind, @url, @caller, @weight, @checkFragments, @options, @input, 'crawling', @progress,
           @createdAt, @createdAt, @expiresAt)`,
      ),
      // One statement, so no other start (of any process on the file) comes between count and insert.
      insertWithin: this.db.prepare(
        `INSERT INTO crawl_jobs (id, kind, url, caller, weight, check_fragments, options, input, status, progress,
           created_at, updated_at, expires_at)
         SELECT @id, @kind, @url, @caller, @weight, @checkFragments, @options, @input, 'crawling', @progress,
           @createdAt, @createdAt, @expiresAt
         WHERE (SELECT count(*) FROM crawl_jobs
                WHERE caller = @caller AND status = 'crawling' AND expires_at > @createdAt) < @perCaller`,
      ),
      get: this.db.prepare<[string, number], Row>('SELECT * FROM crawl_jobs WHERE id = ? AND expires_at > ?'),
      progress: this.db.prepare(
        `UPDATE crawl_jobs SET progress = @progress, attempt = @attempt, seq = @seq, updated_at = @now
         WHERE id = @id AND status = 'crawling' AND ${NEWER}`,
      ),
      finish: this.db.prepare(
        `UPDATE crawl_jobs SET status = 'done', progress = @progress, result = @result, attempt = @attempt, seq = @seq,
           updated_at = @now
         WHERE id = @id AND status = 'crawling'`,
      ),
      fail: this.db.prepare(
        `UPDATE crawl_jobs SET status = 'failed', error = @error, progress = coalesce(@progress, progress),
           attempt = coalesce(@attempt, attempt), seq = coalesce(@seq, seq), updated_at = @now
         WHERE id = @id AND status = 'crawling'`,
      ),
      active: this.db.prepare<[number], ActiveJob>(
        `SELECT caller, weight, claims FROM crawl_jobs
         WHERE status = 'crawling' AND expires_at > ? AND caller IS NOT NULL`,
      ),
      claim: this.db.prepare<[string]>(
        "UPDATE crawl_jobs SET claims = coalesce(claims, 0) + 1 WHERE id = ? AND status = 'crawling'",
      ),
      crawling: this.db.prepare<[number], Row>(`SELECT * FROM crawl_jobs WHERE status = 'crawling' AND expires_at > ?`),
      sweep: this.db.prepare('DELETE FROM crawl_jobs WHERE expires_at <= ?'),
      discard: this.db.prepare<[string]>("DELETE FROM crawl_jobs WHERE id = ? AND status = 'crawling' AND attempt = 0"),
    };
    const { get, active, claim } = this.statements;
    this.claimTurn = this.db.transaction((id: string, now: number): Claim => {
      const job = get.get(id, now);
      if (job?.status !== 'crawling') return { turn: 'gone' };
      if (!job.claims && job.caller !== null && owedToAnother(job.caller, active.all(now))) return { turn: 'wait' };
      claim.run(id);
      return { turn: 'run', attempt: (job.claims ?? 0) + 1 };
    });
  }

  async create(job: NewJob, perCaller?: number): Promise<boolean> {
    const row = {
      ...job,
      caller: job.caller ?? null,
      weight: job.weight ?? null,
      checkFragments: job.checkFragments ? 1 : null,
      options: job.scan ? JSON.stringify(job.scan) : null,
      input: job.input ?? null,
      progress: JSON.stringify(job.progress),
      createdAt: job.createdAt.getTime(),
      expiresAt: job.expiresAt.getTime(),
    };
    if (perCaller === undefined || job.caller === undefined) return this.statements.insert.run(row).changes > 0;
    return this.statements.insertWithin.run({ ...row, perCaller }).changes > 0;
  }

  /** Decided and counted in one immediate transaction: no other process on the file comes between. */
  async claim(id: string, now = new Date()): Promise<Claim> {
    return this.claimTurn.immediate(id, now.getTime());
  }

  async get(id: string, now = new Date()): Promise<CrawlJob | undefined> {
    const row = this.statements.get.get(id, now.getTime());
    return row && toJob(row);
  }

  async recordProgress(id: string, update: JobUpdate): Promise<boolean> {
    return (
      this.statements.progress.run({ id, ...update, progress: JSON.stringify(update.progress), now: Date.now() })
        .changes > 0
    );
  }

  async finish(id: string, update: JobUpdate & { result: PackedResult }): Promise<boolean> {
    const row = {
      id,
      attempt: update.attempt,
      seq: update.seq,
      progress: JSON.stringify(update.progress),
      result: update.result,
      now: Date.now(),
    };
    return this.statements.finish.run(row).changes > 0;
  }

  async fail(id: string, error: JobError, update?: JobUpdate): Promise<boolean> {
    const row = {
      id,
      error: JSON.stringify(error),
      progress: update ? JSON.stringify(update.progress) : null,
      attempt: update?.attempt ?? null,
      seq: update?.seq ?? null,
      now: Date.now(),
    };
    return this.statements.fail.run(row).changes > 0;
  }

  async discard(id: string): Promise<boolean> {
    return this.statements.discard.run(id).changes > 0;
  }

  async crawling(now = new Date()): Promise<CrawlJob[]> {
    return this.statements.crawling.all(now.getTime()).map(toJob);
  }

  async sweep(now = new Date()): Promise<number> {
    return this.statements.sweep.run(now.getTime()).changes;
  }

  async close(): Promise<void> {
    await this.file.release();
  }
}

function toJob(row: Row): CrawlJob {
  return {
    id: row.id,
    kind: row.kind as CrawlKind,
    url: row.url,
    caller: row.caller ?? undefined,
    weight: row.weight ?? undefined,
    claims: row.claims ?? 0,
    checkFragments: row.check_fragments ? true : undefined,
    scan: row.options ? (JSON.parse(row.options) as ScanOptions) : undefined,
    input: row.input ?? undefined,
    status: row.status as JobStatus,
    progress: JSON.parse(row.progress) as CrawlProgress,
    result: row.result ? unpackResult(asPacked(row.result)) : undefined,
    error: row.error ? (JSON.parse(row.error) as JobError) : undefined,
    attempt: row.attempt,
    seq: row.seq,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
    expiresAt: new Date(row.expires_at),
  };
}
