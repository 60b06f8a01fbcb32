import mongoose, { Schema, type Connection, type Model } from 'mongoose';
import type { PlanName } from '../plans.js';
import { EmailTakenError, type Account, type ApiKeyRecord, type BillingStore, type Hold, type PlanChange, type Reservation, type SessionRecord } from './store.js';

// Only operations MongoDB and jongodb share: findOneAndUpdate/updateOne with $inc/$set/$setOnInsert
// and filter guards, unique and TTL indexes. Collections are never created explicitly
// (autoCreate off); the first insert creates them and createIndexes() adds the indexes.
const OPTIONS = { versionKey: false, autoCreate: false, autoIndex: false } as const;

interface AccountDoc extends Omit<Account, 'id'> {
  _id: string;
}
interface ApiKeyDoc extends Omit<ApiKeyRecord, 'id'> {
  _id: string;
}
interface SessionDoc extends Omit<SessionRecord, 'id' | 'expiresAt'> {
  _id: string;
  expiresAt: Date;
}
interface ReservationDoc extends Omit<Reservation, 'id'> {
  _id: string;
}
interface CounterDoc {
  _id: string;
  value: number;
  expiresAt: Date;
}
interface SecretDoc {
  _id: string;
  value: string;
}

const accountSchema = new Schema<AccountDoc>(
  {
    _id: String,
    email: { type: String, required: true },
    passwordHash: { type: String, default: null },
    plan: { type: String, required: true },
    creditsPerCycle: { type: Number, default: null },
    requestsPerMinute: { type: Number, default: null },
    cycleAnchor: Number,
    cycleEnd: Number,
    cycleCredits: Number,
    topUpCredits: Number,
    createdAt: Number,
  },
  OPTIONS,
);
accountSchema.index({ email: 1 }, { unique: true });

const apiKeySchema = new Schema<ApiKeyDoc>(
  {
    _id: String,
    accountId: String,
    name: String,
    prefix: String,
    hash: { type: String, required: true },
    createdAt: Number,
    lastUsedAt: { type: Number, default: null },
    revokedAt: { type: Number, default: null },
  },
  OPTIONS,
);
apiKeySchema.index({ hash: 1 }, { unique: true });
apiKeySchema.index({ accountId: 1 });

const sessionSchema = new Schema<SessionDoc>({ _id: String, accountId: String, csrfToken: String, createdAt: Number, expiresAt: Date }, OPTIONS);
sessionSchema.index({ expiresAt: 1 }, { expireAfterSeconds: 0 });

const reservationSchema = new Schema<ReservationDoc>(
  {
    _id: String,
    accountId: { type: String, default: null },
    allowanceKey: { type: String, default: null },
    cycleEnd: { type: Number, default: null },
    fromCycle: Number,
    fromTopUp: Number,
    expiresAt: Number,
  },
  OPTIONS,
);
reservationSchema.index({ expiresAt: 1 });

const counterSchema = new Schema<CounterDoc>({ _id: String, value: Number, expiresAt: Date }, OPTIONS);
counterSchema.index({ expiresAt: 1 }, { expireAfterSeconds: 0 });

const secretSchema = new Schema<SecretDoc>({ _id: String, value: String }, OPTIONS);

/** A model of plain documents (the schemas add an `id` virtual we never use). */
type DocModel<T> = Model<T, {}, {}, { id: string }>;

const isDuplicateKey = (err: unknown) => (err as { code?: number }).code === 11000;

const toAccount = ({ _id, ...rest }: AccountDoc): Account => ({ id: _id, ...rest, plan: rest.plan as PlanName });
const toApiKey = ({ _id, ...rest }: ApiKeyDoc): ApiKeyRecord => ({ id: _id, ...rest });
const toReservation = ({ _id, ...rest }: ReservationDoc): Reservation => ({ id: _id, ...rest });

/** The cluster store: MongoDB through mongoose (MONGO_URL). */
export class MongoStore implements BillingStore {
  private constructor(
    private readonly connection: Connection,
    private readonly accounts: DocModel<AccountDoc>,
    private readonly apiKeys: DocModel<ApiKeyDoc>,
    private readonly sessions: DocModel<SessionDoc>,
    private readonly reservations: DocModel<ReservationDoc>,
    private readonly counters: DocModel<CounterDoc>,
    private readonly secrets: DocModel<SecretDoc>,
  ) {}

  static async connect(url: string, dbName?: string): Promise<MongoStore> {
    const connection = await mongoose.createConnection(url, { autoCreate: false, autoIndex: false, ...(dbName ? { dbName } : {}) }).asPromise();
    const store = new MongoStore(
      connection,
      connection.model('Account', accountSchema, 'accounts'),
      connection.model('ApiKey', apiKeySchema, 'api_keys'),
      connection.model('Session', sessionSchema, 'sessions'),
      connection.model('Reservation', reservationSchema, 'reservations'),
      connection.model('Counter', counterSchema, 'counters'),
      connection.model('Secret', secretSchema, 'secrets'),
    );
    for (const model of [store.accounts, store.apiKeys, store.sessions, store.reservations, store.counters]) await model.createIndexes();
    return store;
  }

