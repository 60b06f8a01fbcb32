import mongoose, { type Connection, type Model } from 'mongoose';
import type { AuditedPage } from '../site-audit/page-checks.js';
import { type AuditPageStore, fromRecord, pageRecord, READ_BATCH } from './audit-pages.js';

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

const DUPLICATE_KEY = 11000;

/**
 * A site audit's pages in the cluster store: a collection beside the crawl jobs, one document per
 * job and URL (its `_id`), so a page stored twice (two replicas, two tries) keeps the first.
 */
export class MongoAuditPages implements AuditPageStore {
  private constructor(
    private readonly connection: Connection,
    private readonly pages: Model<PageDoc>,
  ) {}

  static async connect(url: string, collection = 'audit_pages'): Promise<MongoAuditPages> {
    const connection = await mongoose
      .createConnection(url, { autoCreate: false, autoIndex: false, serverSelectionTimeoutMS: 10_000 })
      .asPromise();
    const pages = connection.model<PageDoc>('AuditPage', schema, collection);
    await pages.createIndexes();
    return new MongoAuditPages(connection, pages);
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
      const failed = err as { code?: number; insertedCount?: number; writeErrors?: { code?: number }[] };
      const errors = failed.writeErrors ?? [];
      const duplicates =
        errors.length > 0 ? errors.every((e) => e.code === DUPLICATE_KEY) : failed.code === DUPLICATE_KEY;
      if (!duplicates) throw err;
      let added = failed.insertedCount ?? 0;
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

  async count(jobId: string): Promise<number> {
    return this.pages.countDocuments({ jobId });
  }

  async clear(jobId: string): Promise<number> {
    return (await this.pages.deleteMany({ jobId })).deletedCount;
  }

  async sweep(now = new Date()): Promise<number> {
    return (await this.pages.deleteMany({ expiresAt: { $lte: now } })).deletedCount;
  }

  async close(): Promise<void> {
    await this.connection.close();
  }
}
