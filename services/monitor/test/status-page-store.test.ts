import { randomUUID } from 'node:crypto';
import { type MongoUnderTest, startMongo } from '@webutil/scripts/mongo-under-test';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import mongoose from 'mongoose';
import { SlugTakenError, type StatusPageRecord, type StatusPageStore } from '../src/status-pages/store.js';
import { MongoStatusPageStore } from '../src/status-pages/store-mongo.js';
import { SqliteStatusPageStore } from '../src/status-pages/store-sqlite.js';

let mongo: MongoUnderTest | undefined;
const connections: mongoose.Connection[] = [];

const harnesses: {
  name: string;
  before?: () => Promise<void>;
  after?: () => Promise<void>;
  open(): Promise<StatusPageStore>;
}[] = [
  { name: 'embedded SQLite', open: async () => new SqliteStatusPageStore(new Database(':memory:')) },
  {
    name: process.env.MONGO_URL ? 'mongoose on MONGO_URL' : 'mongoose on jongodb',
    before: async () => {
      mongo = await startMongo();
    },
    after: async () => {
      await Promise.all(connections.map((c) => c.close()));
      await mongo?.stop();
    },
    async open() {
      const connection = await mongoose
        .createConnection(mongo!.url, { dbName: `status_${randomUUID().replace(/-/g, '')}` })
        .asPromise();
      connections.push(connection);
      const store = new MongoStatusPageStore(connection);
      await store.init();
      return store;
    },
  },
];

const page = (owner: string, slug: string, monitorIds: string[], enabled = true): StatusPageRecord => ({
  owner,
  slug,
  title: `${slug} status`,
  monitorIds,
  enabled,
  updatedAt: Date.UTC(2026, 10, 29),
});

for (const harness of harnesses) {
  describe(`status page store: ${harness.name}`, function () {
    this.timeout(60_000);
    let store: StatusPageStore;
    before(async () => harness.before?.());
    after(async () => harness.after?.());
    beforeEach(async () => {
      store = await harness.open();
    });

    it('keeps one page per owner, found by owner and by slug', async () => {
      const saved = page('account:a', 'acme', ['m1', 'm2']);
      await store.put(saved);
      expect(await store.byOwner('account:a')).to.deep.equal(saved);
      expect(await store.bySlug('acme')).to.deep.equal(saved);
      expect(await store.bySlug('other')).to.equal(undefined);
    });

    it('a put replaces the owner’s page; its old slug is free again', async () => {
      await store.put(page('account:a', 'acme', ['m1']));
      const renamed = page('account:a', 'acme-2', ['m2']);
      await store.put(renamed);
      expect(await store.byOwner('account:a')).to.deep.equal(renamed);
      expect(await store.bySlug('acme')).to.equal(undefined);
      await store.put(page('account:b', 'acme', ['m9']));
      expect((await store.bySlug('acme'))?.owner).to.equal('account:b');
    });

    it('refuses a slug another owner holds, leaving both pages as they were', async () => {
      const held = page('account:a', 'acme', ['m1']);
      await store.put(held);
      const mine = page('account:b', 'bravo', ['m5']);
      await store.put(mine);
      let refused: unknown;
      await store.put(page('account:b', 'acme', ['m5'])).catch((err) => {
        refused = err;
      });
      expect(refused).to.be.instanceOf(SlugTakenError);
      expect(await store.bySlug('acme')).to.deep.equal(held);
      expect(await store.byOwner('account:b')).to.deep.equal(mine);
    });

    it('finds the enabled page showing a monitor, and none once it is disabled or the monitor removed', async () => {
      await store.put(page('account:a', 'acme', ['m1', 'm2']));
      expect((await store.showing('m2'))?.slug).to.equal('acme');
      expect(await store.showing('m3')).to.equal(undefined);
      await store.put(page('account:a', 'acme', ['m1', 'm2'], false));
      expect(await store.showing('m2')).to.equal(undefined);
      await store.put(page('account:a', 'acme', ['m1']));
      expect(await store.showing('m2')).to.equal(undefined);
      expect((await store.showing('m1'))?.slug).to.equal('acme');
    });
  });
}
