import { randomUUID } from 'node:crypto';
import mongoose, { type Connection, type Model } from 'mongoose';
import { mergedReads, SpreadCollections } from '../../jobs/spread-collections.js';
import { KnownRows } from './known-rows.js';
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

interface JobDoc {
  _id: string;
  pageCap: number;
  /** Rows under the cap, less the rows found no page (their room went back). */
  admitted: number;
  over: number;
  /** Rows admitted (inserted under the cap, or promoted from over it) and rows done: the tally. */
  opened?: number;
  finished?: number;
  context?: string;
  /** Written when the frontier opens: a job cleared and opened again is another generation (KnownRows). */
  generation?: string;
  expiresAt: Date;
}

interface RowDoc {
  /** `<jobId> <url>`: one row per page of a job, whichever replica inserts it first. */
  _id: string;
  jobId: string;
  url: string;
  depth: number;
  fromSitemap: boolean;
  /** Absent on rows written before the trap guard: 0. */
  shapeChain?: number;
  state: 'queued' | 'leased' | 'done' | 'over';
  owner?: string;
  leaseUntil?: Date;
  leases: number;
  queuedAt: Date;
  /** Its place in its insert (rows over the cap are admitted later in the order found). */
  batchIndex?: number;
  /** The insert that made the row (which of two racing inserters won). */
  insertedBy: string;
  result?: string;
  expiresAt: Date;
}

/** A lease taken: `<row id> <lease>`, inserted by the claim that takes it, so two claims never take one lease. */
interface ClaimDoc {
  _id: string;
  jobId: string;
  /** When the lease it took runs out: a claim that died before writing its row holds it no longer. */
  until: Date;
  expiresAt: Date;
}

const jobSchema = new mongoose.Schema<JobDoc>(
  {
    _id: String,
    pageCap: { type: Number, required: true },
    admitted: { type: Number, required: true },
    over: { type: Number, required: true },
    opened: Number,
    finished: Number,
    context: String,
    generation: String,
    expiresAt: { type: Date, required: true },
  },
  { versionKey: false },
);
jobSchema.index({ expiresAt: 1 }, { expireAfterSeconds: 0 });

const rowSchema = new mongoose.Schema<RowDoc>(
  {
    _id: String,
    jobId: { type: String, required: true },
    url: { type: String, required: true },
    depth: { type: Number, required: true },
    fromSitemap: { type: Boolean, required: true },
    shapeChain: Number,
    state: { type: String, required: true },
    owner: String,
    leaseUntil: Date,
    leases: { type: Number, required: true },
    queuedAt: { type: Date, required: true },
    batchIndex: Number,
    insertedBy: { type: String, required: true },
    result: String,
    expiresAt: { type: Date, required: true },
  },
  { versionKey: false },
);
rowSchema.index({ jobId: 1, state: 1, url: 1 });
// finishNoPage's next row over the cap, read off the index rather than sorted from every row over it.
rowSchema.index({ jobId: 1, state: 1, depth: 1, queuedAt: 1, batchIndex: 1 });
rowSchema.index({ expiresAt: 1 }, { expireAfterSeconds: 0 });

const claimSchema = new mongoose.Schema<ClaimDoc>(
  {
    _id: String,
    jobId: { type: String, required: true },
    until: { type: Date, required: true },
    expiresAt: { type: Date, required: true },
  },
  { versionKey: false },
);
claimSchema.index({ jobId: 1 });
claimSchema.index({ expiresAt: 1 }, { expireAfterSeconds: 0 });

const rowId = (jobId: string, url: string) => `${jobId} ${url}`;
/** Rows read from each collection at a time by the report's merged reads. */
const MERGED_READ = 32;

/** A claim that finds this many leases taken, each by a claim that died before writing the row, gives up. */
const DEAD_CLAIMS_SKIPPED = 3;

/** Where a test steps in, to order what replicas at once may do in any order. */
export interface FrontierSeams {
  /** Between an insert's reservation of room under the cap and the insert of its rows. */
  afterReserve?: (jobId: string) => Promise<void>;
}

