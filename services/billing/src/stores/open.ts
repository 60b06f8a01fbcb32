import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { env } from '@webutil/kit';
import type { BillingStore } from './store.js';
import { openSqliteStore } from './store-sqlite.js';

/** The variables that pick and place the store (the service and the admin CLI read the same). */
export const storeEnv = {
  DATA_DIR: env.string('.data'),
  MONGO_URL: env.optionalString(),
};

/** The embedded store's file name under the data directory. */
export const SQLITE_FILE = 'billing.sqlite';

export interface StoreConfig {
  /** The embedded store's directory (default). */
  dataDir: string;
  /** When set, the cluster store: MongoDB through mongoose. */
  mongoUrl?: string;
}

/**
 * The embedded SQLite file under the data directory, or MongoDB when MONGO_URL is set (mongoose and
 * the driver loaded only then, as every service's Mongo adapters are).
 */
export async function openStore(config: StoreConfig): Promise<BillingStore> {
  if (config.mongoUrl) {
    const { connectMongoStore } = await import('./store-mongo.js');
    return connectMongoStore(config.mongoUrl);
  }
  mkdirSync(config.dataDir, { recursive: true });
  return openSqliteStore(path.join(config.dataDir, SQLITE_FILE));
}
