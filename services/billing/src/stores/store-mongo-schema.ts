import mongoose, { type Connection, type Model, Schema } from 'mongoose';
import type { PlanName } from '../plans.js';
import type { Account, ApiKeyRecord, SessionRecord, UsageRecord } from './store.js';

// Only operations MongoDB and jongodb share: findOneAndUpdate/updateOne with $inc/$set/$unset/
// $setOnInsert and filter guards, unique and TTL indexes. Collections are never created explicitly
// (autoCreate off); the first insert creates them and createIndexes() adds the indexes.
const OPTIONS = { versionKey: false, autoCreate: false, autoIndex: false } as const;
/**
 * A credit hold lives in the document whose balance it took (the account, or the anonymous
 * allowance counter), under `holds.<hold id>`: taking the credits and recording the hold is one
 * guarded update of one document, and so is settling it, as atomic as SQLite's transaction.
 * `openHolds` counts them, so the expiry sweep finds the few documents holding any.
 */
export interface HoldDoc {
  fromCycle: number;
  fromTopUp: number;
  cycleEnd: number | null;
  expiresAt: number;
  /** An API key's hold: the key whose spend it counts toward (absent on holds made before keys had one). */
  keyId?: string | null;
  /** The named calls a lease's hold has spent. */
  spentCalls?: string[];
  /** What its partial settlements spent. */
  partlySpent?: number;
  /** A settled hold remembered (until expiresAt): what it spent. Absent while it holds credits. */
  settledSpent?: number;
}
/** An API key's spend in one cycle of its account; a new cycle starts it again. */
export interface KeySpendDoc {
  cycleEnd: number;
  credits: number;
}
export interface Holding {
  holds?: Record<string, HoldDoc>;
  openHolds?: number;
}
export type HoldingDoc = Holding & { _id: string };

export interface AccountDoc extends Omit<Account, 'id'>, Holding {
  _id: string;
  /**
   * Each API key's spend, by key id, in the account document so that a key's limit is checked
   * and its spend counted in the same guarded update that takes the credits.
   */
  keySpend?: Record<string, KeySpendDoc>;
  /** The account's payment-provider customer, once it has one. */
  paymentCustomerId?: string | null;
  /**
   * The payments applied to the account, by key (event and paid object), when: in the account
   * document, so that recording them and changing the credits is one guarded update.
   */
  payments?: Record<string, number>;
}
export interface ApiKeyDoc extends Omit<ApiKeyRecord, 'id'> {
  _id: string;
}
export interface SessionDoc extends Omit<SessionRecord, 'id' | 'expiresAt'> {
  _id: string;
  expiresAt: Date;
}
export interface CounterDoc extends Holding {
  _id: string;
  value: number;
  expiresAt: Date;
}
export interface IdempotencyDoc {
  _id: string;
  fingerprint: string;
  expiresAt: Date;
  /** Null while the first call is running. */
  status: number | null;
  body: string | null;
  headers: string | null;
}
export interface SecretDoc {
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
    paidThrough: { type: Number, default: null },
    holds: Schema.Types.Mixed,
    openHolds: { type: Number, default: 0 },
    keySpend: Schema.Types.Mixed,
    paymentCustomerId: { type: String, default: null },
    payments: Schema.Types.Mixed,
  },
  OPTIONS,
);
accountSchema.index({ email: 1 }, { unique: true });
accountSchema.index({ paymentCustomerId: 1 });
accountSchema.index({ openHolds: 1 });

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
    creditLimit: { type: Number, default: null },
    expiresAt: { type: Number, default: null },
    allowedOperations: { type: [String], default: null },
    mode: { type: String, default: 'live' },
  },
  OPTIONS,
);
apiKeySchema.index({ hash: 1 }, { unique: true });
apiKeySchema.index({ accountId: 1 });

const sessionSchema = new Schema<SessionDoc>(
  { _id: String, accountId: String, csrfToken: String, createdAt: Number, expiresAt: Date },
  OPTIONS,
);
sessionSchema.index({ expiresAt: 1 }, { expireAfterSeconds: 0 });
sessionSchema.index({ accountId: 1 });