/**
 * The distributed audit's frontier in the cluster store: a collection of rows (one per job and URL,
 * its `_id`), one of per-job counters and one of leases taken. A page's path reads and writes rows
 * by `_id` alone (docs/decisions/0498-frontier-by-id.md): a server that scans for anything else
 * (jongodb, the suite's) then answers it as fast as a key lookup. The page cap holds across
 * replicas by a compare-and-set on the job's admitted count; a replica that lost an insert race to
 * another gives its room back.
 */
export class MongoPageFrontier implements PageFrontier {
  /** Rows this handle saw in the store (the links every page has): an insert skips them unread. */
  private readonly knownRows = new KnownRows();

  private constructor(
    private readonly connection: Connection,
    private readonly jobs: Model<JobDoc>,
    /** Rows, and beside each row (the same key) its claims. */
    private readonly rows: SpreadCollections<RowDoc>,
    private readonly claims: SpreadCollections<ClaimDoc>,
    private readonly seams: FrontierSeams,
  ) {}

  static async connect(url: string, prefix = 'audit_frontier', seams: FrontierSeams = {}): Promise<MongoPageFrontier> {
    const connection = await mongoose
      .createConnection(url, { autoCreate: false, autoIndex: false, serverSelectionTimeoutMS: 10_000 })
      .asPromise();
    const jobs = connection.model<JobDoc>('AuditFrontierJob', jobSchema, `${prefix}_jobs`);
    await jobs.createIndexes();
    return new MongoPageFrontier(
      connection,
      jobs,
      await SpreadCollections.open(connection, 'AuditFrontierRow', rowSchema, `${prefix}_rows`),
      await SpreadCollections.open(connection, 'AuditFrontierClaim', claimSchema, `${prefix}_claims`),
      seams,
    );
  }

  async open(jobId: string, pageCap: number, expiresAt: Date): Promise<void> {
    await this.jobs.updateOne(
      { _id: jobId },
      { $setOnInsert: { pageCap, admitted: 0, over: 0, opened: 0, finished: 0, generation: randomUUID(), expiresAt } },
      { upsert: true },
    );
  }

  async insert(jobId: string, pages: readonly FoundPage[], expiresAt: Date, leaseTo?: LeaseTo): Promise<Admitted> {
    if (pages.length === 0) return { queued: [], over: 0 };
    // Rows this handle saw, none found lower now, need nothing: most of a page's links (one lookup).
    const job = await this.jobs.findById(jobId, { generation: 1 }).lean();
    const generation = job?.generation ?? '';
    const unknown = job ? this.knownRows.unknown(jobId, generation, pages) : pages;
    if (unknown.length === 0) return { queued: [], over: 0 };
    const admitted = await this.insertUnknown(jobId, unknown, expiresAt, leaseTo);
    // Each row exists now, at most as deep as found here.
    this.knownRows.note(
      jobId,
      generation,
      unknown.map((p) => ({ url: p.url, depth: p.depth, shapeChain: p.shapeChain ?? 0 })),
    );
    return admitted;
  }

