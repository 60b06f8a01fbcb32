import mongoose, { type Connection, type Model } from 'mongoose';
import type { CrawlKind, CrawlProgress, JobError, JobStatus } from '../model.js';
import type { ScanOptions } from '../scan-options.js';
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

interface JobDoc {
  _id: string;
  kind: string;
  url: string;
  caller?: string;
  weight?: number;
  claims?: number;
  checkFragments?: boolean;
  scan?: ScanOptions;
  input?: Buffer;
  status: string;
  progress: CrawlProgress;
  result?: Buffer;
  error?: JobError;
  attempt: number;
  seq: number;
  createdAt: Date;
  updatedAt: Date;
  expiresAt: Date;
}

const schema = new mongoose.Schema<JobDoc>(
  {
    _id: String,
    kind: { type: String, required: true },
    url: { type: String, required: true },
    caller: String,
    weight: Number,
    claims: Number,
    checkFragments: Boolean,
    scan: { type: mongoose.Schema.Types.Mixed },
    input: Buffer,
    status: { type: String, required: true },
    progress: { type: mongoose.Schema.Types.Mixed, required: true },
    result: Buffer,
    error: { type: mongoose.Schema.Types.Mixed },
    attempt: { type: Number, default: 0 },
    seq: { type: Number, default: 0 },
    createdAt: { type: Date, required: true },
    updatedAt: { type: Date, required: true },
    expiresAt: { type: Date, required: true },
  },
  { versionKey: false, minimize: false },
);
// MongoDB deletes expired jobs itself; reads also check expiresAt, so expiry holds before that
// (and on servers without a TTL monitor).
schema.index({ expiresAt: 1 }, { expireAfterSeconds: 0 });
schema.index({ caller: 1, status: 1 });

const newer = (update: JobUpdate) => ({
  $or: [{ attempt: { $lt: update.attempt } }, { attempt: update.attempt, seq: { $lt: update.seq } }],
});

/**
 * The cluster job store on MongoDB through mongoose. Only operations every MongoDB-wire server
 * here supports: guarded findOneAndUpdate/updateOne with $set, unique _id, a TTL index created
 * with createIndexes (collections are created on first write: no `create` command).
 */
export class MongoJobStore implements JobStore {
  private constructor(
    private readonly connection: Connection,
    private readonly jobs: Model<JobDoc>,
  ) {}

  static async connect(url: string, collection = 'crawl_jobs'): Promise<MongoJobStore> {
    const connection = await mongoose
      .createConnection(url, { autoCreate: false, autoIndex: false, serverSelectionTimeoutMS: 10_000 })
      .asPromise();
    const jobs = connection.model<JobDoc>('CrawlJob', schema, collection);
    await jobs.createIndexes();
    return new MongoJobStore(connection, jobs);
  }

  /**
   * MongoDB cannot count and insert in one step: the job is inserted, then its caller's jobs are
   * counted, itself included, and it is deleted again when that is over the bound. Two starts at
   * once may both be refused; they can never both pass.
   */
  async create(job: NewJob, perCaller?: number): Promise<boolean> {
    const { id, caller, weight, checkFragments, scan, input, ...rest } = job;
    await this.jobs.collection.insertOne({
      _id: id,
      ...rest,
      ...(caller === undefined ? {} : { caller }),
      ...(weight === undefined ? {} : { weight }),
      ...(checkFragments ? { checkFragments } : {}),
      ...(scan ? { scan } : {}),
      ...(input ? { input } : {}),
      status: 'crawling',
      attempt: 0,
      seq: 0,
      claims: 0,
      updatedAt: job.createdAt,
    } as never);
    if (perCaller === undefined || caller === undefined) return true;
    const active = await this.jobs.countDocuments({ caller, status: 'crawling', expiresAt: { $gt: job.createdAt } });
    if (active <= perCaller) return true;
    await this.jobs.deleteOne({ _id: id });
    return false;
  }

