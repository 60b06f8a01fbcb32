import { unavailable } from '@webutil/kit';
import mongoose, { type Connection, type Model, Schema } from 'mongoose';
import type { PlanName } from '../plans.js';
import {
  type Account,
  type ApiKeyRecord,
  type BillingStore,
  EmailTakenError,
  freshCalls,
  type Hold,
  type HoldSpend,
  holdReleased,
  type IdempotencyClaim,
  type IdempotencyRecord,
  type IdempotentAnswer,
  type KeyBudget,
  type KeyLimited,
  type KeyLimitedIf,
  keptOpen,
  type PaymentChange,
  type PlanChange,
  type Reservation,
  type SessionRecord,
  type SettleResult,
  settleCredits,
  type UsageRecord,
  unusedCredits,
} from './store.js';

// Only operations MongoDB and jongodb share: findOneAndUpdate/updateOne with $inc/$set/$unset/
// $setOnInsert and filter guards, unique and TTL indexes. Collections are never created explicitly
// (autoCreate off); the first insert creates them and createIndexes() adds the indexes.
const OPTIONS = { versionKey: false, autoCreate: false, autoIndex: false } as const;
/**
 * A hold losing races against concurrent changes to its account (holds taking its last cycle
 * credits, a renewal, a key's first hold of a cycle) tries at least MIN_HOLD_ATTEMPTS times, and
 * on for HOLD_BUDGET_MS: within the edge's deadline for an authorization (10 s), so a busy account
 * is answered rather than failed, and a store slow under load does not count as a busy account.
 */
const MIN_HOLD_ATTEMPTS = 20;
const HOLD_BUDGET_MS = 4_000;
/** The longest pause between two tries; each pause is drawn at random up to a bound that doubles. */
const HOLD_BACKOFF_MAX_MS = 100;

/**
 * A credit hold lives in the document whose balance it took (the account, or the anonymous
 * allowance counter), under `holds.<hold id>`: taking the credits and recording the hold is one
 * guarded update of one document, and so is settling it, as atomic as SQLite's transaction.
 * `openHolds` counts them, so the expiry sweep finds the few documents holding any.
 */