  private async insertUnknown(
    jobId: string,
    pages: readonly FoundPage[],
    expiresAt: Date,
    leaseTo: LeaseTo | undefined,
  ): Promise<Admitted> {
    const unique = [...new Map(pages.map((p) => [p.url, p])).values()];
    // Room first, as if every page were new; what a known row took goes back below.
    const granted = await this.reserve(jobId, unique.length);
    await this.seams.afterReserve?.(jobId);
    const now = new Date();
    const insertedBy = randomUUID();
    const admittedState = (p: FoundPage): RowDoc['state'] => (p.done ? 'done' : leaseTo ? 'leased' : 'queued');
    const docs = unique.map((p, i): RowDoc => {
      const state = i < granted ? admittedState(p) : 'over';
      const leased = state === 'leased' && leaseTo;
      return {
        _id: rowId(jobId, p.url),
        jobId,
        url: p.url,
        depth: p.depth,
        fromSitemap: p.fromSitemap,
        shapeChain: p.shapeChain ?? 0,
        state,
        ...(leased ? { owner: leased.owner, leaseUntil: new Date(now.getTime() + leased.leaseMs) } : {}),
        leases: leased ? 1 : 0,
        queuedAt: now,
        batchIndex: i,
        insertedBy,
        ...(p.payload === undefined ? {} : { result: p.payload }),
        expiresAt,
      };
    });
    const mine = await this.insertNew(docs, unique);
    // A known row's room passes to the first rows of this insert over the cap, as the cap admits in order found.
    const lostUnder = docs.filter((d, i) => i < granted && !mine.has(d._id)).length;
    const promoted = docs.filter((d, i) => i >= granted && mine.has(d._id)).slice(0, lostUnder);
    for (const d of promoted) {
      const p = unique[d.batchIndex as number] as FoundPage;
      d.state = admittedState(p);
      const leased = d.state === 'leased' && leaseTo;
      await this.rows.of(d._id).updateOne(
        { _id: d._id },
        {
          $set: {
            state: d.state,
            ...(leased ? { owner: leased.owner, leaseUntil: new Date(now.getTime() + leased.leaseMs), leases: 1 } : {}),
          },
        },
      );
    }
    const admitted = docs.filter((d) => mine.has(d._id) && d.state !== 'over');
    const over = docs.filter((d) => mine.has(d._id) && d.state === 'over').length;
    const done = admitted.filter((d) => d.state === 'done').length;
    const givenBack = granted - admitted.length;
    const changes = { admitted: -givenBack, over, opened: admitted.length, finished: done };
    // Only the counters that change: jongodb stores an increment by -0 as a double, which no longer
    // equals the integer the compare-and-set of `reserve` matches.
    const inc = Object.fromEntries(Object.entries(changes).filter(([, n]) => n !== 0));
    if (Object.keys(inc).length > 0) await this.jobs.updateOne({ _id: jobId }, { $inc: inc });
    const ids = new Set(admitted.map((d) => d._id));
    const queued = unique.filter((p) => ids.has(rowId(jobId, p.url)));
    // Room given back, or rows put over the cap: another replica may have done the other meanwhile
    // (it inserted over the cap a row this insert held room for, then lost to this one). Whichever
    // comes second sees both, and the first rows over the cap take the room. Rows leased to their
    // inserter (links) are its own to check: none is taken here.
    if ((givenBack > 0 || over > 0) && !leaseTo) queued.push(...(await this.admitOver(jobId)));
    return { queued, over };
  }

  /** The first rows over the cap, while the job has room for them: each taken by a guarded update. */
  private async admitOver(jobId: string): Promise<FoundPage[]> {
    const taken: FoundPage[] = [];
    for (;;) {
      const job = await this.jobs.findById(jobId, { over: 1 }).lean();
      if (!job || job.over <= 0 || (await this.reserve(jobId, 1)) === 0) return taken;
      const next = await this.firstOver(jobId);
      const moved =
        next !== undefined &&
        (
          await this.rows
            .of(next._id)
            .updateOne({ _id: next._id, state: 'over' }, { $set: { state: 'queued', queuedAt: new Date() } })
        ).modifiedCount === 1;
      if (!moved) {
        // Another replica took that row (or none is left): the room goes back, for the next look.
        await this.jobs.updateOne({ _id: jobId }, { $inc: { admitted: -1 } });
        return taken;
      }
      await this.jobs.updateOne({ _id: jobId }, { $inc: { over: -1, opened: 1 } });
      taken.push({ url: next.url, depth: next.depth, fromSitemap: next.fromSitemap, shapeChain: next.shapeChain ?? 0 });
    }
  }

