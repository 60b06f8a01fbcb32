import mongoose from 'mongoose';
import type { BillingStore } from './store.js';
import { mongoAccounts } from './store-mongo-accounts.js';
import { mongoCounters } from './store-mongo-counters.js';
import { mongoIdempotency } from './store-mongo-idempotency.js';
import { mongoLedger } from './store-mongo-ledger.js';
import { mongoPayments } from './store-mongo-payments.js';
import { modelsOf } from './store-mongo-schema.js';
import { mongoSessions } from './store-mongo-sessions.js';

/**
 * The cluster store: MongoDB through mongoose (MONGO_URL), its parts one file each
 * (store-mongo-<aggregate>.ts) sharing the connection's models.
 */
export async function connectMongoStore(url: string, dbName?: string): Promise<BillingStore> {
  const connection = await mongoose
    .createConnection(url, { autoCreate: false, autoIndex: false, ...(dbName ? { dbName } : {}) })
    .asPromise();
  const models = modelsOf(connection);
  for (const model of [models.accounts, models.apiKeys, models.sessions, models.counters, models.usage])
    await model.createIndexes();
  await models.idempotency.createIndexes();
  const ledger = mongoLedger(models);
  return {
    ...mongoAccounts(models),
    ...ledger,
    ...mongoPayments(models),
    ...mongoSessions(models),
    ...mongoIdempotency(models),
    ...mongoCounters(models),
    // Expired counters, sessions and idempotency records go by their TTL indexes.
    sweep: (now: number) => ledger.sweep(now),
    async close(): Promise<void> {
      await connection.close();
    },
  };
}