interface HoldDoc {
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
interface KeySpendDoc {
  cycleEnd: number;
  credits: number;
}
interface Holding {
  holds?: Record<string, HoldDoc>;
  openHolds?: number;
}
type HoldingDoc = Holding & { _id: string };

interface AccountDoc extends Omit<Account, 'id'>, Holding {
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
interface ApiKeyDoc extends Omit<ApiKeyRecord, 'id'> {
  _id: string;
}
interface SessionDoc extends Omit<SessionRecord, 'id' | 'expiresAt'> {
  _id: string;
  expiresAt: Date;
}
interface CounterDoc extends Holding {
  _id: string;
  value: number;
  expiresAt: Date;
}
interface IdempotencyDoc {
  _id: string;
  fingerprint: string;
  expiresAt: Date;
  /** Null while the first call is running. */
  status: number | null;
  body: string | null;
  headers: string | null;
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
type DocModel<T> = Model<T, object, object, { id: string }>;

/**
 * An $inc without its zero terms: jongodb stores `$inc: -0` as the double -0.0, which then no
 * longer matches a filter on 0.
 */
const increments = (by: Record<string, number>) => Object.fromEntries(Object.entries(by).filter(([, n]) => n !== 0));

/** A pause before a hold's next try: at random up to 5 ms doubled per try, at most HOLD_BACKOFF_MAX_MS. */
const jitteredPause = (attempt: number) =>
  new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(HOLD_BACKOFF_MAX_MS, 5 * 2 ** attempt)));

/** An account as the ledger reads it: a busy account's holds (hundreds) and key spend are not part of it. */
const WITHOUT_HOLDS = { holds: 0, keySpend: 0 } as const;

const isDuplicateKey = (err: unknown) => (err as { code?: number }).code === 11000;

const toAccount = (doc: AccountDoc): Account => ({
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
});
const toApiKey = ({ _id, creditLimit, expiresAt, allowedOperations, mode, ...rest }: ApiKeyDoc): ApiKeyRecord => ({
  id: _id,
  ...rest,
  // A key stored before sandbox keys is a live key.
  mode: mode ?? 'live',
  // A key stored before keys had limits has none.
  creditLimit: creditLimit ?? null,
  expiresAt: expiresAt ?? null,
  allowedOperations: allowedOperations ?? null,
});

/** Where a hold lives: an account ('a') or an allowance counter ('c'), by document id. */
interface HoldPlace {
  in: 'a' | 'c';
  docId: string;
  holdId: string;
}

/** Reservation ids name their document (`a|c.<base64url id>.<hold id>`), so settling finds it by _id. */
const reservationId = ({ in: where, docId, holdId }: HoldPlace) =>
  `${where}.${Buffer.from(docId).toString('base64url')}.${holdId}`;

/** A hold's own name (the edge's, or billing's UUID): safe as a field name. */
const HOLD_NAME = /^[A-Za-z0-9_-]{8,64}$/;

function holdPlace(reservation: string): HoldPlace | undefined {
  const [where, docId, holdId, ...rest] = reservation.split('.');
  if ((where !== 'a' && where !== 'c') || !docId || !holdId || rest.length > 0) return undefined;
  return { in: where, docId: Buffer.from(docId, 'base64url').toString(), holdId };
}

const toReservation = (place: HoldPlace, { keyId, ...hold }: HoldDoc): Reservation => ({
  id: reservationId(place),
  accountId: place.in === 'a' ? place.docId : null,
  allowanceKey: place.in === 'c' ? place.docId : null,
  keyId: keyId ?? null,
  ...hold,
});

/** The cluster store: MongoDB through mongoose (MONGO_URL). */
export class MongoStore implements BillingStore {
  private constructor(
    private readonly connection: Connection,
    private readonly accounts: DocModel<AccountDoc>,
    private readonly apiKeys: DocModel<ApiKeyDoc>,
    private readonly sessions: DocModel<SessionDoc>,
    private readonly counters: DocModel<CounterDoc>,
    private readonly secrets: DocModel<SecretDoc>,
    private readonly usage: DocModel<UsageRecord>,
    private readonly idempotency: DocModel<IdempotencyDoc>,
  ) {}

  static async connect(url: string, dbName?: string): Promise<MongoStore> {
    const connection = await mongoose
      .createConnection(url, { autoCreate: false, autoIndex: false, ...(dbName ? { dbName } : {}) })
      .asPromise();
    const store = new MongoStore(
      connection,
      connection.model('Account', accountSchema, 'accounts'),
      connection.model('ApiKey', apiKeySchema, 'api_keys'),
      connection.model('Session', sessionSchema, 'sessions'),
      connection.model('Counter', counterSchema, 'counters'),
      connection.model('Secret', secretSchema, 'secrets'),
      connection.model('Usage', usageSchema, 'usage'),
      connection.model('Idempotency', idempotencySchema, 'idempotency'),
    );
    for (const model of [store.accounts, store.apiKeys, store.sessions, store.counters, store.usage])
      await model.createIndexes();
    await store.idempotency.createIndexes();
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
    const doc = await this.accounts.findById(id, WITHOUT_HOLDS).lean<AccountDoc>();
    return doc ? toAccount(doc) : undefined;
  }

  async accountByEmail(email: string): Promise<Account | undefined> {
    const doc = await this.accounts.findOne({ email }, WITHOUT_HOLDS).lean<AccountDoc>();
    return doc ? toAccount(doc) : undefined;
  }

  async changePlan(id: string, change: PlanChange): Promise<Account | undefined> {
    return this.updateAccount(id, { $set: change });
  }

  async setPasswordHash(id: string, passwordHash: string): Promise<Account | undefined> {
    return this.updateAccount(id, { $set: { passwordHash } });
  }

