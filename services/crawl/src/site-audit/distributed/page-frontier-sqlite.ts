import { randomUUID } from 'node:crypto';
import { setUpSqlite } from '@webutil/kit';
import type Database from 'better-sqlite3';
import type { GroupCommit } from '../../jobs/group-commit.js';
import { SqliteFile } from '../../jobs/sqlite-file.js';
import { KnownRows, type NotedRow } from './known-rows.js';
import type {
  Admitted,
  FoundPage,
  FrontierCounts,
  FrontierTally,
  LeasedPage,
  LeaseTo,
  PageFrontier,
  RowResult,
} from './page-frontier.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS audit_frontier_jobs (
  job_id TEXT PRIMARY KEY,
  page_cap INTEGER NOT NULL,
  admitted INTEGER NOT NULL DEFAULT 0,
  over INTEGER NOT NULL DEFAULT 0,
  context TEXT,
  expires_at INTEGER NOT NULL,
  generation TEXT
);
CREATE TABLE IF NOT EXISTS audit_frontier (
  job_id TEXT NOT NULL,
  url TEXT NOT NULL,
  depth INTEGER NOT NULL,
  from_sitemap INTEGER NOT NULL,
  shape_chain INTEGER NOT NULL DEFAULT 0,
  state TEXT NOT NULL,
  owner TEXT,
  lease_until INTEGER,
  leases INTEGER NOT NULL DEFAULT 0,
  queued_at INTEGER NOT NULL,
  result TEXT,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (job_id, url)
);
-- By depth within a state (then rowid, in every index): the next row over the cap is read off it, not sorted.
DROP INDEX IF EXISTS audit_frontier_state;
CREATE INDEX IF NOT EXISTS audit_frontier_state_depth ON audit_frontier (job_id, state, depth);
-- Rows go with their job's row (sweep): an index of their own expiry would cost every insert a write.
DROP INDEX IF EXISTS audit_frontier_expires_at;
CREATE INDEX IF NOT EXISTS audit_frontier_jobs_expires_at ON audit_frontier_jobs (expires_at);
`;

interface Row {
  url: string;
  depth: number;
  from_sitemap: number;
  shape_chain: number;
  leases: number;
}

/** The distributed audit's frontier in the embedded store: two tables of the crawl jobs' SQLite file. */
export class SqlitePageFrontier implements PageFrontier {
  private readonly db: Database.Database;
  private readonly s;
  private readonly insertAll: (
    jobId: string,
    pages: readonly FoundPage[],
    at: number,
    leaseTo?: LeaseTo,
  ) => Admitted & { generation: string; noted: NotedRow[] };
  /** Rows this handle saw in the store (the links every page has): an insert skips them unread. */
  private readonly knownRows = new KnownRows();
  private readonly claimOne: (
    jobId: string,
    url: string,
    owner: string,
    until: number,
    now: number,
  ) => LeasedPage | undefined;
  private readonly finishNoPageOne: (
    jobId: string,
    url: string,
    owner: string,
    result: string | null,
    now: number,
  ) => FoundPage[] | undefined;
  private readonly strandedAll: (jobId: string, before: number, now: number, limit: number) => string[];

  private readonly file: SqliteFile;
  /** The workers' writes (claim, renew, insert, finish) committed a group at a time, with the file's others. */
  private readonly group: GroupCommit;

  constructor(file: string) {
    this.file = SqliteFile.acquire(file);
    this.db = setUpSqlite(this.file.db, {
      schema: SCHEMA,
      addedColumns: [
        { table: 'audit_frontier', column: 'shape_chain', type: 'INTEGER NOT NULL DEFAULT 0' },
        { table: 'audit_frontier_jobs', column: 'generation', type: 'TEXT' },
      ],
    });
    this.s = {
      open: this.db.prepare(
        'INSERT OR IGNORE INTO audit_frontier_jobs (job_id, page_cap, expires_at, generation) VALUES (?, ?, ?, ?)',
      ),
      job: this.db.prepare<[string], { page_cap: number; admitted: number; generation: string | null }>(
        'SELECT page_cap, admitted, generation FROM audit_frontier_jobs WHERE job_id = ?',
      ),
      admit: this.db.prepare<[number, number, string]>(
        'UPDATE audit_frontier_jobs SET admitted = admitted + ?, over = over + ? WHERE job_id = ?',
      ),
      // Only a row that changes is written: most pages meet rows they cannot lower (nav links).
      lower: this.db.prepare<[number, number, string, string, number, number]>(
        `UPDATE audit_frontier SET depth = min(depth, ?), shape_chain = min(shape_chain, ?)
         WHERE job_id = ? AND url = ? AND (depth > ? OR shape_chain > ?)`,
      ),
      known: this.db.prepare<[string, string], { url: string; depth: number; shape_chain: number }>(
        `SELECT url, depth, shape_chain FROM audit_frontier
         WHERE job_id = ? AND url IN (SELECT value FROM json_each(?))`,
      ),
      insert: this.db.prepare(
        `INSERT OR IGNORE INTO audit_frontier
         (job_id, url, depth, from_sitemap, shape_chain, state, owner, lease_until, leases, queued_at, result,
          expires_at)
         VALUES (@jobId, @url, @depth, @fromSitemap, @shapeChain, @state, @owner, @leaseUntil, @leases, @now, @payload,
          @expiresAt)`,
      ),
      lease: this.db.prepare<[string, number, string, string, number], Row>(
        `UPDATE audit_frontier SET state = 'leased', owner = ?, lease_until = ?, leases = leases + 1
         WHERE job_id = ? AND url = ? AND (state = 'queued' OR (state = 'leased' AND lease_until <= ?))
         RETURNING url, depth, from_sitemap, shape_chain, leases`,
      ),
      renew: this.db.prepare<[number, string, string, string]>(
        `UPDATE audit_frontier SET lease_until = ? WHERE job_id = ? AND url = ? AND owner = ? AND state = 'leased'`,
      ),
      finish: this.db.prepare<[string | null, string, string, string]>(
        `UPDATE audit_frontier SET state = 'done', lease_until = NULL, result = ?
         WHERE job_id = ? AND url = ? AND owner = ? AND state = 'leased'`,
      ),
      nextOver: this.db.prepare<[string], Row>(
        `SELECT url, depth, from_sitemap, shape_chain, leases FROM audit_frontier
         WHERE job_id = ? AND state = 'over' ORDER BY depth, rowid LIMIT 1`,
      ),
      promote: this.db.prepare<[number, string, string]>(
        `UPDATE audit_frontier SET state = 'queued', queued_at = ? WHERE job_id = ? AND url = ?`,
      ),
      setContext: this.db.prepare<[string, string]>('UPDATE audit_frontier_jobs SET context = ? WHERE job_id = ?'),
      context: this.db.prepare<[string], { context: string | null }>(
        'SELECT context FROM audit_frontier_jobs WHERE job_id = ?',
      ),
      results: this.db.prepare<[string, string, number], { url: string; result: string; state: string }>(
        `SELECT url, result, state FROM audit_frontier WHERE job_id = ? AND result IS NOT NULL
         AND url > ? ORDER BY url LIMIT ?`,
      ),
      resultOf: this.db.prepare<[string, string], { url: string; result: string; state: string }>(
        'SELECT url, result, state FROM audit_frontier WHERE job_id = ? AND url = ? AND result IS NOT NULL',
      ),
      counts: this.db.prepare<[string], { state: string; n: number }>(
        'SELECT state, count(*) AS n FROM audit_frontier WHERE job_id = ? GROUP BY state',
      ),
      over: this.db.prepare<[string], { over: number }>('SELECT over FROM audit_frontier_jobs WHERE job_id = ?'),
      stranded: this.db.prepare<[string, number, number, number], { url: string }>(
        `SELECT url FROM audit_frontier WHERE job_id = ?
         AND ((state = 'queued' AND queued_at <= ?) OR (state = 'leased' AND lease_until <= ?)) LIMIT ?`,
      ),
      touch: this.db.prepare<[number, string, string]>(
        'UPDATE audit_frontier SET queued_at = ? WHERE job_id = ? AND url = ?',
      ),
      clearRows: this.db.prepare<[string]>('DELETE FROM audit_frontier WHERE job_id = ?'),
      clearJob: this.db.prepare<[string]>('DELETE FROM audit_frontier_jobs WHERE job_id = ?'),
      sweepRows: this.db.prepare<[number]>(
        'DELETE FROM audit_frontier WHERE job_id IN (SELECT job_id FROM audit_frontier_jobs WHERE expires_at <= ?)',
      ),
      sweepJobs: this.db.prepare<[number]>('DELETE FROM audit_frontier_jobs WHERE expires_at <= ?'),
    };
    this.group = this.file.group;
    const s = this.s;
    this.insertAll = (jobId, pages, expiresAt, leaseTo) => {
      const job = s.job.get(jobId);
      if (!job) throw new Error(`no frontier for job ${jobId}`);
      const generation = job.generation ?? '';
      const noted: NotedRow[] = [];
      let room = job.page_cap - job.admitted;
      const queued: FoundPage[] = [];
      let over = 0;
      const now = Date.now();
      // One read of the rows already known (most of a page's links): no write is tried for them.
      const known = new Map(s.known.all(jobId, JSON.stringify(pages.map((p) => p.url))).map((r) => [r.url, r]));
      for (const page of pages) {
        const shapeChain = page.shapeChain ?? 0;
        const row = known.get(page.url);
        if (row) {
          if (row.depth > page.depth || row.shape_chain > shapeChain)
            s.lower.run(page.depth, shapeChain, jobId, page.url, page.depth, shapeChain);
          noted.push({
            url: page.url,
            depth: Math.min(row.depth, page.depth),
            shapeChain: Math.min(row.shape_chain, shapeChain),
          });
          continue;
        }
        const state = room <= 0 ? 'over' : page.done ? 'done' : leaseTo ? 'leased' : 'queued';
        const leased = state === 'leased' && leaseTo;
        const inserted = {
          jobId,
          url: page.url,
          depth: page.depth,
          fromSitemap: page.fromSitemap ? 1 : 0,
          shapeChain,
          state,
          owner: leased ? leased.owner : null,
          leaseUntil: leased ? now + leased.leaseMs : null,
          leases: leased ? 1 : 0,
          now,
          payload: page.payload ?? null,
          expiresAt,
        };
        // A URL twice in one insert: its second is known.
        if (s.insert.run(inserted).changes === 0) {
          s.lower.run(page.depth, shapeChain, jobId, page.url, page.depth, shapeChain);
          continue;
        }
        noted.push({ url: page.url, depth: page.depth, shapeChain });
        if (state !== 'over') {
          room--;
          queued.push(page);
        } else over++;
      }
      if (queued.length > 0 || over > 0) s.admit.run(queued.length, over, jobId);
      return { queued, over, generation, noted };
    };
    this.claimOne = (jobId, url, owner, until, now) => {
      const row = s.lease.get(owner, until, jobId, url, now);
      return (
        row && {
          url: row.url,
          depth: row.depth,
          fromSitemap: row.from_sitemap === 1,
          shapeChain: row.shape_chain,
          lease: row.leases,
        }
      );
    };
    this.finishNoPageOne = (jobId, url, owner, result, now) => {
      if (s.finish.run(result, jobId, url, owner).changes !== 1) return undefined;
      s.admit.run(-1, 0, jobId);
      const next = s.nextOver.get(jobId);
      if (!next) return [];
      s.promote.run(now, jobId, next.url);
      s.admit.run(1, -1, jobId);
      return [{ url: next.url, depth: next.depth, fromSitemap: next.from_sitemap === 1, shapeChain: next.shape_chain }];
    };
    this.strandedAll = (jobId, before, now, limit) => {
      const urls = s.stranded.all(jobId, before, now, limit).map((r) => r.url);
      for (const url of urls) s.touch.run(now, jobId, url);
      return urls;
    };
  }

  async open(jobId: string, pageCap: number, expiresAt: Date): Promise<void> {
    this.s.open.run(jobId, pageCap, expiresAt.getTime(), randomUUID());
  }

  async insert(jobId: string, pages: readonly FoundPage[], expiresAt: Date, leaseTo?: LeaseTo): Promise<Admitted> {
    // Pages no lower than rows this handle saw need nothing: often all of them, and then no write is
    // asked for. The insert takes effect at this read: before any clear that comes after it.
    const job = this.s.job.get(jobId);
    const unknown = job ? this.knownRows.unknown(jobId, job.generation ?? '', pages) : pages;
    if (job && unknown.length === 0) return { queued: [], over: 0 };
    const { generation, noted, ...admitted } = await this.group.run(() =>
      this.insertAll(jobId, unknown, expiresAt.getTime(), leaseTo),
    );
    // Only once committed: a group rolled back wrote none of them.
    this.knownRows.note(jobId, generation, noted);
    return admitted;
  }

  async claim(jobId: string, url: string, owner: string, leaseMs: number, now = new Date()) {
    return this.group.run(() => this.claimOne(jobId, url, owner, now.getTime() + leaseMs, now.getTime()));
  }

  async renew(jobId: string, urls: readonly string[], owner: string, leaseMs: number, now = new Date()) {
    const until = now.getTime() + leaseMs;
    return this.group.run(() => urls.reduce((n, url) => n + this.s.renew.run(until, jobId, url, owner).changes, 0));
  }

  async finish(jobId: string, url: string, owner: string, result?: string): Promise<boolean> {
    return this.group.run(() => this.s.finish.run(result ?? null, jobId, url, owner).changes === 1);
  }

  async finishNoPage(jobId: string, url: string, owner: string, result?: string) {
    return this.group.run(() => this.finishNoPageOne(jobId, url, owner, result ?? null, Date.now()));
  }

  async setContext(jobId: string, context: string): Promise<void> {
    this.s.setContext.run(context, jobId);
  }

  async context(jobId: string): Promise<string | undefined> {
    return this.s.context.get(jobId)?.context ?? undefined;
  }

  async *results(jobId: string, batch = 500): AsyncGenerator<RowResult[]> {
    let rows = this.s.results.all(jobId, '', batch);
    while (rows.length > 0) {
      yield rows.map((r) => ({ url: r.url, result: r.result, done: r.state === 'done' }));
      rows = this.s.results.all(jobId, (rows[rows.length - 1] as { url: string }).url, batch);
    }
  }

  async resultsOf(jobId: string, urls: readonly string[]): Promise<RowResult[]> {
    return urls.flatMap((url) => {
      const row = this.s.resultOf.get(jobId, url);
      return row ? [{ url: row.url, result: row.result, done: row.state === 'done' }] : [];
    });
  }

  async counts(jobId: string): Promise<FrontierCounts> {
    const counts: FrontierCounts = { queued: 0, leased: 0, done: 0, over: this.s.over.get(jobId)?.over ?? 0 };
    for (const { state, n } of this.s.counts.all(jobId))
      if (state === 'queued' || state === 'leased' || state === 'done') counts[state] = n;
    return counts;
  }

  /** Counting is cheap here: the tally is the count. */
  async tally(jobId: string): Promise<FrontierTally> {
    const { queued, leased, done, over } = await this.counts(jobId);
    return { open: queued + leased, done, over };
  }

  async stranded(jobId: string, queuedBefore: Date, now: Date, limit: number): Promise<string[]> {
    return this.group.run(() => this.strandedAll(jobId, queuedBefore.getTime(), now.getTime(), limit));
  }

  async clear(jobId: string): Promise<void> {
    this.knownRows.forget(jobId);
    this.db.transaction(() => {
      this.s.clearRows.run(jobId);
      this.s.clearJob.run(jobId);
    })();
  }

  async sweep(now = new Date()): Promise<number> {
    const at = now.getTime();
    return this.db.transaction(() => {
      const rows = this.s.sweepRows.run(at).changes;
      this.s.sweepJobs.run(at);
      return rows;
    })();
  }

  async close(): Promise<void> {
    await this.file.release();
  }
}