  /** Takes up to `wanted` of the job's remaining room (a compare-and-set on its admitted count). */
  private async reserve(jobId: string, wanted: number): Promise<number> {
    for (;;) {
      const job = await this.jobs.findById(jobId, { pageCap: 1, admitted: 1 }).lean();
      if (!job) throw new Error(`no frontier for job ${jobId}`);
      const room = Math.min(wanted, Math.max(0, job.pageCap - job.admitted));
      if (room === 0) return 0;
      const taken = await this.jobs.updateOne({ _id: jobId, admitted: job.admitted }, { $inc: { admitted: room } });
      if (taken.modifiedCount === 1) return room;
    }
  }

  /**
   * Inserts the rows; returns the ids this call inserted. A row known already keeps the lower depth
   * and same-shape chain (each read and written by its `_id`: not every server knows $min).
   */
  private async insertNew(docs: RowDoc[], pages: readonly FoundPage[]): Promise<Set<string>> {
    const { clashed } = await this.rows.insertNew(docs);
    const unsure = new Set(clashed.map((d) => d._id));
    const mine = new Set(docs.filter((d) => !unsure.has(d._id)).map((d) => d._id));
    if (unsure.size === 0) return mine;
    // Of the collections that met a duplicate, which went in: rows carrying this insert's token. A
    // server may stop at the first duplicate (jongodb does): the rest go in one by one.
    const first = docs[0] as RowDoc;
    await Promise.all(
      docs.map(async ({ _id, ...doc }, i) => {
        if (!unsure.has(_id)) return;
        const rows = this.rows.of(_id);
        let row = await rows.findById(_id, { insertedBy: 1, depth: 1, shapeChain: 1 }).lean();
        if (!row) {
          const put = await rows.updateOne({ _id }, { $setOnInsert: doc }, { upsert: true });
          if (put.upsertedCount === 1) return void mine.add(_id);
          row = await rows.findById(_id, { insertedBy: 1, depth: 1, shapeChain: 1 }).lean();
          if (!row) return;
        }
        if (row.insertedBy === first.insertedBy) return void mine.add(_id);
        const page = pages[i] as FoundPage;
        const lower = {
          ...(page.depth < row.depth ? { depth: page.depth } : {}),
          ...((page.shapeChain ?? 0) < (row.shapeChain ?? 0) ? { shapeChain: page.shapeChain ?? 0 } : {}),
        };
        if (Object.keys(lower).length > 0) await rows.updateOne({ _id }, { $set: lower });
      }),
    );
    return mine;
  }

  /**
   * Reads the row; if it is free (queued, or its lease ran out) takes its next lease by inserting
   * that lease's claim (a second claim of one lease fails on its key), then writes the row.
   */
  async claim(jobId: string, url: string, owner: string, leaseMs: number, now = new Date()) {
    const _id = rowId(jobId, url);
    const rows = this.rows.of(_id);
    const claims = this.claims.of(_id);
    const row = await rows.findById(_id).lean();
    if (
      !row ||
      !(row.state === 'queued' || (row.state === 'leased' && (row.leaseUntil?.getTime() ?? 0) <= now.getTime()))
    )
      return undefined;
    const until = new Date(now.getTime() + leaseMs);
    for (let lease = row.leases + 1; lease <= row.leases + DEAD_CLAIMS_SKIPPED; lease++) {
      // Beside its row (the row's key), not by its own.
      const claim = { _id: `${_id} ${lease}`, jobId, until, expiresAt: row.expiresAt };
      if ((await this.claims.insertNew([claim], () => _id)).clashed.length > 0) {
        // Taken: by a live claim (the row is its), or by one that died before writing the row.
        const taken = await claims.findById(claim._id, { until: 1 }).lean();
        if (!taken || taken.until.getTime() > now.getTime()) return undefined;
        continue;
      }
      await rows.updateOne({ _id }, { $set: { state: 'leased', owner, leaseUntil: until, leases: lease } });
      return {
        url: row.url,
        depth: row.depth,
        fromSitemap: row.fromSitemap,
        shapeChain: row.shapeChain ?? 0,
        lease,
      } as LeasedPage;
    }
    return undefined;
  }