  async replacePasswordHash(id: string, current: string, next: string): Promise<boolean> {
    const replaced = await this.accounts.updateOne(
      { _id: id, passwordHash: current },
      { $set: { passwordHash: next } },
    );
    return replaced.modifiedCount === 1;
  }

  async addTopUp(id: string, credits: number): Promise<Account | undefined> {
    return this.updateAccount(id, { $inc: { topUpCredits: credits } });
  }

  async linkPaymentCustomer(accountId: string, customerId: string): Promise<string | undefined> {
    await this.accounts.updateOne(
      { _id: accountId, paymentCustomerId: null },
      { $set: { paymentCustomerId: customerId } },
    );
    return this.paymentCustomerOf(accountId);
  }

  async paymentCustomerOf(accountId: string): Promise<string | undefined> {
    const doc = await this.accounts.findOne({ _id: accountId }, { paymentCustomerId: 1 }).lean<AccountDoc>();
    return doc?.paymentCustomerId ?? undefined;
  }

  async accountByPaymentCustomer(customerId: string): Promise<Account | undefined> {
    const doc = await this.accounts.findOne({ paymentCustomerId: customerId }).lean<AccountDoc>();
    return doc ? toAccount(doc) : undefined;
  }

  async applyPayment(payment: PaymentChange): Promise<'applied' | 'duplicate' | 'no_account'> {
    const unseen = Object.fromEntries(payment.keys.map((key) => [`payments.${key}`, { $exists: false }]));
    const recorded = Object.fromEntries(payment.keys.map((key) => [`payments.${key}`, payment.at]));
    const update: mongoose.UpdateQuery<AccountDoc> = { $set: { ...recorded, ...payment.plan } };
    if (payment.topUpCredits) update.$inc = { topUpCredits: payment.topUpCredits };
    const applied = await this.accounts.updateOne({ _id: payment.accountId, ...unseen }, update);
    if (applied.matchedCount === 1) return 'applied';
    return (await this.accounts.exists({ _id: payment.accountId })) ? 'duplicate' : 'no_account';
  }

  private async updateAccount(id: string, update: mongoose.UpdateQuery<AccountDoc>): Promise<Account | undefined> {
    const doc = await this.accounts
      .findOneAndUpdate({ _id: id }, update, { returnDocument: 'after' })
      .lean<AccountDoc>();
    return doc ? toAccount(doc) : undefined;
  }

  async renewCycle(id: string, expected: number, next: { cycleEnd: number; cycleCredits: number }): Promise<void> {
    await this.accounts.updateOne({ _id: id, cycleEnd: expected }, { $set: next });
  }

  /**
   * Cycle credits first, then top-ups. One update takes the credits and records the hold, guarded
   * on the cycle just read and on enough credits (exactly the cycle balance read, when the hold
   * straddles both); when another change got there first, it is read again.
   */
  reserveCredits<K extends KeyBudget | undefined = undefined>(
    accountId: string,
    credits: number,
    hold: Hold,
    key?: K,
  ): Promise<Reservation | KeyLimitedIf<K> | undefined> {
    return this.reserveAccountCredits(accountId, credits, hold, key) as Promise<
      Reservation | KeyLimitedIf<K> | undefined
    >;
  }

