import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { type MongoUnderTest, startMongo } from '@webutil/scripts/mongo-under-test';
import { expect } from 'chai';
import mongoose from 'mongoose';
import { GridFsArtifactStore } from '../src/artifacts/gridfs.js';
import { type ArtifactStore, DiskArtifactStore, isArtifactName, newArtifactName } from '../src/artifacts/index.js';

const run = promisify(execFile);

/** A clock the tests move, so lifetimes pass without waiting. */
class TestClock {
  ms = Date.parse('2026-01-01T00:00:00Z');
  readonly now = () => this.ms;
}

interface Harness {
  name: string;
  before?: () => Promise<void>;
  after?: () => Promise<void>;
  /** A fresh store, and a second handle on the same data (another replica, or a restart). */
  open(clock: TestClock): Promise<{ store: ArtifactStore; replica(): Promise<ArtifactStore>; drop(): Promise<void> }>;
  /** Every stored byte and record, to prove a failed write left nothing behind. */
  leftovers(): Promise<number>;
}

let mongo: MongoUnderTest | undefined;
let dir = '';
let dbName = '';

const harnesses: Harness[] = [
  {
    name: 'local disk',
    async open(clock) {
      dir = mkdtempSync(path.join(os.tmpdir(), 'artifacts-'));
      return {
        store: await DiskArtifactStore.open(dir, clock.now),
        replica: () => DiskArtifactStore.open(dir, clock.now),
        drop: async () => rmSync(dir, { recursive: true, force: true }),
      };
    },
    leftovers: async () =>
      readdirSync(dir).filter((f) => f !== 'keys' && f !== 'tmp').length + readdirSync(path.join(dir, 'tmp')).length,
  },
  {
    name: process.env.MONGO_URL ? 'GridFS on MONGO_URL' : 'GridFS on jongodb',
    before: async () => {
      mongo = await startMongo();
    },
    after: async () => mongo?.stop(),
    async open(clock) {
      dbName = `artifacts_${randomUUID().replace(/-/g, '')}`;
      const connect = () => GridFsArtifactStore.connect(mongo!.url, 'test', { dbName, now: clock.now });
      const store = await connect();
      return { store, replica: connect, drop: async () => undefined };
    },
    async leftovers() {
      const conn = await mongoose.createConnection(mongo!.url, { dbName, autoCreate: false }).asPromise();
      try {
        const files = await conn.db!.collection('test.files').countDocuments();
        return files + (await conn.db!.collection('test.chunks').countDocuments());
      } finally {
        await conn.close();
      }
    },
  },
];

async function readAll(body: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const part of body) parts.push(part);
  return Buffer.concat(parts);
}

async function* slowly(parts: Buffer[], failAfter?: number): AsyncIterable<Uint8Array> {
  let i = 0;
  for (const part of parts) {
    if (failAfter !== undefined && i++ === failAfter) throw new Error('the producer failed midway');
    await new Promise((resolve) => setImmediate(resolve));
    yield part;
  }
}

describe('artifact names', () => {
  it('are unguessable and carry only the extension', () => {
    const names = new Set(Array.from({ length: 1000 }, () => newArtifactName('png')));
    expect(names.size).to.equal(1000);
    for (const name of names) expect(name).to.match(/^[A-Za-z0-9_-]{32}\.png$/);
  });

  it('refuse anything that could leave the store', () => {
    const good = newArtifactName('pdf');
    expect(isArtifactName(good)).to.equal(true);
    for (const bad of [
      '..',
      '../etc/passwd',
      `../${good}`,
      `a/${good}`,
      `${good}/..`,
      `%2e%2e%2f${good}`,
      good.replace('.pdf', '.PDF'),
      good.replace('.', '..'),
      `${good}\u0000`,
      '',
    ]) {
      expect(isArtifactName(bad), bad).to.equal(false);
    }
    expect(() => newArtifactName('../x')).to.throw();
  });
});

