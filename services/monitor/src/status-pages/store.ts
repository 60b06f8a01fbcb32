/**
 * Where each account's status page settings live (decision 0438): one page per owner, its slug
 * unique across owners. Adapters: store-sqlite.ts (embedded), store-mongo.ts (decision 0401's naming).
 */
export interface StatusPageRecord {
  /** Whose page: billing's subject of the account (`account:<id>`). */
  owner: string;
  slug: string;
  title: string;
  monitorIds: string[];
  enabled: boolean;
  updatedAt: number;
}

/** A slug already held by another owner's page. */
export class SlugTakenError extends Error {
  constructor(slug: string) {
    super(`the status page address ${slug} is taken`);
  }
}

export interface StatusPageStore {
  /** Creates or replaces the owner's page; SlugTakenError when another owner holds the slug. */
  put(page: StatusPageRecord): Promise<StatusPageRecord>;
  byOwner(owner: string): Promise<StatusPageRecord | undefined>;
  bySlug(slug: string): Promise<StatusPageRecord | undefined>;
  /** The enabled page that shows the monitor, if any (badges are served only then). */
  showing(monitorId: string): Promise<StatusPageRecord | undefined>;
}

/** The store beside the monitors': the Mongo database when one is named, else the embedded file. */
export async function openStatusPages(options: { mongoUrl?: string; sqliteFile: string }): Promise<StatusPageStore> {
  if (options.mongoUrl) {
    const [{ default: mongoose }, { MongoStatusPageStore }] = await Promise.all([
      import('mongoose'),
      import('./store-mongo.js'),
    ]);
    const connection = await mongoose
      .createConnection(options.mongoUrl, { autoCreate: false, autoIndex: false })
      .asPromise();
    const store = new MongoStatusPageStore(connection);
    await store.init();
    return store;
  }
  const [{ default: Database }, { SqliteStatusPageStore }] = await Promise.all([
    import('better-sqlite3'),
    import('./store-sqlite.js'),
  ]);
  return new SqliteStatusPageStore(new Database(options.sqliteFile));
}
