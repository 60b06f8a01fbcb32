/** The status pages in the Mongo store (the cluster's): one document per owner, the slug unique. */
import type { Connection, Model } from 'mongoose';
import { Schema } from 'mongoose';
import { SlugTakenError, type StatusPageRecord, type StatusPageStore } from './store.js';

interface StatusPageDoc {
  _id: string;
  slug: string;
  title: string;
  monitorIds: string[];
  enabled: boolean;
  updatedAt: number;
}

const schema = new Schema<StatusPageDoc>(
  {
    _id: { type: String, required: true },
    slug: { type: String, required: true, unique: true },
    title: { type: String, required: true },
    monitorIds: { type: [String], required: true, index: true },
    enabled: { type: Boolean, required: true },
    updatedAt: { type: Number, required: true },
  },
  { versionKey: false, autoCreate: false, autoIndex: false, collection: 'monitor_status_pages' },
);

const DUPLICATE_KEY = 11000;

const fromDoc = (doc: StatusPageDoc | null): StatusPageRecord | undefined =>
  doc
    ? {
        owner: doc._id,
        slug: doc.slug,
        title: doc.title,
        monitorIds: [...doc.monitorIds],
        enabled: doc.enabled,
        updatedAt: doc.updatedAt,
      }
    : undefined;

export class MongoStatusPageStore implements StatusPageStore {
  private readonly pages: Model<StatusPageDoc>;

  constructor(connection: Connection) {
    this.pages = connection.model<StatusPageDoc>('MonitorStatusPage', schema);
  }

  /** Creates the unique slug index before the first write (a duplicate slug is then refused by the store). */
  async init(): Promise<void> {
    await this.pages.createIndexes();
  }

  async put(page: StatusPageRecord): Promise<StatusPageRecord> {
    const holder = await this.pages.findOne({ slug: page.slug }, { _id: 1 }).lean();
    if (holder && holder._id !== page.owner) throw new SlugTakenError(page.slug);
    const { owner, ...fields } = page;
    try {
      await this.pages.updateOne({ _id: owner }, { $set: fields }, { upsert: true });
    } catch (err) {
      if ((err as { code?: number }).code === DUPLICATE_KEY) throw new SlugTakenError(page.slug);
      throw err;
    }
    return page;
  }

  async byOwner(owner: string): Promise<StatusPageRecord | undefined> {
    return fromDoc(await this.pages.findById(owner).lean());
  }

  async bySlug(slug: string): Promise<StatusPageRecord | undefined> {
    return fromDoc(await this.pages.findOne({ slug }).lean());
  }

  async showing(monitorId: string): Promise<StatusPageRecord | undefined> {
    return fromDoc(await this.pages.findOne({ monitorIds: monitorId, enabled: true }).lean());
  }
}