  private async reserveAccountCredits(
    accountId: string,
    credits: number,
    hold: Hold,
    key: KeyBudget | undefined,
  ): Promise<Reservation | KeyLimited | undefined> {
    const path = `holds.${hold.id}`;
    const spendPath = key && `keySpend.${key.id}`;
    // Each lost race means another change of the account went through; the hold tries again after
    // a pause drawn at random ("full jitter"), so the racers spread out, until its budget is spent.
    const deadline = Date.now() + HOLD_BUDGET_MS;
    const judged = {
      cycleCredits: 1,
      topUpCredits: 1,
      cycleEnd: 1,
      [path]: 1,
      ...(spendPath ? { [spendPath]: 1 } : {}),
    };
    for (let attempt = 0; attempt < MIN_HOLD_ATTEMPTS || Date.now() < deadline; attempt++) {
      if (attempt > 0) await jitteredPause(attempt);
      // Only what the hold is judged on: a busy account's document carries hundreds of holds.
      const account = await this.accounts.findById(accountId, judged).lean<AccountDoc>();
      // A retried authorization: the hold its first try took (one released since is gone: refused).
      const existing = account?.holds?.[hold.id];
      if (existing) {
        if (existing.settledSpent !== undefined) throw holdReleased();
        return toReservation({ in: 'a', docId: accountId, holdId: hold.id }, existing);
      }
      if (!account || account.cycleCredits + account.topUpCredits < credits) return undefined;
      const fromCycle = Math.min(account.cycleCredits, credits);
      const record: HoldDoc = {
        fromCycle,
        fromTopUp: credits - fromCycle,
        cycleEnd: account.cycleEnd,
        expiresAt: hold.expiresAt,
        ...(key ? { keyId: key.id } : {}),
      };
      const enough =
        record.fromTopUp === 0
          ? { cycleCredits: { $gte: credits } }
          : { cycleCredits: fromCycle, topUpCredits: { $gte: record.fromTopUp } };
      // The key's spend this cycle grows by $inc, guarded by its limit, so that the holds of one
      // busy key do not race each other; its first hold of a cycle sets it, guarded on what was read.
      let spendGuard = {};
      let spendSet = {};
      let spendInc = {};
      if (key && spendPath) {
        const spend = account.keySpend?.[key.id];
        const sameCycle = spend?.cycleEnd === account.cycleEnd;
        const spent = sameCycle && spend ? spend.credits : 0;
        if (key.limit !== null && spent + credits > key.limit) return { keyLimited: { spent } };
        if (sameCycle) {
          spendGuard = {
            [`${spendPath}.cycleEnd`]: account.cycleEnd,
            ...(key.limit !== null ? { [`${spendPath}.credits`]: { $lte: key.limit - credits } } : {}),
          };
          spendInc = { [`${spendPath}.credits`]: credits };
        } else {
          spendGuard = spend
            ? { [`${spendPath}.cycleEnd`]: spend.cycleEnd, [`${spendPath}.credits`]: spend.credits }
            : { [spendPath]: { $exists: false } };
          spendSet = { [spendPath]: { cycleEnd: account.cycleEnd, credits } };
        }
      }
      const taken = await this.accounts.updateOne(
        { _id: accountId, cycleEnd: account.cycleEnd, [path]: { $exists: false }, ...enough, ...spendGuard },
        {
          $inc: increments({ cycleCredits: -fromCycle, topUpCredits: -record.fromTopUp, openHolds: 1, ...spendInc }),
          $set: { [path]: record, ...spendSet },
        },
      );
      if (taken.modifiedCount === 1) return toReservation({ in: 'a', docId: accountId, holdId: hold.id }, record);
    }
    throw unavailable('LEDGER_BUSY', 'the account is too busy to hold credits right now; try again');
  }

  async reserveAllowance(
    allowanceKey: string,
    credits: number,
    max: number,
    allowanceExpiresAt: number,
    hold: Hold,
  ): Promise<Reservation | undefined> {
    if (credits > max) return undefined;
    const path = `holds.${hold.id}`;
    const record: HoldDoc = { fromCycle: credits, fromTopUp: 0, cycleEnd: null, expiresAt: hold.expiresAt };
    const taken = await this.upsert(
      this.counters,
      { _id: allowanceKey, value: { $lte: max - credits }, [path]: { $exists: false } },
      {
        $inc: { value: credits, openHolds: 1 },
        $set: { [path]: record },
        $setOnInsert: { expiresAt: new Date(allowanceExpiresAt) },
      },
    );
    if (taken) return toReservation({ in: 'c', docId: allowanceKey, holdId: hold.id }, record);
    // Refused: short of allowance, or a retried authorization whose hold is already there.
    const doc = await this.counters.findOne({ _id: allowanceKey, [path]: { $exists: true } }).lean<CounterDoc>();
    const existing = doc?.holds?.[hold.id];
    if (existing?.settledSpent !== undefined) throw holdReleased();
    return existing ? toReservation({ in: 'c', docId: allowanceKey, holdId: hold.id }, existing) : undefined;
  }

