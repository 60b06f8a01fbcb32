import mongoose, { type Connection } from 'mongoose';
import type { AuditedPage } from '../site-audit/page-checks.js';
import { type AuditPageStore, fromRecord, pageRecord, READ_BATCH, type StoredAffected } from './audit-pages.js';
import { mergedReads, SpreadCollections } from './spread-collections.js';

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

/** Records read from each collection at a time by `read`'s merge. */
const MERGED_READ = 32;

/** The collection key of an issue's affected rows: an issue's rows are paged from one collection. */
const issueKey = (jobId: string, issueId: string) => `${jobId} ${issueId}`;

/**
 * A site audit's pages in the cluster store, beside the crawl jobs: one document per job and URL
 * (its `_id`), so a page stored twice (two replicas, two tries) keeps the first. Pages and affected
 * rows are spread over collections (SpreadCollections): pages by `_id`, affected rows by issue.
 */
export class MongoAuditPages implements AuditPageStore {
  private constructor(
    private readonly connection: Connection,
    private readonly pages: SpreadCollections<PageDoc>,
    private readonly affectedRows: SpreadCollections<AffectedDoc>,
  ) {}

  static async connect(url: string, collection = 'audit_pages'): Promise<MongoAuditPages> {
    const connection = await mongoose
      .createConnection(url, { autoCreate: false, autoIndex: false, serverSelectionTimeoutMS: 10_000 })
      .asPromise();
    return new MongoAuditPages(
      connection,
      await SpreadCollections.open(connection, 'AuditPage', schema, collection),
      await SpreadCollections.open(connection, 'AuditAffected', affectedSchema, `${collection}_affected`),
    );
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
    // One insert per collection; where a URL of it is stored already, each of that collection's
    // pages on its own as an upsert (a server may have stored some of them, or none).
    const { inserted, clashed } = await this.pages.insertNew(docs);
    let added = inserted;
    for (const { _id, ...doc } of clashed)
      added += (await this.pages.of(_id).updateOne({ _id }, { $setOnInsert: doc }, { upsert: true })).upsertedCount;
    return added;
  }

  async *read(jobId: string, batch = READ_BATCH): AsyncGenerator<AuditedPage[]> {
    type Doc = Pick<PageDoc, 'depth' | 'url' | 'record'>;
    const docs = mergedReads<PageDoc, Doc>(
      this.pages,
      (pages, last, limit) =>
        pages
          .find(
            {
              jobId,
              ...(last && { $or: [{ depth: { $gt: last.depth } }, { depth: last.depth, url: { $gt: last.url } }] }),
            },
            { depth: 1, url: 1, record: 1 },
          )
          .sort({ depth: 1, url: 1 })
          .limit(limit)
          .lean<Doc[]>(),
      (a, b) => a.depth - b.depth || (a.url < b.url ? -1 : a.url > b.url ? 1 : 0),
      MERGED_READ,
    );
    let out: AuditedPage[] = [];
    for await (const doc of docs) {
      out.push(fromRecord(doc.record));
      if (out.length >= batch) {
        yield out;
        out = [];
      }
    }
    if (out.length > 0) yield out;
  }

  async get(jobId: string, urls: readonly string[]): Promise<AuditedPage[]> {
    if (urls.length === 0) return [];
    const found = await Promise.all(
      this.pages
        .grouped(
          urls.map((url) => `${jobId} ${url}`),
          (id) => id,
        )
        .map(([pages, ids]) =>
          pages.find({ _id: { $in: ids } }, { url: 1, record: 1 }).lean<Pick<PageDoc, 'url' | 'record'>[]>(),
        ),
    );
    // In the order asked.
    const byUrl = new Map(found.flat().map((doc) => [doc.url, doc.record]));
    return [...new Set(urls)].flatMap((url) => {
      const record = byUrl.get(url);
      return record === undefined ? [] : [fromRecord(record)];
    });
  }

  async count(jobId: string): Promise<number> {
    return this.pages.sum((pages) => pages.countDocuments({ jobId }));
  }

  async clear(jobId: string): Promise<number> {
    return this.pages.sum(async (pages) => (await pages.deleteMany({ jobId })).deletedCount);
  }

  async addAffected(jobId: string, rows: readonly StoredAffected[], expiresAt: Date): Promise<void> {
    if (rows.length === 0) return;
    const docs = rows.map((row) => ({
      _id: `${jobId} ${row.issueId} ${row.seq} ${row.url}`,
      jobId,
      ...row,
      expiresAt,
    }));
    // A row stored already is a retried write's.
    await this.affectedRows.insertNew(docs, (d) => issueKey(jobId, d.issueId));
  }

  async affected(jobId: string, issueId: string, offset: number, limit: number): Promise<StoredAffected[]> {
    const docs = await this.affectedRows
      .of(issueKey(jobId, issueId))
      .find({ jobId, issueId }, { _id: 0, issueId: 1, url: 1, seq: 1, detail: 1, sources: 1 })
      .sort({ url: 1, seq: 1 })
      .skip(offset)
      .limit(limit)
      .lean<StoredAffected[]>();
    return docs.map(({ issueId, url, seq, detail, sources }) => ({ issueId, url, seq, detail, sources }));
  }

  async clearAffected(jobId: string): Promise<number> {
    return this.affectedRows.sum(async (rows) => (await rows.deleteMany({ jobId })).deletedCount);
  }

  async sweep(now = new Date()): Promise<number> {
    const expired = { expiresAt: { $lte: now } };
    const pages = await this.pages.sum(async (pages) => (await pages.deleteMany(expired)).deletedCount);
    return pages + (await this.affectedRows.sum(async (rows) => (await rows.deleteMany(expired)).deletedCount));
  }

  async close(): Promise<void> {
    await this.connection.close();
  }
}
