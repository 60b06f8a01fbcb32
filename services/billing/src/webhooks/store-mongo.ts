import mongoose, { type Connection, type Model, Schema } from 'mongoose';
import {
  type AttemptOutcome,
  type AttemptRecord,
  type ClaimBounds,
  type DeliveryChange,
  type DeliveryRecord,
  type DeliveryState,
  type NewDelivery,
  OPEN_STATES,
  type ReserveLimits,
  type SigningSecret,
  type WebhookStore,
} from './store.js';

// As billing's own adapter: only guarded findOneAndUpdate/updateOne with $set/$inc, inserts, unique
// and TTL indexes (what MongoDB and jongodb share); collections are created by their first insert.
const OPTIONS = { versionKey: false, autoCreate: false, autoIndex: false } as const;
type DocModel<T> = Model<T, object, object, { id: string }>;

interface SecretDoc {
  _id: string;
  secret: string;
  createdAt: number;
  previous?: string | null;
  previousUntil?: number;
}
interface DeliveryDoc extends Omit<DeliveryRecord, 'id' | 'expiresAt' | 'bodyGzip'> {
  _id: string;
  bodyGzip: Buffer | null;
  /** The body's size, for claims bounded by bytes (absent on documents from before: no body yet). */
  bodyBytes?: number;
  expiresAt: Date;
}
interface AttemptDoc extends Omit<AttemptRecord, 'expiresAt'> {
  _id: string;
  expiresAt: Date;
}

const secretSchema = new Schema<SecretDoc>(
  {
    _id: String,
    secret: { type: String, required: true },
    createdAt: { type: Number, required: true },
    previous: { type: String, default: null },
    previousUntil: { type: Number, default: 0 },
  },
  OPTIONS,
);
const deliverySchema = new Schema<DeliveryDoc>(
  {
    _id: String,
    subject: { type: String, required: true },
    source: { type: String, required: true },
    jobId: { type: String, default: null },
    url: { type: String, required: true },
    state: { type: String, required: true },
    bodyGzip: { type: Buffer, default: null },
    bodyBytes: { type: Number, default: 0 },
    endedAt: { type: Number, default: null },
    attempts: { type: Number, default: 0 },
    nextAt: { type: Number, required: true },
    leaseOwner: { type: String, default: null },
    leaseUntil: { type: Number, default: 0 },
    createdAt: { type: Number, required: true },
    expiresAt: { type: Date, required: true },
  },
  OPTIONS,
);
deliverySchema.index({ state: 1, nextAt: 1 });
deliverySchema.index({ subject: 1, state: 1 });
deliverySchema.index({ expiresAt: 1 }, { expireAfterSeconds: 0 });
const attemptSchema = new Schema<AttemptDoc>(
  {
    _id: String,
    deliveryId: String,
    attempt: Number,
    subject: { type: String, required: true },
    jobId: String,
    url: String,
    at: Number,
    statusCode: { type: Number, default: null },
    error: { type: String, default: null },
    durationMs: Number,
    outcome: String,
    nextAt: { type: Number, default: null },
    expiresAt: { type: Date, required: true },
  },
  OPTIONS,
);
attemptSchema.index({ subject: 1, at: -1 });
attemptSchema.index({ expiresAt: 1 }, { expireAfterSeconds: 0 });

/** The cluster webhook store on MongoDB through mongoose (its own connection, billing's database). */
export class MongoWebhookStore implements WebhookStore {
  private constructor(
    private readonly connection: Connection,
    private readonly secrets: DocModel<SecretDoc>,
    private readonly deliveries: DocModel<DeliveryDoc>,
    private readonly attemptLog: DocModel<AttemptDoc>,
  ) {}

  static async connect(url: string, dbName?: string): Promise<MongoWebhookStore> {
    const connection = await mongoose
      .createConnection(url, { autoCreate: false, autoIndex: false, ...(dbName ? { dbName } : {}) })
      .asPromise();
    const store = new MongoWebhookStore(
      connection,
      connection.model('WebhookSecret', secretSchema, 'webhook_secrets'),
      connection.model('WebhookDelivery', deliverySchema, 'webhook_deliveries'),
      connection.model('WebhookAttempt', attemptSchema, 'webhook_attempts'),
    );
    await store.deliveries.createIndexes();
    await store.attemptLog.createIndexes();
    return store;
  }

  async secretOf(subject: string): Promise<SigningSecret | undefined> {
    const doc = await this.secrets.findById(subject).lean<SecretDoc>();
    // Documents from before rotations kept the previous secret have neither field.
    return doc
      ? {
          secret: doc.secret,
          createdAt: doc.createdAt,
          previous: doc.previous ?? null,
          previousUntil: doc.previousUntil ?? 0,
        }
      : undefined;
  }