  /** Where a hold named by the edge lies: only documents holding anything are read (openHolds). */
  private async placeOfName(holdId: string): Promise<HoldPlace | undefined> {
    if (!HOLD_NAME.test(holdId)) return undefined;
    const filter = { openHolds: { $gt: 0 }, [`holds.${holdId}`]: { $exists: true } };
    const account = await this.accounts.findOne(filter, { _id: 1 }).lean<{ _id: string }>();
    if (account) return { in: 'a', docId: account._id, holdId };
    const counter = await this.counters.findOne(filter, { _id: 1 }).lean<{ _id: string }>();
    return counter ? { in: 'c', docId: counter._id, holdId } : undefined;
  }

  /**
   * findOneAndUpdate with upsert. A guard that fails on an existing document makes the upsert try
   * to insert a duplicate _id (E11000); a concurrent first insert does the same. Either way one
   * retry without upsert tells the two apart.
   */
  private async upsert<T extends { _id: string }>(
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

  /**
   * One update ends the hold and returns its unused credits, guarded on the hold still being
   * unsettled as read (so exactly one settlement wins) and, for an account, on the cycle the return
   * was judged against (cycle credits return only to the cycle they came from). A remembered hold
   * stays in place as a settled record (counted in openHolds until the sweep removes it); a partial
   * settlement rewrites the hold smaller, guarded on what it held as read.
   */
  async settle(reservationId: string, spentCredits: number): Promise<Reservation | undefined> {
    return settleCredits(this, reservationId, spentCredits);
  }

  async settleCalls(reservationId: string, spend: HoldSpend): Promise<SettleResult | undefined> {
    const place = holdPlace(reservationId) ?? (await this.placeOfName(reservationId));
    if (!place) return undefined;
    const path = `holds.${place.holdId}`;
    // The two documents hold holds alike; one model type serves both.
    const model = (place.in === 'a' ? this.accounts : this.counters) as unknown as DocModel<AccountDoc>;
    for (;;) {
      const doc = await model.findOne({ _id: place.docId, [path]: { $exists: true } }).lean<AccountDoc | CounterDoc>();
      const hold = doc?.holds?.[place.holdId];
      if (!doc || !hold) return undefined;
      if (hold.settledSpent !== undefined) return { settledBefore: { spentCredits: hold.settledSpent } };
      const { fresh, credits: spentCredits } = freshCalls(spend, hold.spentCalls ?? []);
      const asRead = {
        _id: place.docId,
        [`${path}.fromCycle`]: hold.fromCycle,
        [`${path}.fromTopUp`]: hold.fromTopUp,
        [`${path}.settledSpent`]: { $exists: false },
      };
      let update: mongoose.UpdateQuery<AccountDoc>;
      let guard: Record<string, unknown> = asRead;
      if (spend.keepOpen) {
        const named = spend.calls.flatMap(({ callId }, i) => (fresh[i] && callId !== undefined ? [callId] : []));
        const left = keptOpen(hold, spentCredits);
        // Nothing new to spend (a retry): an update that changes nothing would match no change.
        if (named.length === 0 && spentCredits === 0) return { settled: toReservation(place, hold), fresh };
        const spentCalls = [...(hold.spentCalls ?? []), ...named];
        update = {
          $set: {
            [`${path}.fromCycle`]: left.fromCycle,
            [`${path}.fromTopUp`]: left.fromTopUp,
            [`${path}.spentCalls`]: spentCalls,
            [`${path}.partlySpent`]:
              (hold.partlySpent ?? 0) + hold.fromCycle + hold.fromTopUp - left.fromCycle - left.fromTopUp,
          },
        };
      } else {
        const { toCycle, toTopUp } = unusedCredits(hold, spentCredits);
        const spent = hold.fromCycle + hold.fromTopUp - toCycle - toTopUp;
        const ended =
          spend.rememberUntil === undefined
            ? { $unset: { [path]: '' } }
            : {
                $set: {
                  [path]: { ...hold, settledSpent: spent + (hold.partlySpent ?? 0), expiresAt: spend.rememberUntil },
                },
              };
        // A forgotten hold leaves openHolds; a remembered one when the sweep removes it.
        const holds = spend.rememberUntil === undefined ? -1 : 0;
        if (place.in === 'c') {
          update = { ...ended, $inc: increments({ openHolds: holds, value: -toCycle }) };
        } else {
          const account = doc as AccountDoc;
          const sameCycle = hold.cycleEnd === account.cycleEnd;
          // The key's spend was set in this hold's cycle; once the account has moved on, it is left alone.
          const keyRefund =
            hold.keyId && sameCycle && account.keySpend?.[hold.keyId]
              ? { [`keySpend.${hold.keyId}.credits`]: -(toCycle + toTopUp) }
              : {};
          update = {
            ...ended,
            $inc: increments({
              openHolds: holds,
              cycleCredits: sameCycle ? toCycle : 0,
              topUpCredits: toTopUp,
              ...keyRefund,
            }),
          };
          guard = { ...asRead, cycleEnd: account.cycleEnd };
        }
      }
      const settled = await model.updateOne(guard, update);
      if (settled.modifiedCount === 1) return { settled: toReservation(place, hold), fresh };
      // Settled or spent from meanwhile, or the cycle renewed: read again and judge again.
    }
  }

  /** Reads only the documents holding anything (an index on openHolds). */
  async expiredReservations(now: number, limit: number): Promise<Reservation[]> {
    const holding = { openHolds: { $gt: 0 } };
    const [accounts, counters] = await Promise.all([
      this.accounts.find(holding, { holds: 1 }).lean<HoldingDoc[]>(),
      this.counters.find(holding, { holds: 1 }).lean<HoldingDoc[]>(),
    ]);
    const expired: Reservation[] = [];
    for (const [where, docs] of [
      ['a', accounts],
      ['c', counters],
    ] as const) {
      for (const doc of docs) {
        for (const [holdId, hold] of Object.entries(doc.holds ?? {})) {
          if (hold.expiresAt <= now && hold.settledSpent === undefined)
            expired.push(toReservation({ in: where, docId: doc._id, holdId }, hold));
        }
      }
    }
    return expired.sort((x, y) => x.expiresAt - y.expiresAt).slice(0, limit);
  }

  async increment(key: string, by: number, expiresAt: number): Promise<number> {
    const doc = await this.upsert(
      this.counters,
      { _id: key },
      { $inc: { value: by }, $setOnInsert: { expiresAt: new Date(expiresAt) } },
    );
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

  async keySpend(accountId: string, cycleEnd: number): Promise<Map<string, number>> {
    const doc = await this.accounts.findById(accountId, { keySpend: 1 }).lean<Pick<AccountDoc, 'keySpend'>>();
    const spend = new Map<string, number>();
    for (const [keyId, entry] of Object.entries(doc?.keySpend ?? {}))
      if (entry.cycleEnd === cycleEnd) spend.set(keyId, entry.credits);
    return spend;
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

  async addUsage(records: readonly UsageRecord[]): Promise<void> {
    if (records.length > 0) await this.usage.insertMany(records);
  }

  async recentUsage(accountId: string, limit: number): Promise<UsageRecord[]> {
    const docs = await this.usage.find({ accountId }).sort({ at: -1, _id: -1 }).limit(limit).lean<UsageRecord[]>();
    return docs.map(({ accountId, operation, credits, at, target }) => ({
      accountId,
      operation,
      credits,
      at,
      ...(target ? { target } : {}),
    }));
  }

  async touchApiKey(keyId: string, at: number, everyMs: number): Promise<void> {
    await this.apiKeys.updateOne(
      { _id: keyId, $or: [{ lastUsedAt: null }, { lastUsedAt: { $lte: at - everyMs } }] },
      { $set: { lastUsedAt: at } },
    );
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

  async deleteSessionsOf(accountId: string): Promise<void> {
    await this.sessions.deleteMany({ accountId });
  }

  /**
   * An expired record is deleted first (the TTL monitor runs only once a minute); then the insert
   * of the claim either lands or meets the record that holds the key. Deleted meanwhile by its
   * first caller's release: the claim tries again.
   */
  async claimIdempotency(claim: IdempotencyClaim, now: number): Promise<IdempotencyRecord | undefined> {
    for (let attempt = 0; attempt < 3; attempt++) {
      await this.idempotency.deleteOne({ _id: claim.id, expiresAt: { $lte: new Date(now) } });
      try {
        await this.idempotency.create({
          _id: claim.id,
          fingerprint: claim.fingerprint,
          expiresAt: new Date(claim.expiresAt),
          status: null,
          body: null,
          headers: null,
        });
        return undefined;
      } catch (err) {
        if (!isDuplicateKey(err)) throw err;
      }
      const doc = await this.idempotency.findById(claim.id).lean<IdempotencyDoc>();
      if (!doc) continue;
      const record: IdempotencyRecord = {
        id: doc._id,
        fingerprint: doc.fingerprint,
        expiresAt: doc.expiresAt.getTime(),
      };
      if (doc.status !== null && doc.status !== undefined)
        record.answer = { status: doc.status, body: doc.body ?? '', headers: doc.headers ?? '{}' };
      return record;
    }
    throw unavailable('IDEMPOTENCY_CONTENDED', 'the idempotency key is contended; retry');
  }

  async completeIdempotency(
    id: string,
    fingerprint: string,
    answer: IdempotentAnswer,
    expiresAt: number,
  ): Promise<boolean> {
    const result = await this.idempotency.updateOne(
      { _id: id, fingerprint, status: null },
      { $set: { ...answer, expiresAt: new Date(expiresAt) } },
    );
    return result.modifiedCount === 1;
  }

  async releaseIdempotency(id: string, fingerprint: string): Promise<void> {
    await this.idempotency.deleteOne({ _id: id, fingerprint, status: null });
  }

  async secret(name: string, candidate: string): Promise<string> {
    const doc = await this.upsert(this.secrets, { _id: name }, { $setOnInsert: { value: candidate } });
    const stored = doc ?? (await this.secrets.findById(name).lean<SecretDoc>());
    if (!stored) throw new Error(`secret ${name} is neither stored nor insertable`);
    return stored.value;
  }

  /** Expired counters and sessions go by their TTL indexes. */
  /** Removes settled holds remembered past their time (the rest expires by TTL indexes). */
  async sweep(now: number): Promise<void> {
    const holding = { openHolds: { $gt: 0 } };
    for (const model of [this.accounts, this.counters] as unknown as DocModel<AccountDoc>[]) {
      for (const doc of await model.find(holding, { holds: 1 }).lean<HoldingDoc[]>()) {
        for (const [holdId, hold] of Object.entries(doc.holds ?? {})) {
          if (hold.settledSpent === undefined || hold.expiresAt > now) continue;
          const path = `holds.${holdId}`;
          await model.updateOne(
            { _id: doc._id, [`${path}.settledSpent`]: { $exists: true } },
            { $unset: { [path]: '' }, $inc: { openHolds: -1 } },
          );
        }
      }
    }
  }

  async close(): Promise<void> {
    await this.connection.close();
  }
}
