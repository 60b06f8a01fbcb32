import mongoose, { type Connection, type Model, Schema } from 'mongoose';
import type { MailStore, MailToken, NoticeSettings, TokenPurpose, Verification } from './store.js';

// As billing's own adapter: guarded findOneAndUpdate/updateOne, inserts, unique and TTL indexes
// (what MongoDB and jongodb share); collections are created by their first insert.
const OPTIONS = { versionKey: false, autoCreate: false, autoIndex: false } as const;
type DocModel<T> = Model<T, object, object, { id: string }>;

interface VerificationDoc {
  _id: string;
  email: string;
  createdAt: number;
  verifiedAt: number | null;
}
interface TokenDoc extends Omit<MailToken, 'hash' | 'expiresAt'> {
  _id: string;
  expiresAt: Date;
}
interface SettingsDoc extends NoticeSettings {
  _id: string;
}
interface NoticeDoc {
  _id: string;
  accountId: string;
  expiresAt: Date;
}

const verificationSchema = new Schema<VerificationDoc>(
  {
    _id: String,
    email: { type: String, required: true },
    createdAt: { type: Number, required: true },
    verifiedAt: { type: Number, default: null },
  },
  OPTIONS,
);
const tokenSchema = new Schema<TokenDoc>(
  {
    _id: String,
    accountId: { type: String, required: true },
    purpose: { type: String, required: true },
    email: { type: String, required: true },
    createdAt: { type: Number, required: true },
    expiresAt: { type: Date, required: true },
  },
  OPTIONS,
);
tokenSchema.index({ accountId: 1, purpose: 1 });
tokenSchema.index({ expiresAt: 1 }, { expireAfterSeconds: 0 });
const settingsSchema = new Schema<SettingsDoc>(
  { _id: String, receipts: Boolean, renewals: Boolean, credits: Boolean },
  OPTIONS,
);
const noticeSchema = new Schema<NoticeDoc>(
  { _id: String, accountId: { type: String, required: true }, expiresAt: { type: Date, required: true } },
  OPTIONS,
);
noticeSchema.index({ expiresAt: 1 }, { expireAfterSeconds: 0 });

const isDuplicateKey = (err: unknown) => (err as { code?: unknown }).code === 11000;

/** The cluster mail store on MongoDB through mongoose (its own connection, billing's database). */
export class MongoMailStore implements MailStore {
  private constructor(
    private readonly connection: Connection,
    private readonly verifications: DocModel<VerificationDoc>,
    private readonly tokens: DocModel<TokenDoc>,
    private readonly settings: DocModel<SettingsDoc>,
    private readonly notices: DocModel<NoticeDoc>,
  ) {}

  static async connect(url: string, dbName?: string): Promise<MongoMailStore> {
    const connection = await mongoose
      .createConnection(url, { autoCreate: false, autoIndex: false, ...(dbName ? { dbName } : {}) })
      .asPromise();
    const store = new MongoMailStore(
      connection,
      connection.model('EmailVerification', verificationSchema, 'email_verifications'),
      connection.model('MailToken', tokenSchema, 'mail_tokens'),
      connection.model('NoticeSettings', settingsSchema, 'notice_settings'),
      connection.model('NoticeSent', noticeSchema, 'notices_sent'),
    );
    await store.tokens.createIndexes();
    await store.notices.createIndexes();
    return store;
  }

  async addUnverified(accountId: string, email: string, at: number): Promise<void> {
    try {
      await this.verifications.create({ _id: accountId, email, createdAt: at, verifiedAt: null });
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
    }
  }

  async markVerified(accountId: string, at: number): Promise<void> {
    await this.verifications.updateOne({ _id: accountId, verifiedAt: null }, { $set: { verifiedAt: at } });
  }

  async verification(accountId: string): Promise<Verification | undefined> {
    const doc = await this.verifications.findById(accountId).lean<VerificationDoc>();
    return doc ? { email: doc.email, verifiedAt: doc.verifiedAt ?? null } : undefined;
  }

  async dropVerification(accountId: string): Promise<void> {
    await this.verifications.deleteOne({ _id: accountId });
  }

  async insertToken({ hash, expiresAt, ...rest }: MailToken): Promise<void> {
    await this.tokens.create({ _id: hash, ...rest, expiresAt: new Date(expiresAt) });
  }

  async useToken(hash: string, purpose: TokenPurpose, now: number): Promise<MailToken | undefined> {
    const doc = await this.tokens.findOne({ _id: hash, purpose, expiresAt: { $gt: new Date(now) } }).lean<TokenDoc>();
    if (!doc) return undefined;
    // Of two uses, only one deletes the document (one deleteOne; findOneAndDelete is past jongodb's subset).
    const { deletedCount } = await this.tokens.deleteOne({ _id: hash, purpose });
    if (deletedCount !== 1) return undefined;
    return {
      hash: doc._id,
      accountId: doc.accountId,
      purpose: doc.purpose,
      email: doc.email,
      createdAt: doc.createdAt,
      expiresAt: new Date(doc.expiresAt).getTime(),
    };
  }

  async dropTokens(accountId: string, purpose: TokenPurpose): Promise<void> {
    await this.tokens.deleteMany({ accountId, purpose });
  }

  async noticeSettings(accountId: string): Promise<NoticeSettings | undefined> {
    const doc = await this.settings.findById(accountId).lean<SettingsDoc>();
    return doc
      ? { receipts: doc.receipts !== false, renewals: doc.renewals !== false, credits: doc.credits !== false }
      : undefined;
  }

  async setNoticeSettings(accountId: string, { receipts, renewals, credits }: NoticeSettings): Promise<void> {
    await this.settings.updateOne({ _id: accountId }, { $set: { receipts, renewals, credits } }, { upsert: true });
  }

  async claimNotice(key: string, accountId: string, expiresAt: number): Promise<boolean> {
    try {
      await this.notices.create({ _id: key, accountId, expiresAt: new Date(expiresAt) });
      return true;
    } catch (err) {
      if (isDuplicateKey(err)) return false;
      throw err;
    }
  }

  async sweep(): Promise<void> {
    // TTL indexes delete expired tokens and notice records.
  }

  async close(): Promise<void> {
    await this.connection.close();
  }
}