const counterSchema = new Schema<CounterDoc>(
  { _id: String, value: Number, expiresAt: Date, holds: Schema.Types.Mixed, openHolds: Number },
  OPTIONS,
);
counterSchema.index({ expiresAt: 1 }, { expireAfterSeconds: 0 });
counterSchema.index({ openHolds: 1 }, { sparse: true });

const idempotencySchema = new Schema<IdempotencyDoc>(
  { _id: String, fingerprint: String, expiresAt: Date, status: Number, body: String, headers: String },
  OPTIONS,
);
idempotencySchema.index({ expiresAt: 1 }, { expireAfterSeconds: 0 });

const secretSchema = new Schema<SecretDoc>({ _id: String, value: String }, OPTIONS);

const usageSchema = new Schema<UsageRecord>(
  { accountId: String, operation: String, credits: Number, at: Number, target: String },
  OPTIONS,
);
usageSchema.index({ accountId: 1, at: -1 });

/** A model of plain documents (the schemas add an `id` virtual we never use). */
export type DocModel<T> = Model<T, object, object, { id: string }>;

/**
 * An $inc without its zero terms: jongodb stores `$inc: -0` as the double -0.0, which then no
 * longer matches a filter on 0.
 */
export const increments = (by: Record<string, number>) =>
  Object.fromEntries(Object.entries(by).filter(([, n]) => n !== 0));

export const isDuplicateKey = (err: unknown) => (err as { code?: number }).code === 11000;

export const toAccount = (doc: AccountDoc): Account => ({
  id: doc._id,
  email: doc.email,
  passwordHash: doc.passwordHash,
  plan: doc.plan as PlanName,
  creditsPerCycle: doc.creditsPerCycle,
  requestsPerMinute: doc.requestsPerMinute,
  cycleAnchor: doc.cycleAnchor,
  cycleEnd: doc.cycleEnd,
  cycleCredits: doc.cycleCredits,
  topUpCredits: doc.topUpCredits,
  createdAt: doc.createdAt,
  paidThrough: doc.paidThrough ?? null,
});

/** The store's collections, one model each. */
export interface Models {
  accounts: DocModel<AccountDoc>;
  apiKeys: DocModel<ApiKeyDoc>;
  sessions: DocModel<SessionDoc>;
  counters: DocModel<CounterDoc>;
  secrets: DocModel<SecretDoc>;
  usage: DocModel<UsageRecord>;
  idempotency: DocModel<IdempotencyDoc>;
}

export function modelsOf(connection: Connection): Models {
  return {
    accounts: connection.model('Account', accountSchema, 'accounts'),
    apiKeys: connection.model('ApiKey', apiKeySchema, 'api_keys'),
    sessions: connection.model('Session', sessionSchema, 'sessions'),
    counters: connection.model('Counter', counterSchema, 'counters'),
    secrets: connection.model('Secret', secretSchema, 'secrets'),
    usage: connection.model('Usage', usageSchema, 'usage'),
    idempotency: connection.model('Idempotency', idempotencySchema, 'idempotency'),
  };
}

/**
 * findOneAndUpdate with upsert. A guard that fails on an existing document makes the upsert try
 * to insert a duplicate _id (E11000); a concurrent first insert does the same. Either way one
 * retry without upsert tells the two apart.
 */
export async function upsert<T extends { _id: string }>(
  model: DocModel<T>,
  filter: mongoose.QueryFilter<T>,
  update: mongoose.UpdateQuery<T>,
): Promise<T | undefined> {
  try {
    return (
      (await model.findOneAndUpdate(filter, update, { upsert: true, returnDocument: 'after' }).lean<T>()) ?? undefined
    );
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
    return (await model.findOneAndUpdate(filter, update, { returnDocument: 'after' }).lean<T>()) ?? undefined;
  }
}
