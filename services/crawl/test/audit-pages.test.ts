import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type MongoUnderTest, startMongo } from '@webutil/scripts/mongo-under-test';
import { expect } from 'chai';
import type { AuditPageStore } from '../src/jobs/audit-pages.js';
import { MongoAuditPages } from '../src/jobs/audit-pages-mongo.js';
import { SqliteAuditPages } from '../src/jobs/audit-pages-sqlite.js';
import type { AuditedPage } from '../src/site-audit/page-checks.js';

interface Adapter {
  name: string;
  /** A second handle on the same data (another replica's). */
  open(): Promise<AuditPageStore>;
  cleanup(): Promise<void>;
}

function sqlite(): Adapter {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'audit-pages-'));
  return {
    name: 'SQLite (embedded)',
    open: async () => new SqliteAuditPages(path.join(dir, 'jobs.sqlite')),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

function mongo(): Adapter {
  let server: MongoUnderTest | undefined;
  const collection = `audit_pages_${randomUUID().slice(0, 8)}`;
  return {
    name: `mongoose on ${process.env.MONGO_URL ? 'MONGO_URL' : 'jongodb'}`,
    open: async () => {
      server ??= await startMongo();
      return MongoAuditPages.connect(server.url, collection);
    },
    cleanup: async () => server?.stop(),
  };
}

const page = (url: string, depth: number, over: Partial<AuditedPage> = {}): AuditedPage => ({
  url,
  depth,
  fromSitemap: false,
  status: 200,
  redirects: 0,
  refused: false,
  facts: {
    title: `Title of ${url}`,
    h1Count: 1,
    noindex: false,
    hreflang: [{ lang: 'de', url: `${url}de` }],
    jsonLdInvalid: 0,
    imagesWithoutAlt: 0,
    imagesWithoutAltSrc: [],
    mixedContent: [],
    htmlChars: 1234,
    bodyHash: 'abc',
    ttfbMs: 5,
  },
  links: [`${url}next`],
  ...over,
});

const later = () => new Date(Date.now() + 60_000);

async function readAll(store: AuditPageStore, jobId: string, batch?: number): Promise<AuditedPage[][]> {
  const batches: AuditedPage[][] = [];
  for await (const b of store.read(jobId, batch)) batches.push(b);
  return batches;
}

/** One conformance suite; every audit page store adapter must pass it. */
for (const adapter of [sqlite(), mongo()]) {
  describe(`audit page store conformance: ${adapter.name}`, function () {
    this.timeout(30_000);
    let store: AuditPageStore;
    let other: AuditPageStore;

    before(async () => {
      store = await adapter.open();
      other = await adapter.open();
    });
    after(async () => {
      await store.close();
      await other.close();
      await adapter.cleanup();
    });

    it('stores page records and reads them back whole, by depth then URL, a batch at a time', async () => {
      const job = randomUUID();
      const pages = [
        page('https://a.test/b', 1),
        page('https://a.test/', 0, { fromSitemap: true }),
        page('https://a.test/c', 2, { status: undefined, error: 'timed out', facts: undefined }),
        page('https://a.test/a', 1, { redirects: 2, redirectTrouble: 'loop', finalUrl: 'https://a.test/z' }),
        page('https://a.test/d', 1, { refused: true }),
      ];
      expect(await store.add(job, pages, later())).to.equal(5);
      const batches = await readAll(store, job, 2);
      expect(batches.map((b) => b.length)).to.deep.equal([2, 2, 1]);
      const urls = batches.flat().map((p) => p.url);
      expect(urls).to.deep.equal([
        'https://a.test/',
        'https://a.test/a',
        'https://a.test/b',
        'https://a.test/d',
        'https://a.test/c',
      ]);
      expect(batches.flat().find((p) => p.url === 'https://a.test/a')).to.deep.equal(pages[3]);
      expect(batches.flat().find((p) => p.url === 'https://a.test/')).to.deep.equal(pages[1]);
      expect(await store.count(job)).to.equal(5);
    });

    it('reads thousands of records in order, each once, across every collection of a spread store', async () => {
      const job = randomUUID();
      // Enough per collection (MongoDB spreads records over 64) for each to be read several times.
      const pages = Array.from({ length: 4_000 }, (_, i) => page(`https://a.test/p/${i}`, i % 5));
      for (let i = 0; i < pages.length; i += 500) await store.add(job, pages.slice(i, i + 500), later());
      const batches = await readAll(store, job, 500);
      expect(batches.map((b) => b.length)).to.deep.equal(Array(8).fill(500));
      const order = (p: AuditedPage) => [p.depth, p.url] as const;
      const expected = [...pages].sort((a, b) => order(a)[0] - order(b)[0] || (a.url < b.url ? -1 : 1));
      expect(batches.flat().map(order)).to.deep.equal(expected.map(order));
    });

    it('keeps one record per URL, the first, whoever stores it again (another replica, another try)', async () => {
      const job = randomUUID();
      expect(await store.add(job, [page('https://a.test/x', 1)], later())).to.equal(1);
      const again = page('https://a.test/x', 3, { status: 404 });
      expect(await other.add(job, [again, page('https://a.test/y', 1)], later())).to.equal(1);
      const stored = (await readAll(other, job)).flat();
      expect(stored.map((p) => [p.url, p.depth, p.status])).to.deep.equal([
        ['https://a.test/x', 1, 200],
        ['https://a.test/y', 1, 200],
      ]);
    });

    it('stores each URL once when two replicas store overlapping pages at the same time', async () => {
      const job = randomUUID();
      const urls = Array.from({ length: 60 }, (_, i) => `https://a.test/p${i}`);
      const [a, b] = await Promise.all([
        store.add(
          job,
          urls.slice(0, 40).map((u) => page(u, 1)),
          later(),
        ),
        other.add(
          job,
          urls.slice(20).map((u) => page(u, 1)),
          later(),
        ),
      ]);
      expect(a + b).to.equal(60);
      expect(await store.count(job)).to.equal(60);
      expect((await readAll(store, job, 7)).flat().map((p) => p.url)).to.have.members(urls);
    });

    it('keeps jobs apart; clear deletes one job only; an unknown job reads empty', async () => {
      const [one, two] = [randomUUID(), randomUUID()];
      await store.add(one, [page('https://a.test/', 0)], later());
      await store.add(two, [page('https://a.test/', 0), page('https://a.test/q', 1)], later());
      expect(await store.clear(two)).to.equal(2);
      expect(await store.count(two)).to.equal(0);
      expect(await readAll(store, two)).to.deep.equal([]);
      expect(await store.count(one)).to.equal(1);
      expect(await readAll(store, randomUUID())).to.deep.equal([]);
    });

    it('sweeps the pages of expired jobs only', async () => {
      const [gone, kept] = [randomUUID(), randomUUID()];
      await store.add(gone, [page('https://a.test/', 0)], new Date(Date.now() + 1_000));
      await store.add(kept, [page('https://a.test/', 0)], later());
      expect(await store.sweep(new Date(Date.now() + 2_000))).to.be.at.least(1);
      expect(await store.count(gone)).to.equal(0);
      expect(await store.count(kept)).to.equal(1);
    });

    it('looks records up by URL, the job’s only, any that are not stored left out', async () => {
      const [job, another] = [randomUUID(), randomUUID()];
      const pages = Array.from({ length: 30 }, (_, i) => page(`https://a.test/g${i}`, 1, { status: 200 + i }));
      await store.add(job, pages, later());
      await store.add(another, [page('https://a.test/other', 1)], later());
      const asked = ['https://a.test/g3', 'https://a.test/g17', 'https://a.test/none', 'https://a.test/other'];
      const found = await other.get(job, asked);
      expect(found.map((p) => p.url).sort()).to.deep.equal(['https://a.test/g17', 'https://a.test/g3']);
      expect(found.find((p) => p.url === 'https://a.test/g17')).to.deep.equal(pages[17]);
      expect(await store.get(job, [])).to.deep.equal([]);
    });

    it('keeps a report’s affected URLs apart from its pages, pages through them by URL then order found', async () => {
      const [job, another] = [randomUUID(), randomUUID()];
      const row = (issueId: string, url: string, seq: number) => ({
        issueId,
        url,
        seq,
        detail: `${issueId} ${seq}`,
        sources: seq % 2 ? [`${url}#from`] : [],
      });
      const rows = [
        row('deep_page', 'https://a.test/c', 0),
        row('deep_page', 'https://a.test/a', 1),
        row('hreflang_no_return', 'https://a.test/a', 5),
        row('hreflang_no_return', 'https://a.test/a', 2),
        row('deep_page', 'https://a.test/b', 3),
        row('hreflang_no_return', 'https://a.test/0', 4),
      ];
      await store.addAffected(job, rows.slice(0, 3), later());
      await other.addAffected(job, rows.slice(3), later());
      await store.addAffected(job, rows.slice(0, 1), later()); // a write retried: stored once
      await store.addAffected(another, [row('deep_page', 'https://a.test/z', 0)], later());
      await store.add(job, [page('https://a.test/', 0)], later());
      const urls = async (issue: string, offset: number, limit: number) =>
        (await other.affected(job, issue, offset, limit)).map((r) => `${r.url} ${r.seq}`);
      expect(await urls('deep_page', 0, 10)).to.deep.equal([
        'https://a.test/a 1',
        'https://a.test/b 3',
        'https://a.test/c 0',
      ]);
      expect(await urls('deep_page', 1, 1)).to.deep.equal(['https://a.test/b 3']);
      expect(await urls('deep_page', 3, 5)).to.deep.equal([]);
      expect(await urls('hreflang_no_return', 0, 10)).to.deep.equal([
        'https://a.test/0 4',
        'https://a.test/a 2',
        'https://a.test/a 5',
      ]);
      expect(await other.affected(job, 'deep_page', 0, 1)).to.deep.equal([row('deep_page', 'https://a.test/a', 1)]);
      expect(await urls('title_missing', 0, 10)).to.deep.equal([]);
      // The pages go once the report is made; the affected URLs stay with the job.
      expect(await store.clear(job)).to.equal(1);
      expect(await urls('deep_page', 0, 10)).to.have.length(3);
      expect(await store.clearAffected(job)).to.equal(6);
      expect(await urls('hreflang_no_return', 0, 10)).to.deep.equal([]);
      expect(await store.affected(another, 'deep_page', 0, 10)).to.have.length(1);
    });

    it('sweeps the affected URLs of expired jobs with their pages', async () => {
      const [gone, kept] = [randomUUID(), randomUUID()];
      const row = { issueId: 'deep_page', url: 'https://a.test/', seq: 0, detail: 'deep', sources: [] };
      await store.addAffected(gone, [row], new Date(Date.now() + 1_000));
      await store.addAffected(kept, [row], later());
      expect(await store.sweep(new Date(Date.now() + 2_000))).to.be.at.least(1);
      expect(await store.affected(gone, 'deep_page', 0, 10)).to.deep.equal([]);
      expect(await store.affected(kept, 'deep_page', 0, 10)).to.have.length(1);
    });
  });
}