  async insertAccount({ id, ...account }: Account): Promise<void> {
    try {
      await this.accounts.create({ _id: id, ...account });
    } catch (err) {
      if (isDuplicateKey(err)) throw new EmailTakenError(account.email);
      throw err;
    }
  }

  async accountById(id: string): Promise<Account | undefined> {
    const doc = await this.accounts.findById(id).lean<AccountDoc>();
    return doc ? toAccount(doc) : undefined;
  }

  async accountByEmail(email: string): Promise<Account | undefined> {
    const doc = await this.accounts.findOne({ email }).lean<AccountDoc>();
    return doc ? toAccount(doc) : undefined;
  }

  async changePlan(id: string, change: PlanChange): Promise<Account | undefined> {
    return this.updateAccount(id, { $set: change });
  }

  async setPasswordHash(id: string, passwordHash: string): Promise<Account | undefined> {
    return this.updateAccount(id, { $set: { passwordHash } });
  }

  async addTopUp(id: string, credits: number): Promise<Account | undefined> {
    return this.updateAccount(id, { $inc: { topUpCredits: credits } });
  }

  private async updateAccount(id: string, update: mongoose.UpdateQuery<AccountDoc>): Promise<Account | undefined> {
    const doc = await this.accounts.findOneAndUpdate({ _id: id }, update, { returnDocument: 'after' }).lean<AccountDoc>();
    return doc ? toAccount(doc) : undefined;
  }

  async renewCycle(id: string, expected: number, next: { cycleEnd: number; cycleCredits: number }): Promise<void> {
    await this.accounts.updateOne({ _id: id, cycleEnd: expected }, { $set: next });
  }

  /**
   * Cycle credits first. The common cases are one guarded $inc each (all from the cycle, or all
   * from top-ups once the cycle is empty); a hold that straddles both is a compare-and-set on the
   * cycle balance just read, retried when another hold got there first.
   */
  async reserveCredits(accountId: string, credits: number, hold: Hold): Promise<Reservation | undefined> {
    for (;;) {
      const fromCycleOnly = await this.accounts
        .findOneAndUpdate({ _id: accountId, cycleCredits: { $gte: credits } }, { $inc: { cycleCredits: -credits } }, { returnDocument: 'after' })
        .lean<AccountDoc>();
      if (fromCycleOnly) return this.recordHold(hold, accountId, fromCycleOnly.cycleEnd, credits, 0);
      const fromTopUpOnly = await this.accounts
        .findOneAndUpdate({ _id: accountId, cycleCredits: 0, topUpCredits: { $gte: credits } }, { $inc: { topUpCredits: -credits } }, { returnDocument: 'after' })
        .lean<AccountDoc>();
      if (fromTopUpOnly) return this.recordHold(hold, accountId, fromTopUpOnly.cycleEnd, 0, credits);
      const account = await this.accounts.findById(accountId).lean<AccountDoc>();
      if (!account || account.cycleCredits + account.topUpCredits < credits) return undefined;
      if (account.cycleCredits === 0 || account.cycleCredits >= credits) continue; // changed meanwhile
      const fromCycle = account.cycleCredits;
      const fromTopUp = credits - fromCycle;
      const split = await this.accounts.updateOne(
        { _id: accountId, cycleEnd: account.cycleEnd, cycleCredits: fromCycle, topUpCredits: { $gte: fromTopUp } },
        { $inc: { cycleCredits: -fromCycle, topUpCredits: -fromTopUp } },
      );
      if (split.modifiedCount === 1) return this.recordHold(hold, accountId, account.cycleEnd, fromCycle, fromTopUp);
    }
  }

  private async recordHold(hold: Hold, accountId: string, cycleEnd: number, fromCycle: number, fromTopUp: number): Promise<Reservation> {
    return this.insertReservation({ ...hold, accountId, allowanceKey: null, cycleEnd, fromCycle, fromTopUp });
  }

  private async insertReservation({ id, ...fields }: Reservation): Promise<Reservation> {
    await this.reservations.create({ _id: id, ...fields });
    return { id, ...fields };
  }

  async reserveAllowance(allowanceKey: string, credits: number, max: number, allowanceExpiresAt: number, hold: Hold): Promise<Reservation | undefined> {
    if (credits > max) return undefined;
    const guard = { _id: allowanceKey, value: { $lte: max - credits } };
    const update = { $inc: { value: credits }, $setOnInsert: { expiresAt: new Date(allowanceExpiresAt) } };
    const taken = await this.upsert(this.counters, guard, update);
    if (!taken) return undefined;
    return this.insertReservation({ ...hold, accountId: null, allowanceKey, cycleEnd: null, fromCycle: credits, fromTopUp: 0 });
  }