describe('openArtifactStore', () => {
  it('opens the embedded store without loading mongoose or the MongoDB driver', async function () {
    this.timeout(30_000);
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'artifacts-'));
    // A process of its own: this one has loaded mongoose for the GridFS tests. An ES module's
    // CommonJS dependencies land in require's cache, so the child lists those it loaded.
    const script = `
      import { createRequire } from 'node:module';
      import { openArtifactStore } from ${JSON.stringify(new URL('../src/artifacts/index.ts', import.meta.url).href)};
      const store = await openArtifactStore({ dataDir: ${JSON.stringify(dataDir)}, bucket: 'test' });
      await store.put({ body: Buffer.from('x'), extension: 'txt', contentType: 'text/plain', ttlMs: 60000 });
      await store.close();
      const loaded = Object.keys(createRequire(import.meta.url).cache);
      const mongo = loaded.filter((file) => /node_modules\\/(mongoose|mongodb|bson)\\//.test(file));
      console.log(mongo.length);
      console.log(loaded.length);
    `;
    try {
      const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script]);
      const [mongoFiles, allFiles] = stdout.trim().split('\n').map(Number);
      expect(allFiles, 'the child lists the CommonJS files it loaded').to.be.greaterThan(0);
      expect(mongoFiles).to.equal(0);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

for (const harness of harnesses) {
  describe(`artifact store conformance: ${harness.name}`, function () {
    this.timeout(30_000);
    let clock: TestClock;
    let store: ArtifactStore;
    let opened: Awaited<ReturnType<Harness['open']>>;

    before(async () => harness.before?.());
    after(async () => harness.after?.());
    beforeEach(async () => {
      clock = new TestClock();
      opened = await harness.open(clock);
      store = opened.store;
    });
    afterEach(async () => {
      await store.close();
      await opened.drop();
    });

    it('stores bytes and streams them back with their facts, to another replica too', async () => {
      const bytes = Buffer.from(Array.from({ length: 700_000 }, (_, i) => i % 251));
      const info = await store.put({
        body: bytes,
        extension: 'png',
        contentType: 'image/png',
        ttlMs: 300_000,
        downloadName: 'café page.png',
        attributes: { clipped: 'true', pages: '3' },
      });
      expect(isArtifactName(info.name)).to.equal(true);
      expect(info).to.include({ contentType: 'image/png', sizeBytes: bytes.length, downloadName: 'café page.png' });
      expect(info.attributes).to.deep.equal({ clipped: 'true', pages: '3' });
      expect(info.createdAt).to.equal(clock.ms);
      expect(info.expiresAt).to.equal(clock.ms + 300_000);

      const replica = await opened.replica();
      try {
        const found = await replica.open(info.name);
        expect(found?.info).to.deep.equal(info);
        expect((await readAll(found!.body)).equals(bytes)).to.equal(true);
        expect(await replica.stat(info.name)).to.deep.equal(info);
      } finally {
        await replica.close();
      }
    });

    it('stores a streamed body and counts its size', async () => {
      const parts = Array.from({ length: 50 }, (_, i) => Buffer.alloc(10_000, i));
      const info = await store.put({ body: slowly(parts), extension: 'html', contentType: 'text/html', ttlMs: 1000 });
      expect(info.sizeBytes).to.equal(500_000);
      expect((await readAll((await store.open(info.name))!.body)).equals(Buffer.concat(parts))).to.equal(true);
    });

    it('leaves nothing behind when the body fails midway', async () => {
      const parts = Array.from({ length: 20 }, () => Buffer.alloc(100_000, 1));
      let failure: unknown;
      await store
        .put({ body: slowly(parts, 10), extension: 'html', contentType: 'text/html', ttlMs: 1000 })
        .catch((err: unknown) => {
          failure = err;
        });
      expect(String(failure)).to.contain('failed midway');
      expect(await harness.leftovers()).to.equal(0);
    });

    it('is gone after its lifetime, for readers at once and from storage after a sweep', async () => {
      const short = await store.put({
        body: Buffer.from('a'),
        extension: 'pdf',
        contentType: 'application/pdf',
        ttlMs: 1000,
      });
      const long = await store.put({
        body: Buffer.from('b'),
        extension: 'pdf',
        contentType: 'application/pdf',
        ttlMs: 5000,
      });
      clock.ms += 1000;
      expect(await store.stat(short.name)).to.equal(undefined);
      expect(await store.open(short.name)).to.equal(undefined);
      expect(await store.stat(long.name)).to.not.equal(undefined);
      expect(await store.sweep()).to.equal(1);
      clock.ms += 4000;
      expect(await store.sweep()).to.equal(1);
      expect(await store.sweep()).to.equal(0);
      expect(await harness.leftovers()).to.equal(0);
    });

    it('deletes an artifact before its lifetime ends, for every replica, and leaves nothing behind', async () => {
      const info = await store.put({
        body: Buffer.from('kept'),
        extension: 'kxbel',
        contentType: 'application/xml',
        ttlMs: 5000,
      });
      const replica = await opened.replica();
      try {
        await replica.delete(info.name);
        expect(await store.stat(info.name)).to.equal(undefined);
        expect(await store.open(info.name)).to.equal(undefined);
      } finally {
        await replica.close();
      }
      // Twice, unknown or malformed: no error.
      for (const name of [info.name, newArtifactName('png'), '../../etc/passwd', '']) await store.delete(name);
      expect(await harness.leftovers()).to.equal(0);
    });

    it('answers unknown and malformed names with nothing', async () => {
      await store.put({ body: Buffer.from('x'), extension: 'png', contentType: 'image/png', ttlMs: 1000 });
      for (const name of [newArtifactName('png'), '../../etc/passwd', 'keys', 'tmp', '', '.json']) {
        expect(await store.stat(name), name).to.equal(undefined);
        expect(await store.open(name), name).to.equal(undefined);
      }
    });

    it('finds the artifact stored last under a cache key, while it lives', async () => {
      const common = { extension: 'png', contentType: 'image/png' };
      expect(await store.findCached('k')).to.equal(undefined);
      const first = await store.put({ ...common, body: Buffer.from('1'), ttlMs: 10_000, cacheKey: 'k' });
      clock.ms += 10;
      const second = await store.put({ ...common, body: Buffer.from('2'), ttlMs: 1000, cacheKey: 'k' });
      await store.put({ ...common, body: Buffer.from('3'), ttlMs: 10_000, cacheKey: 'other' });
      expect(await store.findCached('k')).to.deep.equal(second);
      expect(second.createdAt).to.equal(first.createdAt + 10);
      clock.ms += 1000;
      // The newest has expired: an older result is not served in its place.
      expect(await store.findCached('k')).to.equal(undefined);
      expect(await store.stat(first.name)).to.not.equal(undefined);
    });
  });
}