  async setSecret(subject: string, secret: SigningSecret): Promise<void> {
    await this.secrets.updateOne({ _id: subject }, { $set: secret }, { upsert: true });
  }

  /**
   * MongoDB cannot count and insert in one step: the delivery is inserted, then its subject's open
   * (and, with `perMinute`, recent) ones counted, itself included, and it is deleted again when that is
   * over the bound. Two at once
   * may both be refused; they can never both pass.
   */
  async reserve(delivery: NewDelivery, limits: ReserveLimits, now: number): Promise<boolean> {
    const { id, expiresAt, ...rest } = delivery;
    await this.deliveries.collection.insertOne({
      _id: id,
      ...rest,
      jobId: null,
      state: 'reserved',
      bodyGzip: null,
      endedAt: null,
      attempts: 0,
      nextAt: delivery.createdAt,
      leaseOwner: null,
      leaseUntil: 0,
      expiresAt: new Date(expiresAt),
    } as never);
    const open = await this.deliveries.countDocuments({
      subject: delivery.subject,
      state: { $in: OPEN_STATES },
      expiresAt: { $gt: new Date(now) },
    });
    const recent =
      limits.perMinute === undefined
        ? 0
        : await this.deliveries.countDocuments({ subject: delivery.subject, createdAt: { $gt: now - 60_000 } });
    if (open <= limits.maxOpen && (limits.perMinute === undefined || recent <= limits.perMinute)) return true;
    await this.deliveries.deleteOne({ _id: id });
    return false;
  }

  async attach(id: string, jobId: string, now: number, expiresAt: number, bodyGzip?: Buffer): Promise<boolean> {
    const body = bodyGzip
      ? { state: 'sending', bodyGzip, bodyBytes: bodyGzip.length, endedAt: now }
      : { state: 'waiting' };
    const res = await this.deliveries.updateOne(
      { _id: id, state: 'reserved' },
      { $set: { ...body, jobId, nextAt: now, expiresAt: new Date(expiresAt) } },
    );
    return res.modifiedCount === 1;
  }

  async delivery(id: string): Promise<DeliveryRecord | undefined> {
    const doc = await this.deliveries.findById(id).lean<DeliveryDoc>();
    return doc ? toDelivery(doc) : undefined;
  }

  async drop(id: string): Promise<void> {
    await this.deliveries.deleteOne({ _id: id, state: 'reserved' });
  }

  /**
   * One guarded findOneAndUpdate per delivery: two processes never lease the same one, and a lease
   * that puts its subject over `perSubject` is handed back at once. Turns across
   * subjects: a subject that had its turn in this round, or has `perSubject` under lease, is left
   * out until the round ends (nothing else due); bodies larger than the bytes left are left out.
   */
  async claim(
    owner: string,
    now: number,
    limit: number,
    leaseMs: number,
    bounds: ClaimBounds,
  ): Promise<DeliveryRecord[]> {
    const open = { state: { $in: ['waiting', 'sending'] as DeliveryState[] } };
    const leasedNow = await this.deliveries
      .find({ ...open, leaseUntil: { $gt: now } }, { subject: 1 })
      .lean<Pick<DeliveryDoc, 'subject'>[]>();
    const leased = new Map<string, number>();
    for (const { subject } of leasedNow) leased.set(subject, (leased.get(subject) ?? 0) + 1);
    const claimed: DeliveryRecord[] = [];
    let bytes = 0;
    let hadTurn = new Set<string>();
    while (claimed.length < limit) {
      const full = [...leased].filter(([, n]) => n >= bounds.perSubject).map(([subject]) => subject);
      const left = bounds.maxBytes - bytes;
      const doc = await this.deliveries
        .findOneAndUpdate(
          {
            ...open,
            nextAt: { $lte: now },
            leaseUntil: { $lte: now },
            expiresAt: { $gt: new Date(now) },
            subject: { $nin: [...full, ...hadTurn] },
            ...(claimed.length > 0 ? { $or: [{ bodyBytes: null }, { bodyBytes: { $lte: left } }] } : {}),
          },
          { $set: { leaseOwner: owner, leaseUntil: now + leaseMs } },
          { returnDocument: 'after', sort: { nextAt: 1 } },
        )
        .lean<DeliveryDoc>();
      if (!doc) {
        if (hadTurn.size === 0) break;
        hadTurn = new Set(); // the round is over: every subject may take its next turn
        continue;
      }
      // The count before the loop may be stale: another replica may have claimed meanwhile. Counted
      // again with this lease in, and handed back when over the bound; two at once may both hand
      // back, never both keep.
      const leasedToSubject = await this.deliveries.countDocuments({
        ...open,
        subject: doc.subject,
        leaseUntil: { $gt: now },
      });
      if (leasedToSubject > bounds.perSubject) {
        await this.deliveries.updateOne(
          { _id: doc._id, leaseOwner: owner, leaseUntil: now + leaseMs },
          { $set: { leaseOwner: null, leaseUntil: 0 } },
        );
        leased.set(doc.subject, bounds.perSubject);
        continue;
      }
      const delivery = toDelivery(doc);
      claimed.push(delivery);
      bytes += delivery.bodyGzip?.length ?? 0;
      leased.set(delivery.subject, (leased.get(delivery.subject) ?? 0) + 1);
      hadTurn.add(delivery.subject);
    }
    return claimed;
  }