  /**
   * Reads the callers' active jobs, then counts the claim with $inc: two workers deciding at once
   * (on two replicas) may both let their callers' jobs run, one turn early; neither ever waits for
   * a caller that is not owed the worker.
   */
  async claim(id: string, now = new Date()): Promise<Claim> {
    const live = { status: 'crawling', expiresAt: { $gt: now } };
    const doc = await this.jobs.findOne({ _id: id, ...live }, { caller: 1, claims: 1 }).lean<JobDoc>();
    if (!doc) return { turn: 'gone' };
    if (!doc.claims && doc.caller !== undefined) {
      const active = await this.jobs
        .find({ ...live, caller: { $exists: true } }, { caller: 1, weight: 1, claims: 1 })
        .lean<(ActiveJob & { _id: string })[]>();
      if (owedToAnother(doc.caller, active)) return { turn: 'wait' };
    }
    const claimed = await this.jobs
      .findOneAndUpdate({ _id: id, status: 'crawling' }, { $inc: { claims: 1 } }, { new: true })
      .lean<JobDoc>();
    return claimed ? { turn: 'run', attempt: claimed.claims ?? 1 } : { turn: 'gone' };
  }

  async get(id: string, now = new Date()): Promise<CrawlJob | undefined> {
    const doc = await this.jobs.findOne({ _id: id, expiresAt: { $gt: now } }).lean<JobDoc>();
    return doc ? toJob(doc) : undefined;
  }

  async recordProgress(id: string, update: JobUpdate): Promise<boolean> {
    const res = await this.jobs.updateOne(
      { _id: id, status: 'crawling', ...newer(update) },
      { $set: { ...update, updatedAt: new Date() } },
    );
    return res.modifiedCount > 0;
  }

  async finish(id: string, update: JobUpdate & { result: PackedResult }): Promise<boolean> {
    const { result, ...rest } = update;
    const res = await this.jobs.updateOne(
      { _id: id, status: 'crawling' },
      { $set: { ...rest, status: 'done', result, updatedAt: new Date() } },
    );
    return res.modifiedCount > 0;
  }

  async fail(id: string, error: JobError, update?: JobUpdate): Promise<boolean> {
    const res = await this.jobs.updateOne(
      { _id: id, status: 'crawling' },
      { $set: { ...update, status: 'failed', error, updatedAt: new Date() } },
    );
    return res.modifiedCount > 0;
  }

  async discard(id: string): Promise<boolean> {
    const res = await this.jobs.deleteOne({ _id: id, status: 'crawling', attempt: 0 });
    return res.deletedCount > 0;
  }

  async crawling(now = new Date()): Promise<CrawlJob[]> {
    const docs = await this.jobs.find({ status: 'crawling', expiresAt: { $gt: now } }).lean<JobDoc[]>();
    return docs.map(toJob);
  }

  async sweep(now = new Date()): Promise<number> {
    const res = await this.jobs.deleteMany({ expiresAt: { $lte: now } });
    return res.deletedCount;
  }

  async close(): Promise<void> {
    await this.connection.close();
  }
}

function toJob(doc: JobDoc): CrawlJob {
  return {
    id: doc._id,
    kind: doc.kind as CrawlKind,
    url: doc.url,
    caller: doc.caller,
    weight: doc.weight,
    claims: doc.claims ?? 0,
    checkFragments: doc.checkFragments || undefined,
    scan: doc.scan ?? undefined,
    input: doc.input ? Buffer.from(asBytes(doc.input)) : undefined,
    status: doc.status as JobStatus,
    progress: doc.progress,
    result: doc.result ? unpackResult(asPacked(asBytes(doc.result))) : undefined,
    error: doc.error ? { code: doc.error.code, message: doc.error.message } : undefined,
    attempt: doc.attempt,
    seq: doc.seq,
    createdAt: doc.createdAt,
    updatedAt: doc.updatedAt,
    expiresAt: doc.expiresAt,
  };
}

/** lean() hands binary fields back as BSON Binary, not Buffer. */
function asBytes(value: unknown): Uint8Array {
  if (value instanceof Uint8Array) return value;
  const binary = value as { buffer?: Uint8Array; value?: () => Uint8Array };
  return binary.buffer instanceof Uint8Array ? binary.buffer : (binary.value?.() ?? new Uint8Array());
}