  /** The row, when `owner` holds its lease. */
  private async held(jobId: string, url: string, owner: string): Promise<RowDoc | undefined> {
    const _id = rowId(jobId, url);
    const row = await this.rows.of(_id).findById(_id, { owner: 1, state: 1 }).lean();
    return row?.state === 'leased' && row.owner === owner ? (row as RowDoc) : undefined;
  }

  async renew(jobId: string, urls: readonly string[], owner: string, leaseMs: number, now = new Date()) {
    const held = await Promise.all(
      urls.map(async (url) => {
        if (!(await this.held(jobId, url, owner))) return 0;
        const _id = rowId(jobId, url);
        await this.rows.of(_id).updateOne({ _id }, { $set: { leaseUntil: new Date(now.getTime() + leaseMs) } });
        return 1;
      }),
    );
    return held.reduce<number>((n, one) => n + one, 0);
  }

  async finish(jobId: string, url: string, owner: string, result?: string): Promise<boolean> {
    if (!(await this.held(jobId, url, owner))) return false;
    const _id = rowId(jobId, url);
    await this.rows
      .of(_id)
      .updateOne(
        { _id },
        { $set: { state: 'done', ...(result === undefined ? {} : { result }) }, $unset: { leaseUntil: 1 } },
      );
    await this.jobs.updateOne({ _id: jobId }, { $inc: { finished: 1 } });
    return true;
  }

  async finishNoPage(jobId: string, url: string, owner: string, result?: string) {
    if (!(await this.held(jobId, url, owner))) return undefined;
    // The room passes to the first row over the cap before the row is finished, so the audit never
    // looks finished in between (no row queued or leased) while a page is still to come.
    const job = await this.jobs.findById(jobId, { over: 1 }).lean();
    const next = (job?.over ?? 0) > 0 ? await this.firstOver(jobId) : undefined;
    if (next) {
      await this.rows.of(next._id).updateOne({ _id: next._id }, { $set: { state: 'queued', queuedAt: new Date() } });
      await this.jobs.updateOne({ _id: jobId }, { $inc: { over: -1, opened: 1 } });
    }
    if (!(await this.finish(jobId, url, owner, result))) {
      // Another worker took the row over meanwhile: the room was not ours to pass on.
      if (next) {
        await this.rows.of(next._id).updateOne({ _id: next._id }, { $set: { state: 'over' } });
        await this.jobs.updateOne({ _id: jobId }, { $inc: { over: 1, opened: -1 } });
      }
      return undefined;
    }
    if (!next) {
      await this.jobs.updateOne({ _id: jobId }, { $inc: { admitted: -1 } });
      return [];
    }
    return [{ url: next.url, depth: next.depth, fromSitemap: next.fromSitemap, shapeChain: next.shapeChain ?? 0 }];
  }

  /** The row over the cap admitted next: the lowest depth, then the first found. */
  private async firstOver(jobId: string): Promise<RowDoc | undefined> {
    const firsts = await Promise.all(
      this.rows.all.map((rows) =>
        rows.find({ jobId, state: 'over' }).sort({ depth: 1, queuedAt: 1, batchIndex: 1 }).limit(1).lean(),
      ),
    );
    const key = (r: RowDoc) => [r.depth, r.queuedAt.getTime(), r.batchIndex ?? 0];
    const before = (a: RowDoc, b: RowDoc) => {
      const [x, y] = [key(a), key(b)];
      const i = x.findIndex((v, k) => v !== y[k]);
      return i >= 0 && (x[i] as number) < (y[i] as number);
    };
    return firsts.flat().reduce<RowDoc | undefined>((best, r) => (!best || before(r, best) ? r : best), undefined);
  }

  async setContext(jobId: string, context: string): Promise<void> {
    await this.jobs.updateOne({ _id: jobId }, { $set: { context } });
  }