  /**
   * findOneAndUpdate with upsert. A guard that fails on an existing document makes the upsert try
   * to insert a duplicate _id (E11000); a concurrent first insert does the same. Either way one
   * retry without upsert tells the two apart.
   */
  private async upsert<T extends { _id: string }>(model: DocModel<T>, filter: mongoose.QueryFilter<T>, update: mongoose.UpdateQuery<T>): Promise<T | undefined> {
    try {
      return (await model.findOneAndUpdate(filter, update, { upsert: true, returnDocument: 'after' }).lean<T>()) ?? undefined;
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      return (await model.findOneAndUpdate(filter, update, { returnDocument: 'after' }).lean<T>()) ?? undefined;
    }
  }

  /** Reservations never change after insert, so whoever deletes the document owns its settlement. */
  async settle(reservationId: string, outcome: 'spend' | 'refund'): Promise<Reservation | undefined> {
    const doc = await this.reservations.findById(reservationId).lean<ReservationDoc>();
    if (!doc) return undefined;
    const deleted = await this.reservations.deleteOne({ _id: reservationId });
    if (deleted.deletedCount !== 1) return undefined;
    const reservation = toReservation(doc);
    if (outcome === 'refund') {
      if (reservation.accountId) {
        if (reservation.fromCycle > 0) {
          await this.accounts.updateOne({ _id: reservation.accountId, cycleEnd: reservation.cycleEnd }, { $inc: { cycleCredits: reservation.fromCycle } });
        }
        if (reservation.fromTopUp > 0) await this.accounts.updateOne({ _id: reservation.accountId }, { $inc: { topUpCredits: reservation.fromTopUp } });
      } else if (reservation.allowanceKey) {
        await this.counters.updateOne({ _id: reservation.allowanceKey, value: { $gte: reservation.fromCycle } }, { $inc: { value: -reservation.fromCycle } });
      }
    }
    return reservation;
  }

  async expiredReservations(now: number, limit: number): Promise<Reservation[]> {
    const docs = await this.reservations.find({ expiresAt: { $lte: now } }).sort({ expiresAt: 1 }).limit(limit).lean<ReservationDoc[]>();
    return docs.map(toReservation);
  }

  async increment(key: string, by: number, expiresAt: number): Promise<number> {
    const doc = await this.upsert(this.counters, { _id: key }, { $inc: { value: by }, $setOnInsert: { expiresAt: new Date(expiresAt) } });
    if (!doc) throw new Error(`counter ${key} could not be incremented`);
    return doc.value;
  }

  async counter(key: string): Promise<number> {
    return (await this.counters.findById(key).lean<CounterDoc>())?.value ?? 0;
  }

  async insertApiKey({ id, ...key }: ApiKeyRecord): Promise<void> {
    await this.apiKeys.create({ _id: id, ...key });
  }

  async apiKeyByHash(hash: string): Promise<ApiKeyRecord | undefined> {
    const doc = await this.apiKeys.findOne({ hash }).lean<ApiKeyDoc>();
    return doc ? toApiKey(doc) : undefined;
  }

  async apiKeysOf(accountId: string): Promise<ApiKeyRecord[]> {
    const docs = await this.apiKeys.find({ accountId }).sort({ createdAt: 1, _id: 1 }).lean<ApiKeyDoc[]>();
    return docs.map(toApiKey);
  }

  async revokeApiKey(accountId: string, keyId: string, at: number): Promise<ApiKeyRecord | undefined> {
    await this.apiKeys.updateOne({ _id: keyId, accountId, revokedAt: null }, { $set: { revokedAt: at } });
    const doc = await this.apiKeys.findOne({ _id: keyId, accountId }).lean<ApiKeyDoc>();
    return doc ? toApiKey(doc) : undefined;
  }

  async touchApiKey(keyId: string, at: number, everyMs: number): Promise<void> {
    await this.apiKeys.updateOne({ _id: keyId, $or: [{ lastUsedAt: null }, { lastUsedAt: { $lte: at - everyMs } }] }, { $set: { lastUsedAt: at } });
  }

  async insertSession({ id, expiresAt, ...session }: SessionRecord): Promise<void> {
    await this.sessions.create({ _id: id, ...session, expiresAt: new Date(expiresAt) });
  }

  async sessionById(id: string): Promise<SessionRecord | undefined> {
    const doc = await this.sessions.findById(id).lean<SessionDoc>();
    if (!doc) return undefined;
    const { _id, expiresAt, ...rest } = doc;
    return { id: _id, ...rest, expiresAt: expiresAt.getTime() };
  }

  async deleteSession(id: string): Promise<void> {
    await this.sessions.deleteOne({ _id: id });
  }

  async secret(name: string, candidate: string): Promise<string> {
    const doc = await this.upsert(this.secrets, { _id: name }, { $setOnInsert: { value: candidate } });
    return doc?.value ?? (await this.secrets.findById(name).lean<SecretDoc>())!.value;
  }

  /** Expired counters and sessions go by their TTL indexes. */
  async sweep(): Promise<void> {}

  async close(): Promise<void> {
    await this.connection.close();
  }
}
