import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type MongoUnderTest, startMongo } from '@webutil/scripts/mongo-under-test';
import { expect } from 'chai';
import mongoose from 'mongoose';
import type { BillingStore } from '../src/stores/store.js';
import { connectMongoStore } from '../src/stores/store-mongo.js';
import { openSqliteStore } from '../src/stores/store-sqlite.js';
import { accountCases } from './store-conformance/accounts.js';
import { counterCases } from './store-conformance/counters.js';
import { type Harness, type StoreUnderTest, T0 } from './store-conformance/fixtures.js';
import { idempotencyCases } from './store-conformance/idempotency.js';
import { ledgerCases } from './store-conformance/ledger.js';
import { paymentCases } from './store-conformance/payments.js';
import { sessionCases } from './store-conformance/sessions.js';

let mongo: MongoUnderTest | undefined;
const WRITE_METHODS = new Set([
  'insertOne',
  'insertMany',
  'updateOne',
  'updateMany',
  'replaceOne',
  'findOneAndUpdate',
  'findOneAndReplace',
  'findOneAndDelete',
  'deleteOne',
  'deleteMany',
  'bulkWrite',
]);

const harnesses: Harness[] = [
  {
    name: 'embedded SQLite',
    atomicGuards: true,
    async open() {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'billing-store-'));
      const file = path.join(dir, 'billing.sqlite');
      return {
        store: openSqliteStore(file),
        reopen: async () => openSqliteStore(file),
        drop: async () => rmSync(dir, { recursive: true, force: true }),
      };
    },
  },
  {
    name: process.env.MONGO_URL ? 'mongoose on MONGO_URL' : 'mongoose on jongodb',
    atomicGuards: Boolean(process.env.MONGO_URL),
    async writesOf(work) {
      const writes: string[] = [];
      mongoose.set('debug', (collection: string, method: string) => {
        if (WRITE_METHODS.has(method)) writes.push(`${collection}.${method}`);
      });
      try {
        await work();
      } finally {
        mongoose.set('debug', false);
      }
      return writes;
    },
    before: async () => {
      mongo = await startMongo();
    },
    after: async () => mongo?.stop(),
    async open() {
      const dbName = `billing_${randomUUID().replace(/-/g, '')}`;
      return {
        store: await connectMongoStore(mongo!.url, dbName),
        reopen: () => connectMongoStore(mongo!.url, dbName),
        drop: async () => undefined,
      };
    },
  },
];

for (const harness of harnesses) {
  describe(`billing store conformance: ${harness.name}`, function () {
    this.timeout(60_000);
    let drop: () => Promise<void>;
    const t: StoreUnderTest = {
      harness,
      store: undefined as unknown as BillingStore,
      reopen: async () => {
        throw new Error('no store open');
      },
      async balanceOf(id: string) {
        const a = (await t.store.accountById(id))!;
        return { cycle: a.cycleCredits, topUp: a.topUpCredits };
      },
    };

    before(async () => harness.before?.());
    after(async () => harness.after?.());
    beforeEach(async () => {
      ({ store: t.store, reopen: t.reopen, drop } = await harness.open());
    });
    afterEach(async () => {
      await t.store.close();
      await drop();
    });

    accountCases(t);
    paymentCases(t);
    ledgerCases(t);
    counterCases(t);
    idempotencyCases(t);
    sessionCases(t);
  });
}

describe('embedded SQLite store: housekeeping', () => {
  it('sweep deletes expired counters and sessions', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'billing-store-'));
    const store = openSqliteStore(path.join(dir, 'billing.sqlite'));
    try {
      await store.increment('old', 1, T0);
      await store.insertSession({ id: 'old', accountId: 'a', csrfToken: 'c', createdAt: T0, expiresAt: T0 });
      await store.sweep(T0 + 1);
      expect(await store.counter('old')).to.equal(0);
      expect(await store.sessionById('old')).to.equal(undefined);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
