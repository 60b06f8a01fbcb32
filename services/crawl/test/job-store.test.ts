import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type MongoUnderTest, startMongo } from '@webutil/scripts/mongo-under-test';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { initialProgress } from '../src/jobs/events.js';
import { type JobStore, type NewJob, packResult } from '../src/jobs/store.js';
import { MongoJobStore } from '../src/jobs/store-mongo.js';
import { SqliteJobStore } from '../src/jobs/store-sqlite.js';
import type { CrawlResult, FoundLink, Sourced } from '../src/model.js';

interface Adapter {
  name: string;
  open(): Promise<JobStore>;
  cleanup(): Promise<void>;
}

function sqlite(): Adapter {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'crawl-jobs-'));
  return {
    name: 'SQLite (embedded)',
    open: async () => new SqliteJobStore(path.join(dir, 'jobs.sqlite')),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

function mongo(): Adapter {
  let server: MongoUnderTest | undefined;
  return {
    name: `mongoose on ${process.env.MONGO_URL ? 'MONGO_URL' : 'jongodb'}`,
    open: async () => {
      server ??= await startMongo();
      return MongoJobStore.connect(server.url, `crawl_jobs_${randomUUID().slice(0, 8)}`);
    },
    cleanup: async () => server?.stop(),
  };
}

const job = (over: Partial<NewJob> = {}): NewJob => {
  const now = new Date();
  return {
    id: randomUUID(),
    kind: 'broken-links',
    url: 'https://a.test/',
    progress: initialProgress(250),
    createdAt: now,
    expiresAt: new Date(now.getTime() + 60_000),
    ...over,
  };
};
const progress = (pagesCrawled: number) => ({ ...initialProgress(250), phase: 'crawling', pagesCrawled });

/** One conformance suite; every job store adapter must pass it. */
for (const adapter of [sqlite(), mongo()]) {
  describe(`job store conformance: ${adapter.name}`, function () {
    this.timeout(30_000);
    let store: JobStore;

    before(async () => {
      store = await adapter.open();
    });
    after(async () => {
      await store.close();
      await adapter.cleanup();
    });

    it('creates a crawling job and reads it back; unknown ids are undefined', async () => {
      const j = job({ kind: 'link-extract' });
      await store.create(j);
      const got = await store.get(j.id);
      expect(got).to.deep.include({
        id: j.id,
        kind: 'link-extract',
        url: j.url,
        status: 'crawling',
        attempt: 0,
        seq: 0,
        progress: j.progress,
      });
      expect(got?.createdAt.getTime()).to.equal(j.createdAt.getTime());
      expect(got?.result).to.equal(undefined);
      expect(await store.get(randomUUID())).to.equal(undefined);
    });

    it('keeps a job’s options (those of the start, headers included) for the worker and a resumed try', async () => {
      const scan = {
        resources: false,
        exclude: ['**/private/**'],
        acceptStatus: ['403'],
        maxPages: 3,
        maxDepth: 0,
        headers: { authorization: 'Basic eA==' },
      };
      const j = job({ checkFragments: true, scan });
      await store.create(j);
      expect(await store.get(j.id)).to.deep.include({ checkFragments: true, scan });
      const plain = job();
      await store.create(plain);
      expect((await store.get(plain.id))?.scan).to.equal(undefined);
      expect((await store.crawling()).find((c) => c.id === j.id)?.scan).to.deep.equal(scan);
    });

    it('keeps a list job’s input (a bookmark check) byte for byte; a site crawl has none', async () => {
      const input = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 7) % 256));
      const j = job({ kind: 'bookmarks', url: 'bookmarks:', input });
      await store.create(j);
      const got = await store.get(j.id);
      expect(got?.kind).to.equal('bookmarks');
      expect(got?.input?.equals(input)).to.equal(true);
      const site = job();
      await store.create(site);
      expect((await store.get(site.id))?.input).to.equal(undefined);
    });

    it('refuses a second job with the same id', async () => {
      const j = job();
      await store.create(j);
      const err = await store.create(j).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).to.be.instanceOf(Error);
    });

    it('keeps only progress newer by (attempt, seq)', async () => {
      const j = job();
      await store.create(j);
      expect(await store.recordProgress(j.id, { attempt: 1, seq: 2, progress: progress(2) })).to.equal(true);
      expect(await store.recordProgress(j.id, { attempt: 1, seq: 1, progress: progress(1) })).to.equal(false);
      expect(await store.recordProgress(j.id, { attempt: 1, seq: 2, progress: progress(9) })).to.equal(false);
      expect((await store.get(j.id))?.progress.pagesCrawled).to.equal(2);
      // A new attempt starts its numbering again and still wins.
      expect(await store.recordProgress(j.id, { attempt: 2, seq: 1, progress: progress(0) })).to.equal(true);
      expect(await store.recordProgress(j.id, { attempt: 1, seq: 50, progress: progress(50) })).to.equal(false);
      expect(await store.get(j.id)).to.deep.include({ attempt: 2, seq: 1 });
    });

    it('ends a job once: done with its result; later events change nothing', async () => {
      const j = job();
      await store.create(j);
      const result = extractResult([link('https://a.test/x', ['https://a.test/'])]);
      expect(
        await store.finish(j.id, {
          attempt: 1,
          seq: 9,
          progress: { ...progress(3), phase: 'done' },
          result: packResult(result),
        }),
      ).to.equal(true);
      expect(
        await store.finish(j.id, { attempt: 2, seq: 1, progress: progress(0), result: packResult(extractResult([])) }),
      ).to.equal(false);
      expect(await store.fail(j.id, { code: 'x', message: 'late' })).to.equal(false);
      expect(await store.recordProgress(j.id, { attempt: 9, seq: 9, progress: progress(1) })).to.equal(false);
      const got = await store.get(j.id);
      expect(got).to.deep.include({ status: 'done', result });
      expect(got?.progress.phase).to.equal('done');
      expect(got?.error).to.equal(undefined);
    });

    it('discards a job no worker reported on (a start never queued); one reported on stays', async () => {
      const never = job();
      const started = job();
      await store.create(never);
      await store.create(started);
      await store.recordProgress(started.id, { attempt: 1, seq: 1, progress: progress(1) });
      expect(await store.discard(never.id)).to.equal(true);
      expect(await store.get(never.id)).to.equal(undefined);
      expect(await store.discard(never.id)).to.equal(false);
      expect(await store.discard(started.id)).to.equal(false);
      expect((await store.get(started.id))?.status).to.equal('crawling');
    });

    it('fails a crawling job with an error, with or without a last progress', async () => {
      const a = job();
      const b = job();
      await store.create(a);
      await store.create(b);
      expect(
        await store.fail(
          a.id,
          { code: 'target_unreachable', message: 'down' },
          { attempt: 1, seq: 3, progress: { ...progress(0), phase: 'failed' } },
        ),
      ).to.equal(true);
      expect(await store.fail(b.id, { code: 'crawl_lost', message: 'gone' })).to.equal(true);
      expect(await store.get(a.id)).to.deep.include({
        status: 'failed',
        error: { code: 'target_unreachable', message: 'down' },
        attempt: 1,
        seq: 3,
      });
      expect((await store.get(b.id))?.progress.phase).to.equal('queued');
      expect(
        await store.finish(a.id, { attempt: 2, seq: 1, progress: progress(1), result: packResult(extractResult([])) }),
      ).to.equal(false);
    });

    it('round-trips a large result (1,500 links with 25 sources each)', async () => {
      const j = job();
      await store.create(j);
      const links = Array.from({ length: 1_500 }, (_, i) =>
        link(
          `https://a.test/page/${i}`,
          Array.from({ length: 25 }, (_, k) => `https://a.test/s/${k}`),
        ),
      );
      await store.finish(j.id, {
        attempt: 1,
        seq: 1,
        progress: progress(250),
        result: packResult(extractResult(links)),
      });
      const got = (await store.get(j.id))?.result;
      if (got?.kind !== 'link-extract') throw new Error('not an extract result');
      expect(got.result.links).to.have.length(1_500);
      expect(got.result.links[1_499]).to.deep.equal(links[1_499]);
    });

    it('applies concurrent progress updates so the newest one stays', async () => {
      const j = job();
      await store.create(j);
      await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          store.recordProgress(j.id, { attempt: 1, seq: i + 1, progress: progress(i + 1) }),
        ),
      );
      expect((await store.get(j.id))?.progress.pagesCrawled).to.equal(30);
    });

    it('adds a job of a caller only below its bound of crawling jobs; past it nothing is stored', async () => {
      const caller = `account:${randomUUID()}`;
      const jobs = [job({ caller }), job({ caller, kind: 'link-extract' })];
      for (const j of jobs) expect(await store.create(j, 2)).to.equal(true);
      const third = job({ caller });
      expect(await store.create(third, 2)).to.equal(false);
      expect(await store.get(third.id)).to.equal(undefined);
      expect((await store.crawling()).filter((c) => c.caller === caller)).to.have.length(2);
      // Other callers' jobs, and starts without a caller, are not counted against it.
      expect(await store.create(job({ caller: `${caller}-other` }), 2)).to.equal(true);
      expect(await store.create(job(), 2)).to.equal(true);
      // A job that has ended frees its place.
      await store.fail(jobs[0]?.id as string, { code: 'cancelled', message: 'gone' });
      expect(await store.create(third, 2)).to.equal(true);
      expect((await store.get(third.id))?.caller).to.equal(caller);
    });

    it('lets no more than the bound of one caller’s simultaneous starts through', async () => {
      const caller = `account:${randomUUID()}`;
      const created = await Promise.all(Array.from({ length: 12 }, () => store.create(job({ caller }), 3)));
      const stored = (await store.crawling()).filter((c) => c.caller === caller);
      // Some may be refused while others are being counted (MongoDB); never more than the bound pass.
      expect(stored).to.have.length(created.filter(Boolean).length);
      expect(stored.length).to.be.at.most(3);
    });

    /** Ends the jobs earlier cases left crawling, so only a case's own callers wait for workers. */
    async function endAll(): Promise<void> {
      for (const j of await store.crawling()) await store.fail(j.id, { code: 'crawl_failed', message: 'ended' });
    }

    it('gives a worker to the caller with a job queued that holds the fewest workers for its weight', async () => {
      await endAll();
      const flood = `account:flood-${randomUUID()}`;
      const small = `account:small-${randomUUID()}`;
      const floods = [job({ caller: flood, weight: 16 }), job({ caller: flood, weight: 16 })];
      for (const j of floods) await store.create(j, 16);
      // Alone, the flood takes every worker it asks for.
      expect(await store.claim(floods[0]!.id)).to.deep.equal({ turn: 'run', attempt: 1 });
      const other = job({ caller: small, weight: 2 });
      await store.create(other, 2);
      // The flood holds 1 of weight 16; the other caller, queued, holds none: the flood's next job waits.
      expect(await store.claim(floods[1]!.id)).to.deep.equal({ turn: 'wait' });
      expect((await store.get(floods[1]!.id))?.claims).to.equal(0);
      expect(await store.claim(other.id)).to.deep.equal({ turn: 'run', attempt: 1 });
      // Nobody else queued: its turn.
      expect(await store.claim(floods[1]!.id)).to.deep.equal({ turn: 'run', attempt: 1 });
      // A job taken up before (its worker died) runs again as the next try; an ended one is gone.
      expect(await store.claim(floods[0]!.id)).to.deep.equal({ turn: 'run', attempt: 2 });
      await store.fail(other.id, { code: 'crawl_failed', message: 'x' });
      expect(await store.claim(other.id)).to.deep.equal({ turn: 'gone' });
      expect(await store.claim(randomUUID())).to.deep.equal({ turn: 'gone' });
    });

    it('weighs a caller by its plan: a heavier caller holding more workers may still be owed one', async () => {
      await endAll();
      const heavy = `account:heavy-${randomUUID()}`;
      const light = `account:light-${randomUUID()}`;
      const heavies = [job({ caller: heavy, weight: 16 }), job({ caller: heavy, weight: 16 })];
      const lights = [job({ caller: light, weight: 2 }), job({ caller: light, weight: 2 })];
      for (const j of [...heavies, ...lights]) await store.create(j);
      expect((await store.claim(lights[0]!.id)).turn).to.equal('run');
      // light holds 1 of 2 (0.5), heavy none: heavy's turn, and light's next waits for it.
      expect((await store.claim(lights[1]!.id)).turn).to.equal('wait');
      expect((await store.claim(heavies[0]!.id)).turn).to.equal('run');
      // heavy holds 1 of 16 (0.06) < 0.5: still heavy's turn while its other job is queued.
      expect((await store.claim(lights[1]!.id)).turn).to.equal('wait');
      expect((await store.claim(heavies[1]!.id)).turn).to.equal('run');
      expect((await store.claim(lights[1]!.id)).turn).to.equal('run');
    });

    it('does not count a caller’s expired jobs', async () => {
      const caller = `account:${randomUUID()}`;
      expect(await store.create(job({ caller, expiresAt: new Date(Date.now() - 1) }), 1)).to.equal(true);
      expect(await store.create(job({ caller }), 1)).to.equal(true);
    });

    it('treats an expired job as gone at once, lists and sweeps only what is due', async () => {
      const expired = job({ expiresAt: new Date(Date.now() - 1) });
      const live = job();
      const done = job();
      await store.create(expired);
      await store.create(live);
      await store.create(done);
      await store.finish(done.id, { attempt: 1, seq: 1, progress: progress(1), result: packResult(extractResult([])) });
      expect(await store.get(expired.id)).to.equal(undefined);
      const crawling = (await store.crawling()).map((c) => c.id);
      expect(crawling).to.include(live.id).and.not.include(expired.id).and.not.include(done.id);
      expect(await store.sweep()).to.be.at.least(1);
      expect(await store.get(live.id)).to.not.equal(undefined);
      // A job expires between two reads, whether or not the database has deleted it yet.
      expect(await store.get(live.id, new Date(Date.now() + 120_000))).to.equal(undefined);
    });
  });
}

