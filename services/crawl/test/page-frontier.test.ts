import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type MongoUnderTest, startMongo } from '@webutil/scripts/mongo-under-test';
import { expect } from 'chai';
import type { FoundPage, PageFrontier } from '../src/site-audit/distributed/page-frontier.js';
import { type FrontierSeams, MongoPageFrontier } from '../src/site-audit/distributed/page-frontier-mongo.js';
import { SqlitePageFrontier } from '../src/site-audit/distributed/page-frontier-sqlite.js';

interface Adapter {
  name: string;
  /**
   * Whether the server applies a guarded update atomically under concurrency (SQLite and MongoDB do;
   * jongodb does not: two claims of one row at once both won in about 1 run of 5). The races below
   * prove the adapter where the server keeps that guarantee; on jongodb the same calls run one at a time.
   */
  atomicGuards: boolean;
  /** A handle on the same data (another replica's). */
  open(): Promise<PageFrontier>;
  /** A handle whose inserts call `afterReserve` between reserving room and inserting (MongoDB's only). */
  openWith?(seams: FrontierSeams): Promise<PageFrontier>;
  cleanup(): Promise<void>;
}

function sqlite(): Adapter {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'page-frontier-'));
  return {
    name: 'SQLite (embedded)',
    atomicGuards: true,
    open: async () => new SqlitePageFrontier(path.join(dir, 'jobs.sqlite')),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

function mongo(): Adapter {
  let server: MongoUnderTest | undefined;
  const prefix = `audit_frontier_${randomUUID().slice(0, 8)}`;
  return {
    name: `mongoose on ${process.env.MONGO_URL ? 'MONGO_URL' : 'jongodb'}`,
    atomicGuards: Boolean(process.env.MONGO_URL),
    open: async () => {
      server ??= await startMongo();
      return MongoPageFrontier.connect(server.url, prefix);
    },
    openWith: async (seams) => {
      server ??= await startMongo();
      return MongoPageFrontier.connect(server.url, prefix, seams);
    },
    cleanup: async () => server?.stop(),
  };
}

const page = (n: number, depth = 1): FoundPage => ({ url: `https://a.test/p${n}`, depth, fromSitemap: false });
const inAnHour = () => new Date(Date.now() + 3_600_000);

for (const make of [sqlite, mongo]) {
  const adapter = make();
  describe(`Distributed audit frontier: ${adapter.name}`, function () {
    this.timeout(60_000);
    let a: PageFrontier;
    let b: PageFrontier;
    /** Both calls at once where the server keeps guarded updates atomic, else one after the other. */
    const race = async <T>(one: () => Promise<T>, two: () => Promise<T>): Promise<[T, T]> =>
      adapter.atomicGuards ? Promise.all([one(), two()]) : [await one(), await two()];
    before(async () => {
      a = await adapter.open();
      b = await adapter.open();
    });
    after(async () => {
      await a?.close();
      await b?.close();
      await adapter.cleanup();
    });

    it('admits each page once across replicas, keeps the lower depth, and holds the page cap', async () => {
      const job = randomUUID();
      await a.open(job, 5, inAnHour());
      await b.open(job, 99, inAnHour()); // the first cap stands
      const first = await a.insert(job, [page(1, 2), page(2, 2), page(3, 2)], inAnHour());
      expect(first.queued.map((p) => p.url)).to.deep.equal([page(1).url, page(2).url, page(3).url]);
      const [x, y] = await race(
        () => a.insert(job, [page(3, 1), page(4), page(5), page(6)], inAnHour()),
        () => b.insert(job, [page(4), page(5), page(6), page(7)], inAnHour()),
      );
      const admitted = [...x.queued, ...y.queued].map((p) => p.url);
      expect(new Set(admitted).size, 'no page admitted twice').to.equal(admitted.length);
      expect(admitted).to.have.length(2); // 5 in all
      const counts = await a.counts(job);
      expect(counts.queued).to.equal(5);
      expect(counts.over).to.equal(2); // two of p4..p7 found past the cap, each counted once
      const leased = await a.claim(job, page(3).url, 'r1', 60_000);
      expect(leased?.depth).to.equal(1);
    });

    it('inserts a page again as the store has it: lowered when found lower, admitted anew once cleared', async () => {
      const job = randomUUID();
      await a.open(job, 10, inAnHour());
      expect((await a.insert(job, [page(1, 3), page(2, 3)], inAnHour())).queued).to.have.length(2);
      // Known rows, as deep or deeper: nothing admitted, nothing changed (the same handle, then another).
      expect((await a.insert(job, [page(1, 3), page(2, 4)], inAnHour())).queued).to.deep.equal([]);
      expect((await b.insert(job, [page(1, 3)], inAnHour())).queued).to.deep.equal([]);
      // Found lower by either handle: the row is lowered.
      await a.insert(job, [page(1, 2)], inAnHour());
      await b.insert(job, [{ ...page(2, 1), shapeChain: 0 }], inAnHour());
      expect((await a.claim(job, page(1).url, 'r1', 60_000))?.depth).to.equal(2);
      expect((await a.claim(job, page(2).url, 'r1', 60_000))?.depth).to.equal(1);
      // Another handle clears the job and opens it again (a new try): the pages are new to it.
      await b.clear(job);
      await b.open(job, 10, inAnHour());
      expect((await a.insert(job, [page(1, 3), page(2, 3)], inAnHour())).queued).to.have.length(2);
      expect(await a.counts(job)).to.deep.equal({ queued: 2, leased: 0, done: 0, over: 0 });
    });

    it(
      'leases a page to one worker, lets another take it over once ' + 'the lease runs out, and finishes it once',
      async () => {
        const job = randomUUID();
        await a.open(job, 10, inAnHour());
        await a.insert(job, [page(1)], inAnHour());
        const url = page(1).url;
        const [one, two] = await race(
          () => a.claim(job, url, 'r1', 1_000),
          () => b.claim(job, url, 'r2', 1_000),
        );
        expect([one, two].filter(Boolean)).to.have.length(1);
        const holder = one ? 'r1' : 'r2';
        const other = one ? 'r2' : 'r1';
        expect(await a.renew(job, [url], holder, 1_000)).to.equal(1);
        expect(await a.renew(job, [url], other, 1_000)).to.equal(0);
        expect(await b.claim(job, url, other, 1_000), 'the lease is live').to.equal(undefined);
        const later = new Date(Date.now() + 5_000);
        const taken = await b.claim(job, url, other, 1_000, later);
        expect(taken?.lease).to.equal(2);
        expect(await a.finish(job, url, holder), 'the first holder lost it').to.equal(false);
        expect(await b.finish(job, url, other)).to.equal(true);
        expect(await a.claim(job, url, 'r3', 1_000, new Date(Date.now() + 60_000)), 'done is done').to.equal(undefined);
        expect(await a.counts(job)).to.deep.equal({ queued: 0, leased: 0, done: 1, over: 0 });
      },
    );

    it('gives a row found no page its room back: the first row over the cap admitted, once', async () => {
      const job = randomUUID();
      await a.open(job, 2, inAnHour());
      await a.insert(job, [page(1), page(2), page(3, 2), page(4), page(5)], inAnHour());
      expect(await a.claim(job, page(1).url, 'r1', 60_000)).to.not.equal(undefined);
      expect(await b.finishNoPage(job, page(1).url, 'r2')).to.equal(undefined); // not r2's lease
      // Lowest depth first, then as found: p4 before p3 (depth 2) and p5.
      const admitted = await a.finishNoPage(job, page(1).url, 'r1', '{}');
      expect(admitted?.map((p) => [p.url, p.depth])).to.deep.equal([[page(4).url, 1]]);
      expect(await a.finishNoPage(job, page(1).url, 'r1')).to.equal(undefined); // done already
      expect(await a.counts(job)).to.deep.equal({ queued: 2, leased: 0, done: 1, over: 2 });
      expect(await b.claim(job, page(4).url, 'r2', 60_000)).to.include({ url: page(4).url });
      expect((await a.insert(job, [page(6)], inAnHour())).queued).to.deep.equal([]); // the cap holds
      expect(await b.finishNoPage(job, page(4).url, 'r2')).to.deep.equal([
        { url: page(5).url, depth: 1, fromSitemap: false, shapeChain: 0 },
      ]);
    });

    if (adapter.openWith)
      it('admits a row put over the cap while the room held for it was given back (an insert race)', async () => {
        const job = randomUUID();
        await a.open(job, 2, inAnHour());
        await a.insert(job, [page(1)], inAnHour());
        // This replica reserves the last room for p2; before it inserts, another replica inserts p2
        // and p3 over the cap (no room left); this one then loses p2 and gives the room back.
        let raced = false;
        const c = await (adapter.openWith as NonNullable<Adapter['openWith']>)({
          afterReserve: async () => {
            if (raced) return;
            raced = true;
            expect((await b.insert(job, [page(2), page(3)], inAnHour())).queued).to.deep.equal([]);
          },
        });
        try {
          const admitted = await c.insert(job, [page(2)], inAnHour());
          expect(raced).to.equal(true);
          // The room goes to the first row over the cap: p2, found first, is published by this insert.
          expect(admitted.queued.map((p) => p.url)).to.deep.equal([page(2).url]);
          expect(await a.counts(job)).to.deep.equal({ queued: 2, leased: 0, done: 0, over: 1 });
          expect(await a.tally(job)).to.deep.equal({ open: 2, done: 0, over: 1 });
          expect((await b.insert(job, [page(4)], inAnHour())).queued).to.deep.equal([]); // the cap holds
        } finally {
          await c.close();
        }
      });

    it('hands back stranded pages (queued long ago, or leases run out), and clears and sweeps', async () => {
      const job = randomUUID();
      await a.open(job, 10, inAnHour());
      await a.insert(job, [page(1), page(2), page(3)], inAnHour());
      await a.claim(job, page(2).url, 'r1', 1_000);
      await a.claim(job, page(3).url, 'r1', 60_000);
      const now = new Date(Date.now() + 5_000);
      expect((await a.stranded(job, new Date(Date.now() - 60_000), now, 10)).sort()).to.deep.equal([page(2).url]);
      expect((await a.stranded(job, now, now, 10)).sort()).to.deep.equal([page(1).url, page(2).url]);
      await a.clear(job);
      expect(await a.counts(job)).to.deep.equal({ queued: 0, leased: 0, done: 0, over: 0 });
      const old = randomUUID();
      await a.open(old, 10, new Date(Date.now() - 1));
      await a.insert(old, [page(1)], new Date(Date.now() - 1));
      expect(await a.sweep()).to.be.at.least(1);
      expect((await a.counts(old)).queued).to.equal(0);
    });

    it("keeps a page's shortest same-shape chain for the worker that leases it (the trap guard)", async () => {
      const job = randomUUID();
      await a.open(job, 10, inAnHour());
      await a.insert(job, [{ ...page(1), shapeChain: 5 }, { ...page(2), shapeChain: 4 }, page(3)], inAnHour());
      // Found again by a shorter chain before it is read: the shorter one stands; a longer one changes nothing.
      await b.insert(
        job,
        [
          { ...page(1), shapeChain: 2 },
          { ...page(2), shapeChain: 7 },
        ],
        inAnHour(),
      );
      const leased = await Promise.all([1, 2, 3].map((n) => b.claim(job, page(n).url, 'r1', 60_000)));
      expect(leased.map((p) => p?.shapeChain)).to.deep.equal([2, 4, 0]);
    });

    it('reads thousands of results in URL order, each once; its tally agrees with the rows counted', async () => {
      const job = randomUUID();
      await a.open(job, 3_500, inAnHour());
      // Enough per collection (MongoDB spreads rows over 64) for each to be read several times.
      const rows = Array.from({ length: 4_000 }, (_, i) => ({ ...page(i), payload: `"${i}"`, done: i % 3 === 0 }));
      for (let i = 0; i < rows.length; i += 500) await a.insert(job, rows.slice(i, i + 500), inAnHour());
      const read = [];
      for await (const batch of b.results(job, 500)) read.push(batch.length, ...batch.map((r) => r.url));
      const urls = rows.map((r) => r.url).sort();
      expect(read.filter((x) => typeof x === 'string')).to.deep.equal(urls);
      expect(read.filter((x) => typeof x === 'number')).to.deep.equal(Array(8).fill(500));
      const counted = await b.counts(job);
      expect(counted).to.deep.equal({ queued: 3_500 - 1_167, leased: 0, done: 1_167, over: 500 });
      expect(await b.tally(job)).to.deep.equal({ open: counted.queued, done: counted.done, over: counted.over });
    });

    it('leases the rows an insert admits to its inserter when asked: no claim, finished by it', async () => {
      const job = randomUUID();
      await a.open(job, 2, inAnHour());
      const admitted = await a.insert(job, [page(1), page(2), page(3)], inAnHour(), { owner: 'r1', leaseMs: 60_000 });
      expect(admitted).to.deep.equal({ queued: [page(1), page(2)], over: 1 });
      expect(await b.claim(job, page(1).url, 'r2', 60_000)).to.equal(undefined);
      expect(await b.finish(job, page(1).url, 'r2')).to.equal(false);
      expect(await b.finish(job, page(1).url, 'r1', '"checked"')).to.equal(true);
      expect(await b.counts(job)).to.deep.equal({ queued: 0, leased: 1, done: 1, over: 1 });
      expect(await b.tally(job)).to.deep.equal({ open: 1, done: 1, over: 1 });
    });

    it("keeps the job context, and a row's payload until its result (by order or URL)", async () => {
      const job = randomUUID();
      await a.open(job, 2, inAnHour());
      expect(await b.context(job)).to.equal(undefined);
      await a.setContext(job, '{"site":"https://a.test/"}');
      expect(await b.context(job)).to.equal('{"site":"https://a.test/"}');
      await a.insert(job, [{ ...page(1), payload: '"found"' }, page(2), page(3)], inAnHour());
      await a.claim(job, page(1).url, 'r1', 60_000);
      await a.claim(job, page(2).url, 'r1', 60_000);
      await a.finish(job, page(2).url, 'r1', '"read"');
      const rows = [];
      for await (const batch of b.results(job, 1)) rows.push(...batch);
      expect(rows).to.deep.equal([
        { url: page(1).url, result: '"found"', done: false },
        { url: page(2).url, result: '"read"', done: true },
      ]);
      // Looked up by URL: rows with nothing on them (page 3, over the cap) and unknown URLs are left out.
      const found = await b.resultsOf(job, [page(2).url, page(3).url, page(9).url, page(1).url]);
      expect(found.sort((x, y) => (x.url < y.url ? -1 : 1))).to.deep.equal(rows);
    });
  });
}
