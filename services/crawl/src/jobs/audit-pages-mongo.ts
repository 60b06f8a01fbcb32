import mongoose, { type Connection, type Model } from 'mongoose';
import type { AuditedPage } from '../site-audit/page-checks.js';
import { type AuditPageStore, fromRecord, pageRecord, READ_BATCH, type StoredAffected } from './audit-pages.js';

interface PageDoc {
  /** `<jobId> <url>`: one document per page of a job, whichever replica or try stores it first. */
  _id: string;
  jobId: string;
  url: string;
  depth: number;
  record: string;
  expiresAt: Date;
}

const schema = new mongoose.Schema<PageDoc>(
  {
    _id: String,
    jobId: { type: String, required: true },
    url: { type: String, required: true },
    depth: { type: Number, required: true },
    record: { type: String, required: true },
    expiresAt: { type: Date, required: true },
  },
  { versionKey: false },
);
schema.index({ jobId: 1, depth: 1, url: 1 });
schema.index({ expiresAt: 1 }, { expireAfterSeconds: 0 });

interface AffectedDoc extends StoredAffected {
  /** `<jobId> <issueId> <seq> <url>`: a row stored twice (a retried write) is stored once. */
  _id: string;
  jobId: string;
  expiresAt: Date;
}

const affectedSchema = new mongoose.Schema<AffectedDoc>(
  {
    _id: String,
    jobId: { type: String, required: true },
    issueId: { type: String, required: true },
    url: { type: String, required: true },
    seq: { type: Number, required: true },
    detail: { type: String, required: true },
    sources: { type: [String], required: true },
    expiresAt: { type: Date, required: true },
  },
  { versionKey: false },
);
affectedSchema.index({ jobId: 1, issueId: 1, url: 1, seq: 1 });
affectedSchema.index({ expiresAt: 1 }, { expireAfterSeconds: 0 });

const DUPLICATE_KEY = 11000;

/** Whether a failed insertMany failed only on keys stored already. */
function onlyDuplicates(err: unknown): boolean {
  const failed = err as { code?: number; writeErrors?: { code?: number }[] };
  const errors = failed.writeErrors ?? [];
  return errors.length > 0 ? errors.every((e) => e.code === DUPLICATE_KEY) : failed.code === DUPLICATE_KEY;
}

/**
 * A site audit's pages in the cluster store: a collection beside the crawl jobs, one document per
 * job and URL (its `_id`), so a page stored twice (two replicas, two tries) keeps the first.
 */
export class MongoAuditPages implements AuditPageStore {
  private constructor(
    private readonly connection: Connection,
    private readonly pages: Model<PageDoc>,
    private readonly affectedRows: Model<AffectedDoc>,
  ) {}

  static async connect(url: string, collection = 'audit_pages'): Promise<MongoAuditPages> {
    const connection = await mongoose
      .createConnection(url, { autoCreate: false, autoIndex: false, serverSelectionTimeoutMS: 10_000 })
      .asPromise();
    const pages = connection.model<PageDoc>('AuditPage', schema, collection);
    const affected = connection.model<AffectedDoc>('AuditAffected', affectedSchema, `${collection}_affected`);
    await pages.createIndexes();
    await affected.createIndexes();
    return new MongoAuditPages(connection, pages, affected);
  }

  async add(jobId: string, pages: readonly AuditedPage[], expiresAt: Date): Promise<number> {
    if (pages.length === 0) return 0;
    const docs = pages.map((page) => ({
      _id: `${jobId} ${page.url}`,
      jobId,
      url: page.url,
      depth: page.depth,
      record: pageRecord(page),
      expiresAt,
    }));
    // One insert per batch; when a URL of it is stored already, each page on its own as an upsert
    // (a server may have stored the batch's other pages, or none of them).
    try {
      return (await this.pages.collection.insertMany(docs as never[], { ordered: false })).insertedCount;
    } catch (err) {
      if (!onlyDuplicates(err)) throw err;
      let added = (err as { insertedCount?: number }).insertedCount ?? 0;
      for (const { _id, ...doc } of docs)
        added += (await this.pages.updateOne({ _id }, { $setOnInsert: doc }, { upsert: true })).upsertedCount;
      return added;
    }
  }

  async *read(jobId: string, batch = READ_BATCH): AsyncGenerator<AuditedPage[]> {
    let last: { depth: number; url: string } | undefined;
    for (;;) {
      const after = last && {
        $or: [{ depth: { $gt: last.depth } }, { depth: last.depth, url: { $gt: last.url } }],
      };
      const docs = await this.pages
        .find({ jobId, ...after }, { depth: 1, url: 1, record: 1 })
        .sort({ depth: 1, url: 1 })
        .limit(batch)
        .lean<Pick<PageDoc, 'depth' | 'url' | 'record'>[]>();
      if (docs.length === 0) return;
      yield docs.map((doc) => fromRecord(doc.record));
      const end = docs[docs.length - 1] as Pick<PageDoc, 'depth' | 'url'>;
      last = { depth: end.depth, url: end.url };
    }
  }

  async get(jobId: string, urls: readonly string[]): Promise<AuditedPage[]> {
    if (urls.length === 0) return [];
    const docs = await this.pages
      .find({ _id: { $in: urls.map((url) => `${jobId} ${url}`) } }, { record: 1 })
      .lean<Pick<PageDoc, 'record'>[]>();
    return docs.map((doc) => fromRecord(doc.record));
  }

  async count(jobId: string): Promise<number> {
    return this.pages.countDocuments({ jobId });
  }

  async clear(jobId: string): Promise<number> {
    return (await this.pages.deleteMany({ jobId })).deletedCount;
  }

  async addAffected(jobId: string, rows: readonly StoredAffected[], expiresAt: Date): Promise<void> {
    if (rows.length === 0) return;
    const docs = rows.map((row) => ({
      _id: `${jobId} ${row.issueId} ${row.seq} ${row.url}`,
      jobId,
      ...row,
      expiresAt,
    }));
    try {
      await this.affectedRows.collection.insertMany(docs as never[], { ordered: false });
    } catch (err) {
      if (!onlyDuplicates(err)) throw err;
    }
  }

  async affected(jobId: string, issueId: string, offset: number, limit: number): Promise<StoredAffected[]> {
    const docs = await this.affectedRows
      .find({ jobId, issueId }, { _id: 0, issueId: 1, url: 1, seq: 1, detail: 1, sources: 1 })
      .sort({ url: 1, seq: 1 })
      .skip(offset)
      .limit(limit)
      .lean<StoredAffected[]>();
    return docs.map(({ issueId, url, seq, detail, sources }) => ({ issueId, url, seq, detail, sources }));
  }

  async clearAffected(jobId: string): Promise<number> {
    return (await this.affectedRows.deleteMany({ jobId })).deletedCount;
  }

  async sweep(now = new Date()): Promise<number> {
    const pages = (await this.pages.deleteMany({ expiresAt: { $lte: now } })).deletedCount;
    return pages + (await this.affectedRows.deleteMany({ expiresAt: { $lte: now } })).deletedCount;
  }

  async close(): Promise<void> {
    await this.connection.close();
  }
}
