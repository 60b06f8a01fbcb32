import { randomUUID } from 'node:crypto';
import mongoose, { type Connection, type Model } from 'mongoose';
import type { Admitted, FoundPage, FrontierCounts, LeasedPage, PageFrontier, RowResult } from './page-frontier.js';

interface JobDoc {
  _id: string;
  pageCap: number;
  admitted: number;
  over: number;
  context?: string;
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

const jobSchema = new mongoose.Schema<JobDoc>(
  {
    _id: String,
    pageCap: { type: Number, required: true },
    admitted: { type: Number, required: true },
    over: { type: Number, required: true },
    context: String,
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

const DUPLICATE_KEY = 11000;
const rowId = (jobId: string, url: string) => `${jobId} ${url}`;

/**
 * The distributed audit's frontier in the cluster store: a collection of rows (one per job and URL,
 * its `_id`) and one of per-job counters. The page cap holds across replicas by a compare-and-set
 * on the job's admitted count; a replica that lost an insert race to another gives its room back.
 */
export class MongoPageFrontier implements PageFrontier {
  private constructor(
    private readonly connection: Connection,
    private readonly jobs: Model<JobDoc>,
    private readonly rows: Model<RowDoc>,
  ) {}

  static async connect(url: string, prefix = 'audit_frontier'): Promise<MongoPageFrontier> {
    const connection = await mongoose
      .createConnection(url, { autoCreate: false, autoIndex: false, serverSelectionTimeoutMS: 10_000 })
      .asPromise();
    const jobs = connection.model<JobDoc>('AuditFrontierJob', jobSchema, `${prefix}_jobs`);
    const rows = connection.model<RowDoc>('AuditFrontierRow', rowSchema, prefix);
    await jobs.createIndexes();
    await rows.createIndexes();
    return new MongoPageFrontier(connection, jobs, rows);
  }

  async open(jobId: string, pageCap: number, expiresAt: Date): Promise<void> {
    await this.jobs.updateOne(
      { _id: jobId },
      { $setOnInsert: { pageCap, admitted: 0, over: 0, expiresAt } },
      { upsert: true },
    );
  }

  async insert(jobId: string, pages: readonly FoundPage[], expiresAt: Date): Promise<Admitted> {
    if (pages.length === 0) return { queued: [], over: 0 };
    const unique = [...new Map(pages.map((p) => [p.url, p])).values()];
    const known = new Set(
      (await this.rows.find({ _id: { $in: unique.map((p) => rowId(jobId, p.url)) } }, { url: 1 }).lean()).map(
        (r) => r.url,
      ),
    );
    const lower = unique.filter((p) => known.has(p.url));
    if (lower.length > 0)
      await this.rows.bulkWrite(
        // Each kept lowest by its own conditional set (not every server knows $min).
        lower.flatMap((p) => [
          {
            updateOne: {
              filter: { _id: rowId(jobId, p.url), depth: { $gt: p.depth } },
              update: { $set: { depth: p.depth } },
            },
          },
          {
            updateOne: {
              filter: { _id: rowId(jobId, p.url), shapeChain: { $gt: p.shapeChain ?? 0 } },
              update: { $set: { shapeChain: p.shapeChain ?? 0 } },
            },
          },
        ]),
        { ordered: false },
      );
    const fresh = unique.filter((p) => !known.has(p.url));
    if (fresh.length === 0) return { queued: [], over: 0 };
    const granted = await this.reserve(jobId, fresh.length);
    const now = new Date();
    const insertedBy = randomUUID();
    const doc = (p: FoundPage, state: RowDoc['state'], batchIndex: number) => ({
      _id: rowId(jobId, p.url),
      jobId,
      url: p.url,
      depth: p.depth,
      fromSitemap: p.fromSitemap,
      shapeChain: p.shapeChain ?? 0,
      state,
      leases: 0,
      queuedAt: now,
      batchIndex,
      insertedBy,
      ...(p.payload === undefined ? {} : { result: p.payload }),
      expiresAt,
    });
    const queuedIds = await this.insertNew(fresh.slice(0, granted).map((p, i) => doc(p, 'queued', i)));
    const overIds = await this.insertNew(fresh.slice(granted).map((p, i) => doc(p, 'over', granted + i)));
    // Rows another replica inserted first were not ours to admit: their room goes back.
    const lost = granted - queuedIds.size;
    if (lost > 0 || overIds.size > 0)
      await this.jobs.updateOne({ _id: jobId }, { $inc: { admitted: -lost, over: overIds.size } });
    return { queued: fresh.filter((p) => queuedIds.has(rowId(jobId, p.url))), over: overIds.size };
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

  /** Inserts the rows; returns the ids this call inserted (a duplicate is another inserter's). */
  private async insertNew(docs: RowDoc[]): Promise<Set<string>> {
    if (docs.length === 0) return new Set();
    try {
      await this.rows.collection.insertMany(docs as never[], { ordered: false });
      return new Set(docs.map((d) => d._id));
    } catch (err) {
      // The driver names one write error or several; a server may name only the code.
      const failed = err as { code?: number; writeErrors?: { code?: number } | { code?: number }[] };
      const errors = [failed.writeErrors ?? []].flat();
      const duplicates =
        errors.length > 0 ? errors.every((e) => e.code === DUPLICATE_KEY) : failed.code === DUPLICATE_KEY;
      if (!duplicates) throw err;
      // Which of them went in: those whose row carries this insert's token.
      const first = docs[0] as RowDoc;
      const mine = new Set(
        (
          await this.rows
            .find({ _id: { $in: docs.map((d) => d._id) }, insertedBy: first.insertedBy }, { _id: 1 })
            .lean()
        ).map((d) => d._id),
      );
      // A server may stop at the first duplicate (jongodb does): the rest go in one by one.
      for (const { _id, ...doc } of docs) {
        if (mine.has(_id)) continue;
        const put = await this.rows.updateOne({ _id }, { $setOnInsert: doc }, { upsert: true });
        if (put.upsertedCount === 1) mine.add(_id);
      }
      return mine;
    }
  }

  async claim(jobId: string, url: string, owner: string, leaseMs: number, now = new Date()) {
    const row = await this.rows
      .findOneAndUpdate(
        {
          _id: rowId(jobId, url),
          $or: [{ state: 'queued' }, { state: 'leased', leaseUntil: { $lte: now } }],
        },
        { $set: { state: 'leased', owner, leaseUntil: new Date(now.getTime() + leaseMs) }, $inc: { leases: 1 } },
        { returnDocument: 'after' },
      )
      .lean();
    return row
      ? ({
          url: row.url,
          depth: row.depth,
          fromSitemap: row.fromSitemap,
          shapeChain: row.shapeChain ?? 0,
          lease: row.leases,
        } as LeasedPage)
      : undefined;
  }

  async renew(jobId: string, urls: readonly string[], owner: string, leaseMs: number, now = new Date()) {
    if (urls.length === 0) return 0;
    const res = await this.rows.updateMany(
      { _id: { $in: urls.map((u) => rowId(jobId, u)) }, owner, state: 'leased' },
      { $set: { leaseUntil: new Date(now.getTime() + leaseMs) } },
    );
    return res.matchedCount;
  }

  async finish(jobId: string, url: string, owner: string, result?: string): Promise<boolean> {
    const res = await this.rows.updateOne(
      { _id: rowId(jobId, url), owner, state: 'leased' },
      { $set: { state: 'done', ...(result === undefined ? {} : { result }) }, $unset: { leaseUntil: 1 } },
    );
    return res.modifiedCount === 1;
  }

  async finishNoPage(jobId: string, url: string, owner: string, result?: string) {
    if (!(await this.rows.exists({ _id: rowId(jobId, url), owner, state: 'leased' }))) return undefined;
    // The room passes to the first row over the cap before the row is finished, so the audit never
    // looks finished in between (no row queued or leased) while a page is still to come.
    const [next] = await this.rows
      .find({ jobId, state: 'over' })
      .sort({ depth: 1, queuedAt: 1, batchIndex: 1 })
      .limit(1)
      .lean();
    const promoted =
      next !== undefined &&
      (await this.rows.updateOne({ _id: next._id, state: 'over' }, { $set: { state: 'queued', queuedAt: new Date() } }))
        .modifiedCount === 1;
    if (promoted) await this.jobs.updateOne({ _id: jobId }, { $inc: { over: -1 } });
    if (!(await this.finish(jobId, url, owner, result))) {
      // Another worker took the row over meanwhile: the room was not ours to pass on.
      if (promoted) {
        await this.rows.updateOne({ _id: next._id, state: 'queued' }, { $set: { state: 'over' } });
        await this.jobs.updateOne({ _id: jobId }, { $inc: { over: 1 } });
      }
      return undefined;
    }
    if (!promoted) {
      await this.jobs.updateOne({ _id: jobId }, { $inc: { admitted: -1 } });
      return [];
    }
    return [{ url: next.url, depth: next.depth, fromSitemap: next.fromSitemap, shapeChain: next.shapeChain ?? 0 }];
  }

  async setContext(jobId: string, context: string): Promise<void> {
    await this.jobs.updateOne({ _id: jobId }, { $set: { context } });
  }

  async context(jobId: string): Promise<string | undefined> {
    return (await this.jobs.findById(jobId, { context: 1 }).lean())?.context ?? undefined;
  }

  async *results(jobId: string, batch = 500): AsyncGenerator<RowResult[]> {
    let after = '';
    for (;;) {
      const rows = await this.rows
        .find({ jobId, url: { $gt: after }, result: { $exists: true } }, { url: 1, result: 1, state: 1 })
        .sort({ url: 1 })
        .limit(batch)
        .lean();
      if (rows.length === 0) return;
      yield rows.map((r) => ({ url: r.url, result: r.result as string, done: r.state === 'done' }));
      after = (rows[rows.length - 1] as { url: string }).url;
    }
  }

  async resultsOf(jobId: string, urls: readonly string[]): Promise<RowResult[]> {
    if (urls.length === 0) return [];
    const rows = await this.rows
      .find(
        { _id: { $in: urls.map((u) => rowId(jobId, u)) }, result: { $exists: true } },
        { url: 1, result: 1, state: 1 },
      )
      .lean();
    return rows.map((r) => ({ url: r.url, result: r.result as string, done: r.state === 'done' }));
  }

  async admitted(jobId: string, urls: readonly string[]): Promise<Set<string>> {
    if (urls.length === 0) return new Set();
    const rows = await this.rows
      .find({ _id: { $in: urls.map((u) => rowId(jobId, u)) }, state: { $ne: 'over' } }, { url: 1 })
      .lean();
    return new Set(rows.map((r) => r.url));
  }

  async counts(jobId: string): Promise<FrontierCounts> {
    const [queued, leased, done, job] = await Promise.all([
      this.rows.countDocuments({ jobId, state: 'queued' }),
      this.rows.countDocuments({ jobId, state: 'leased' }),
      this.rows.countDocuments({ jobId, state: 'done' }),
      this.jobs.findById(jobId, { over: 1 }).lean(),
    ]);
    return { queued, leased, done, over: job?.over ?? 0 };
  }

  async stranded(jobId: string, queuedBefore: Date, now: Date, limit: number): Promise<string[]> {
    const rows = await this.rows
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
      .limit(limit)
      .lean();
    if (rows.length > 0)
      await this.rows.updateMany({ _id: { $in: rows.map((r) => r._id) } }, { $set: { queuedAt: now } });
    return rows.map((r) => r.url);
  }

  async clear(jobId: string): Promise<void> {
    await this.rows.deleteMany({ jobId });
    await this.jobs.deleteOne({ _id: jobId });
  }

  async sweep(now = new Date()): Promise<number> {
    await this.jobs.deleteMany({ expiresAt: { $lte: now } });
    return (await this.rows.deleteMany({ expiresAt: { $lte: now } })).deletedCount;
  }

  async close(): Promise<void> {
    await this.connection.close();
  }
}