describe('job store on SQLite: a file of the first release', () => {
  it('gains the columns added since (callers, options, list inputs); its jobs stay readable', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'crawl-jobs-'));
    const file = path.join(dir, 'jobs.sqlite');
    const old = new Database(file);
    old.exec(`CREATE TABLE crawl_jobs (id TEXT PRIMARY KEY, kind TEXT NOT NULL, url TEXT NOT NULL,
      status TEXT NOT NULL, progress TEXT NOT NULL, result BLOB, error TEXT, attempt INTEGER NOT NULL DEFAULT 0,
      seq INTEGER NOT NULL DEFAULT 0, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
      expires_at INTEGER NOT NULL)`);
    const earlier = job();
    old
      .prepare(`INSERT INTO crawl_jobs (id, kind, url, status, progress, created_at, updated_at, expires_at)
        VALUES (?, 'broken-links', ?, 'crawling', ?, ?, ?, ?)`)
      .run(
        earlier.id,
        earlier.url,
        JSON.stringify(earlier.progress),
        earlier.createdAt.getTime(),
        earlier.createdAt.getTime(),
        earlier.expiresAt.getTime(),
      );
    old.close();
    const columns = () => {
      const db = new Database(file, { readonly: true });
      try {
        return db
          .prepare<[], { name: string }>('PRAGMA table_info(crawl_jobs)')
          .all()
          .map((c) => c.name);
      } finally {
        db.close();
      }
    };
    expect(columns()).to.not.include.members(['caller']);
    let store = new SqliteJobStore(file);
    try {
      expect(columns()).to.include.members(['caller', 'check_fragments', 'options', 'input']);
      // The earlier job counts for no caller and has no options.
      const read = await store.get(earlier.id);
      expect(read?.id).to.equal(earlier.id);
      expect(read?.caller).to.equal(undefined);
      expect(read?.scan).to.equal(undefined);
      expect(await store.create(job({ caller: 'ip:192.0.2.1' }), 1)).to.equal(true);
      expect(await store.create(job({ caller: 'ip:192.0.2.1' }), 1)).to.equal(false);
      const scan = { resources: false, exclude: ['**/private/**'], acceptStatus: [], maxPages: 3, maxDepth: 1 };
      const withOptions = job({ checkFragments: true, scan });
      await store.create(withOptions);
      const input = Buffer.from([0, 1, 2, 255]);
      const list = job({ kind: 'bookmarks', url: 'bookmarks:', input });
      await store.create(list);
      await store.close();
      // Opened again, the upgraded file is left as it is.
      store = new SqliteJobStore(file);
      expect(await store.get(withOptions.id)).to.deep.include({ checkFragments: true, scan });
      expect((await store.get(list.id))?.input?.equals(input)).to.equal(true);
      expect(await store.create(job({ caller: 'ip:192.0.2.1' }), 1)).to.equal(false);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

function link(url: string, sources: string[]): FoundLink & Sourced {
  return {
    url,
    originalHref: url,
    text: '',
    rel: 'nofollow',
    type: 'internal',
    scheme: 'https',
    element: 'a',
    sources,
    sourceCount: 40,
  };
}

function extractResult(links: (FoundLink & Sourced)[]): CrawlResult {
  const counts = { total: links.length, internal: links.length, external: 0, mailto: 0, tel: 0 };
  return {
    kind: 'link-extract',
    result: {
      url: 'https://a.test/',
      scannedAt: '2025-01-01T00:00:00.000Z',
      totalLinks: links.length,
      truncated: false,
      counts,
      links,
    },
  };
}