  async context(jobId: string): Promise<string | undefined> {
    return (await this.jobs.findById(jobId, { context: 1 }).lean())?.context ?? undefined;
  }

  async *results(jobId: string, batch = 500): AsyncGenerator<RowResult[]> {
    type Row = Pick<RowDoc, 'url' | 'result' | 'state'>;
    const rows = mergedReads<RowDoc, Row>(
      this.rows,
      (rows, after, limit) =>
        rows
          .find({ jobId, url: { $gt: after?.url ?? '' }, result: { $exists: true } }, { url: 1, result: 1, state: 1 })
          .sort({ url: 1 })
          .limit(limit)
          .lean<Row[]>(),
      (a, b) => (a.url < b.url ? -1 : a.url > b.url ? 1 : 0),
      MERGED_READ,
    );
    let out: RowResult[] = [];
    for await (const r of rows) {
      out.push({ url: r.url, result: r.result as string, done: r.state === 'done' });
      if (out.length >= batch) {
        yield out;
        out = [];
      }
    }
    if (out.length > 0) yield out;
  }

  async resultsOf(jobId: string, urls: readonly string[]): Promise<RowResult[]> {
    if (urls.length === 0) return [];
    const found = await Promise.all(
      this.rows
        .grouped(urls, (u) => rowId(jobId, u))
        .map(([rows, group]) =>
          rows
            .find(
              { _id: { $in: group.map((u) => rowId(jobId, u)) }, result: { $exists: true } },
              { url: 1, result: 1, state: 1 },
            )
            .lean(),
        ),
    );
    return found.flat().map((r) => ({ url: r.url, result: r.result as string, done: r.state === 'done' }));
  }

  async counts(jobId: string): Promise<FrontierCounts> {
    const count = (state: RowDoc['state']) => this.rows.sum((rows) => rows.countDocuments({ jobId, state }));
    const [queued, leased, done, job] = await Promise.all([
      count('queued'),
      count('leased'),
      count('done'),
      this.jobs.findById(jobId, { over: 1 }).lean(),
    ]);
    return { queued, leased, done, over: job?.over ?? 0 };
  }

  async tally(jobId: string): Promise<FrontierTally> {
    const job = await this.jobs.findById(jobId, { opened: 1, finished: 1, over: 1 }).lean();
    const done = job?.finished ?? 0;
    return { open: Math.max(0, (job?.opened ?? 0) - done), done, over: job?.over ?? 0 };
  }

  async stranded(jobId: string, queuedBefore: Date, now: Date, limit: number): Promise<string[]> {
    const urls: string[] = [];
    for (const rows of this.rows.all) {
      if (urls.length >= limit) break;
      const found = await rows
        .find(
          {
            jobId,
            $or: [
              { state: 'queued', queuedAt: { $lte: queuedBefore } },
              { state: 'leased', leaseUntil: { $lte: now } },
            ],
          },
          { url: 1 },
        )
        .limit(limit - urls.length)
        .lean();
      if (found.length > 0)
        await rows.updateMany({ _id: { $in: found.map((r) => r._id) } }, { $set: { queuedAt: now } });
      urls.push(...found.map((r) => r.url));
    }
    return urls;
  }

  async clear(jobId: string): Promise<void> {
    this.knownRows.forget(jobId);
    await this.claims.sum(async (claims) => (await claims.deleteMany({ jobId })).deletedCount);
    await this.rows.sum(async (rows) => (await rows.deleteMany({ jobId })).deletedCount);
    await this.jobs.deleteOne({ _id: jobId });
  }

  async sweep(now = new Date()): Promise<number> {
    await this.jobs.deleteMany({ expiresAt: { $lte: now } });
    await this.claims.sum(async (claims) => (await claims.deleteMany({ expiresAt: { $lte: now } })).deletedCount);
    return this.rows.sum(async (rows) => (await rows.deleteMany({ expiresAt: { $lte: now } })).deletedCount);
  }

  async close(): Promise<void> {
    await this.connection.close();
  }
}