  async update(id: string, change: DeliveryChange): Promise<boolean> {
    const current = await this.deliveries.findOne({ _id: id, leaseOwner: change.owner }).lean<DeliveryDoc>();
    if (!current || (current.state !== 'waiting' && current.state !== 'sending')) return false;
    const set: Record<string, unknown> = {
      state: change.state,
      nextAt: change.nextAt,
      leaseOwner: null,
      leaseUntil: 0,
    };
    // A delivery over keeps no body: only its attempts are listed.
    if (change.state === 'delivered' || change.state === 'failed') Object.assign(set, { bodyGzip: null, bodyBytes: 0 });
    else if (current.bodyGzip == null && change.bodyGzip)
      Object.assign(set, { bodyGzip: change.bodyGzip, bodyBytes: change.bodyGzip.length });
    if (current.endedAt == null && change.endedAt !== undefined) set.endedAt = change.endedAt;
    const res = await this.deliveries.updateOne(
      { _id: id, leaseOwner: change.owner, state: current.state, attempts: current.attempts },
      { $set: set, ...(change.attempt ? { $inc: { attempts: 1 } } : {}) },
    );
    if (res.modifiedCount !== 1) return false;
    if (change.attempt) {
      const { expiresAt, ...attempt } = change.attempt;
      await this.attemptLog
        .updateOne(
          { _id: `${attempt.deliveryId}#${attempt.attempt}` },
          { $setOnInsert: { ...attempt, expiresAt: new Date(expiresAt) } },
          { upsert: true },
        )
        .exec();
    }
    return true;
  }

  async attempts(subject: string, limit: number, now: number): Promise<AttemptRecord[]> {
    const docs = await this.attemptLog
      .find({ subject, expiresAt: { $gt: new Date(now) } })
      .sort({ at: -1, attempt: -1 })
      .limit(limit)
      .lean<AttemptDoc[]>();
    return docs.map(({ _id, expiresAt, ...rest }) => ({
      ...rest,
      statusCode: rest.statusCode ?? null,
      error: rest.error ?? null,
      nextAt: rest.nextAt ?? null,
      outcome: rest.outcome as AttemptOutcome,
      expiresAt: expiresAt.getTime(),
    }));
  }

  async sweep(now: number): Promise<void> {
    // TTL indexes delete expired documents; this covers servers without a TTL monitor.
    await this.deliveries.deleteMany({ expiresAt: { $lte: new Date(now) } });
    await this.attemptLog.deleteMany({ expiresAt: { $lte: new Date(now) } });
  }

  async close(): Promise<void> {
    await this.connection.close();
  }
}

function toDelivery(doc: DeliveryDoc): DeliveryRecord {
  return {
    id: doc._id,
    subject: doc.subject,
    source: doc.source,
    jobId: doc.jobId ?? null,
    url: doc.url,
    state: doc.state as DeliveryState,
    bodyGzip: doc.bodyGzip ? asBuffer(doc.bodyGzip) : null,
    endedAt: doc.endedAt ?? null,
    attempts: doc.attempts,
    nextAt: doc.nextAt,
    leaseOwner: doc.leaseOwner ?? null,
    leaseUntil: doc.leaseUntil,
    createdAt: doc.createdAt,
    expiresAt: new Date(doc.expiresAt).getTime(),
  };
}

/** lean() hands binary fields back as BSON Binary, not Buffer. */
function asBuffer(value: unknown): Buffer {
  if (Buffer.isBuffer(value)) return value;
  if (value instanceof Uint8Array) return Buffer.from(value);
  const binary = value as { buffer?: Uint8Array; value?: () => Uint8Array };
  const bytes = binary.buffer instanceof Uint8Array ? binary.buffer : (binary.value?.() ?? new Uint8Array());
  return Buffer.from(bytes);
}
