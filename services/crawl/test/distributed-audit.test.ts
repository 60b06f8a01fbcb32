import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { AddressPolicy, createLogger, SafeHttp } from '@webutil/kit';
import type { SiteAuditResult } from '@webutil/proto/webutil/crawl/v1/site_audit';
import { startCrawlSite } from '@webutil/scripts/fixture-crawl-site';
import { removeStreams, SHARED_NATS_URL, uniquePrefix } from '@webutil/scripts/nats-under-test';
import { expect } from 'chai';
import { HostThrottle } from '../src/checking/throttle.js';
import { readConfig } from '../src/config.js';
import { SqliteAuditPages } from '../src/jobs/audit-pages-sqlite.js';
import type { CrawlProgress } from '../src/model.js';
import { MAX_FRAGMENTS_PER_LINK, MAX_FRAGMENTS_PER_PAGE } from '../src/page/links.js';
import { auditSite } from '../src/site-audit/audit-site.js';
import { auditSiteDistributed } from '../src/site-audit/distributed/coordinator.js';
import type { HostBudget } from '../src/site-audit/distributed/host-budget.js';
import type { FoundPage } from '../src/site-audit/distributed/page-frontier.js';
import { SqlitePageFrontier } from '../src/site-audit/distributed/page-frontier-sqlite.js';
import { MemoryPageWork, type PageWorkQueue } from '../src/site-audit/distributed/page-work.js';
import { NatsPageWork } from '../src/site-audit/distributed/page-work-nats.js';
import { AuditPageWorker, fragmentsOf } from '../src/site-audit/distributed/page-worker.js';
import { PageReadThreads } from '../src/site-audit/page-read-threads.js';

const log = createLogger('test', 'silent');

/**
 * A site of `pages` pages in a tree (each links the home page and its three children), with issues
 * planted: every 10th page has no title, every 7th links a missing page and a missing image, every
 * 13th an external link to a missing page, every 11th (from the 4th) names a missing page its
 * canonical and every 11th (from the 6th) a forbidden one (403: a warning, not a broken link); /private/
 * is disallowed by robots.txt and linked from the home page; /old redirects to /p/1; the sitemap lists
 * an orphan. Fragments: every page has the id `sec-<i>` and links /p/1#sec-1; every 9th (from the 2nd)
 * links the next page at its id and at #nope (missing), and /p/2#gone (missing); every 9th (from
 * the 5th) has an in-page anchor to #nowhere (missing); the home page frames /frame.html#not-here
 * (a page not audited, read for its ids). `fetches` counts GETs of each page.
 */
function serveSite(pages: number) {
  const fetches = new Map<string, number>();
  let slow: ((url: string) => Promise<void>) | undefined;
  const server = http.createServer(async (req, res) => {
    const url = req.url ?? '';
    const base = `http://${req.headers.host}`;
    if (url === '/robots.txt')
      return void res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nDisallow: /private/\n');
    if (url === '/sitemap.xml')
      return void res
        .writeHead(200, { 'content-type': 'application/xml' })
        .end(
          '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">' +
            `<url><loc>${base}/</loc></url><url><loc>${base}/orphan</loc></url></urlset>`,
        );
    if (url === '/old') return void res.writeHead(301, { location: '/p/1' }).end();
    if (url === '/style.css')
      return void res.writeHead(200, { 'content-type': 'text/css' }).end('body{background:url(/bg.png)}');
    if (url.startsWith('/forbidden/')) return void res.writeHead(403, { 'content-type': 'text/html' }).end('no');
    if (url === '/frame.html')
      return void res.writeHead(200, { 'content-type': 'text/html' }).end('<p id="here">framed</p>');
    if (url === '/bg.png' || url === '/ok.png')
      return void res.writeHead(200, { 'content-type': 'image/png' }).end('png');
    const match = /^\/(?:p\/(\d+)|orphan)?$/.exec(url);
    const i = match ? (url === '/orphan' ? pages + 1 : Number(match[1] ?? 0)) : Number.NaN;
    if (req.method === 'GET') fetches.set(url, (fetches.get(url) ?? 0) + 1);
    if (!(i < pages || i === pages + 1)) return void res.writeHead(404, { 'content-type': 'text/html' }).end('gone');
    await slow?.(url);
    const children = [1, 2, 3].map((k) => 3 * i + k).filter((c) => c < pages);
    const hrefs = ['/', ...children.map((c) => `/p/${c}`)];
    if (i === 0) hrefs.push('/private/x', '/old');
    hrefs.push('/p/1#sec-1');
    if (i % 9 === 2) hrefs.push(`/p/${i + 1}#sec-${i + 1}`, `/p/${i + 1}#nope`, '/p/2#gone');
    if (i % 9 === 5) hrefs.push(`#sec-${i}`, '#nowhere');
    const frame = i === 0 ? '<iframe src="/frame.html#not-here"></iframe>' : '';
    if (i % 7 === 3) hrefs.push(`/missing/${i}`);
    if (i % 13 === 5) hrefs.push(`http://127.0.0.1:1/gone/${i}`);
    const img = i % 7 === 3 ? `<img src="/nope-${i}.png" alt="x">` : '<img src="/ok.png" alt="ok">';
    const title = i % 10 === 9 ? '' : `<title>Page ${i}</title>`;
    const canonicalTo = i % 11 === 4 ? `/moved/${i}` : i % 11 === 6 ? `/forbidden/${i}` : undefined;
    const canonical = canonicalTo ? `<link rel="canonical" href="${canonicalTo}">` : '';
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end(
        `<!doctype html><html lang="en"><head>${title}${canonical}<link rel="stylesheet" href="/style.css"></head>` +
          `<body><h1>Page ${i}</h1><h2 id="sec-${i}">Section</h2>${frame}${img}` +
          `${hrefs.map((h) => `<a href="${h}">${h}</a>`).join('')}` +
          `<p>Body ${i}</p></body></html>`,
      );
  });
  return new Promise<{
    server: http.Server;
    base: string;
    fetches: Map<string, number>;
    slowDown(f: typeof slow): void;
  }>((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        server,
        base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        fetches,
        slowDown: (f) => {
          slow = f;
        },
      }),
    ),
  );
}

/** GETs per URL, but the soft-404 probe's (a random URL per audit). */
const pageFetches = (fetches: Map<string, number>) =>
  Object.fromEntries([...fetches].filter(([url]) => !url.startsWith('/webutil-probe-')));

/** What two audits of one site must agree on. */
function summary(r: SiteAuditResult) {
  return {
    pagesAudited: r.pagesAudited,
    pagesDiscovered: r.pagesDiscovered,
    truncatedPages: r.truncatedPages,
    brokenLinks: r.brokenLinks,
    totalUniqueLinks: r.totalUniqueLinks,
    healthScore: r.healthScore,
    sitemapUrlCount: r.sitemapUrlCount,
    issues: r.issues
      .map((i) => ({
        id: i.id,
        pages: i.pagesAffected,
        total: i.affectedTotal,
        // A link's pages in the order found by the one-worker crawl; in URL order by the distributed one.
        affected: i.affected.map((a) => ({ ...a, sources: [...a.sources].sort() })),
      }))
      .sort((a, b) => (a.id < b.id ? -1 : 1)),
  };
}

describe('distributed site audit (frontier in the store, pages as work items)', function () {
  this.timeout(120_000);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'audit-dist-'));
  const file = path.join(dir, 'jobs.sqlite');
  const settings = readConfig({ DATA_DIR: dir, WEBUTIL_ALLOW_TARGETS: '127.0.0.0/8' });
  const safe = new SafeHttp({ policy: new AddressPolicy(settings.WEBUTIL_ALLOW_TARGETS) });
  const deps = {
    http: safe,
    throttle: new HostThrottle({
      globalLimit: 64,
      initialPerHost: 16,
      maxPerHost: 32,
      slowMs: 10_000,
      timeoutsToGiveUp: 3,
      downForMs: 60_000,
    }),
    ...settings.fetch,
    limits: settings.crawl,
  };
  const pages = new SqliteAuditPages(file);
  const prefix = uniquePrefix();
  const closing: (() => Promise<void> | void)[] = [];
  let site: Awaited<ReturnType<typeof serveSite>>;

  before(async () => {
    site = await serveSite(200);
  });
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close();
  });
  after(async () => {
    site.server.close();
    await safe.close();
    await pages.close();
    await removeStreams(SHARED_NATS_URL, prefix);
    rmSync(dir, { recursive: true, force: true });
  });

  /** Serves `routes` (path to HTML) on 127.0.0.1; anything else is a 404. */
  const serveHtml = async (routes: (path: string) => string | undefined) => {
    const server = http.createServer((req, res) => {
      const body = routes(req.url ?? '');
      if (body === undefined) res.writeHead(404, { 'content-type': 'text/html' }).end('gone');
      else res.writeHead(200, { 'content-type': 'text/html' }).end(body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closing.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };

  const out = (jobId: string) => ({ store: pages, jobId, expiresAt: new Date(Date.now() + 600_000) });
  /** A replica's frontier, work queue and page worker (and the host budget it shares, when given). */
  const replica = (
    work: PageWorkQueue,
    {
      frontier = new SqlitePageFrontier(file),
      budget,
      reads,
    }: { frontier?: SqlitePageFrontier; budget?: HostBudget; reads?: PageReadThreads } = {},
  ) => {
    const leaseMs = 10_000;
    const worker = new AuditPageWorker({
      frontier,
      pages,
      work,
      crawl: deps,
      owner: randomUUID(),
      leaseMs,
      budget,
      reads,
      log,
    });
    closing.push(
      () => frontier.close(),
      () => work.close(),
      () => worker.close(),
    );
    return { frontier, work, worker, leaseMs, budget };
  };
  const nats = () =>
    NatsPageWork.connect({ url: SHARED_NATS_URL, prefix, ackWaitMs: 10_000, retentionMs: 60_000, log });
  let lastProgress: CrawlProgress | undefined;
  const run = (d: ReturnType<typeof replica>, jobId = randomUUID(), checkFragments = false) =>
    auditSiteDistributed(
      new URL(`${site.base}/`),
      1_000,
      deps,
      (p) => {
        lastProgress = p;
      },
      new AbortController().signal,
      { checkFragments },
      out(jobId),
      d,
      1,
    );
  let local: SiteAuditResult;
  const localJob = randomUUID();
  /** Every affected URL of every issue, as the issue route pages through them (by URL, then as found). */
  const allAffected = async (jobId: string, result: SiteAuditResult) =>
    Promise.all(
      result.issues.map(async (i) => [i.id, (await pages.affected(jobId, i.id, 0, 10_000)).map((a) => a.url)]),
    );

  it("wakes a coordinator's wait once the replica's page workers hold no item, and on its signal", async () => {
    const d = replica(new MemoryPageWork(log));
    d.worker.start(2);
    const never = new AbortController().signal;
    // A wait of a minute ends as soon as the one item (of a job that is gone) has been handled.
    const started = performance.now();
    const waited = d.worker.idleOr(60_000, never);
    await d.work.publish([{ jobId: randomUUID(), url: `${site.base}/` }]);
    await waited;
    expect(performance.now() - started).to.be.below(10_000);
    const stop = new AbortController();
    const stopped = d.worker.idleOr(60_000, stop.signal);
    stop.abort();
    await stopped;
    expect(performance.now() - started).to.be.below(10_000);
  });

  it('finds on one machine (in-process queue) what the one-worker audit finds, each page fetched once', async () => {
    site.fetches.clear();
    local = await auditSite(
      new URL(`${site.base}/`),
      1_000,
      deps,
      () => undefined,
      new AbortController().signal,
      { checkFragments: false },
      out(localJob),
    );
    const localFetches = pageFetches(site.fetches);
    expect(Object.entries(localFetches).filter(([, n]) => n > 1)).to.deep.equal([['/p/1', 2]]);
    site.fetches.clear();
    const d = replica(new MemoryPageWork(log));
    d.worker.start(8);
    const jobId = randomUUID();
    const result = await run(d, jobId);
    expect(summary(result)).to.deep.equal(summary(local));
    expect(await allAffected(jobId, result)).to.deep.equal(await allAffected(localJob, local));
    expect(result.pagesAudited).to.equal(230); // 200 pages, the orphan, and 29 missing pages (404s)
    // Canonicals judged by their link's status, the broken ones (404) and the others (403) alike.
    const canonicals = (await pages.affected(jobId, 'canonical_to_non200', 0, 1_000)).map((a) => [a.url, a.detail]);
    const planted = [...Array(200).keys()].flatMap((i) =>
      i % 11 === 4
        ? [[`${site.base}/p/${i}`, `canonical ${site.base}/moved/${i} answered 404`]]
        : i % 11 === 6
          ? [[`${site.base}/p/${i}`, `canonical ${site.base}/forbidden/${i} answered 403`]]
          : [],
    );
    expect(canonicals.sort()).to.deep.equal(planted.sort());
    const brokenMoved = result.issues
      .filter((i) => i.id === 'broken_resource')
      .flatMap((i) => i.affected)
      .filter((a) => a.url.includes('/moved/'));
    expect(brokenMoved.length).to.be.greaterThan(0);
    // Fetched as often as by the one-worker audit: once, but for /p/1 (also where /old's redirect lands).
    expect(pageFetches(site.fetches)).to.deep.equal(localFetches);
    expect(lastProgress).to.include({ phase: 'done', pagesCrawled: 230 });
    expect(await pages.count(jobId)).to.equal(0);
    expect(await d.frontier.counts(jobId)).to.deep.equal({ queued: 0, leased: 0, done: 0, over: 0 });
  });

  it('spreads the pages over two replicas; one dying mid-audit loses no page and fetches no other twice', async () => {
    const a = replica(await nats());
    const b = replica(await nats());
    a.worker.start(4);
    b.worker.start(4);
    let dead = false;
    const bWork = b.work;
    site.fetches.clear();
    site.slowDown(async (url) => {
      if (dead || url === '/' || url === '/orphan') return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    });
    const audit = run(a);
    // b stops after a moment, in the middle of pages (each takes 20 ms): what it was reading goes to a.
    await new Promise((resolve) => setTimeout(resolve, 300));
    dead = true;
    b.worker.close();
    void bWork.close();
    const result = await audit;
    site.slowDown(undefined);
    expect(summary(result)).to.deep.equal(summary(local));
    const twice = [...site.fetches].filter(([url, n]) => n > 1 && url !== '/p/1').map(([url]) => url);
    // Only pages b was reading when it stopped (its 4 workers) may have been fetched twice, and the
    // links it was checking then (a canonical's target, an image: their rows are checked again).
    const isPage = (url: string) => url === '/' || url === '/orphan' || /^\/p\/\d+$/.test(url);
    const linksTwice = twice.filter((url) => !isPage(url));
    expect(twice.length - linksTwice.length, `fetched twice: ${twice.join(' ')}`).to.be.at.most(4);
    expect(linksTwice.length, `checked twice: ${linksTwice.join(' ')}`).to.be.at.most(4);
    expect([...site.fetches.values()].every((n) => n <= 2)).to.equal(true);
  });

  it('keeps out of a crawler trap as the one-worker audit does (the same-shape chain guard)', async () => {
    const trap = await startCrawlSite({ pages: 20, externalPerPage: 1, silentHost: false, rateLimited: false });
    closing.push(() => trap.close());
    const entry = new URL(trap.entryUrl);
    const calendarRead = () =>
      trap.main.requests
        .filter((q) => q.method === 'GET' && q.path.startsWith('/calendar'))
        .map((q) => q.path)
        .sort();
    // The home page links 2024-01; each month links the one before and after (one URL shape). The guard
    // follows a chain of maxShapeChain hops from the first month: that many months on either side.
    const max = deps.limits.maxShapeChain;
    const month = (n: number) => `${Math.floor(n / 12)}-${String((n % 12) + 1).padStart(2, '0')}`;
    const months = Array.from({ length: 2 * max + 1 }, (_, k) => `/calendar?month=${month(2024 * 12 - max + k)}`);
    const noProgress = () => undefined;
    const fragmentsOff = { checkFragments: false };
    const one = await auditSite(
      entry,
      1_000,
      deps,
      noProgress,
      new AbortController().signal,
      fragmentsOff,
      out(randomUUID()),
    );
    expect(calendarRead()).to.deep.equal(months.sort());
    trap.main.requests.length = 0;
    const d = replica(new MemoryPageWork(log));
    d.worker.start(8);
    const spread = await auditSiteDistributed(
      entry,
      1_000,
      deps,
      noProgress,
      new AbortController().signal,
      fragmentsOff,
      out(randomUUID()),
      d,
      1,
    );
    expect(calendarRead()).to.deep.equal(months);
    expect(spread).to.include({ truncatedPages: false, pagesAudited: one.pagesAudited });
  });

  // On a thread (decision 0501) the pages' links and anchors are read by the same code from the same bytes.
  for (const threads of [0, 1])
    it(
      'verifies fragments as the one-worker audit: anchors stored per page, fragments gathered per link' +
        (threads ? ', pages parsed on a thread' : ''),
      async () => {
        const oneWorker = randomUUID();
        const expected = await auditSite(
          new URL(`${site.base}/`),
          1_000,
          deps,
          () => undefined,
          new AbortController().signal,
          { checkFragments: true },
          out(oneWorker),
        );
        const d = replica(new MemoryPageWork(log), { reads: new PageReadThreads(threads) });
        d.worker.start(8);
        const jobId = randomUUID();
        const result = await run(d, jobId, true);
        expect(summary(result)).to.deep.equal(summary(expected));
        expect(await allAffected(jobId, result)).to.deep.equal(await allAffected(oneWorker, expected));
        // The findings the site's definition plants, with the pages they are on.
        const planted = new Map<string, string[]>([[`${site.base}/frame.html`, [`${site.base}/`]]]);
        const gone: string[] = [];
        const pageUrl = (i: number) => (i === 0 ? `${site.base}/` : `${site.base}/p/${i}`);
        for (let i = 0; i < 200; i++) {
          // A link's pages: those linking it with the fragment, and its parent in the tree (a plain link).
          if (i % 9 === 2) {
            planted.set(pageUrl(i + 1), [pageUrl(i), pageUrl(Math.floor(i / 3))]);
            gone.push(pageUrl(i));
          }
          if (i % 9 === 5) planted.set(`${pageUrl(i)}#nowhere`, [pageUrl(i)]);
        }
        planted.set(pageUrl(2), [...gone, pageUrl(0)]);
        const found = (await pages.affected(jobId, 'missing_fragment', 0, 1_000)).map((a) => [a.url, a.sources]);
        const sorted = (rows: [string, string[]][]) =>
          rows.map(([url, sources]) => [url, [...sources].sort().slice(0, deps.limits.sources)]).sort();
        expect(sorted(found as [string, string[]][])).to.deep.equal(sorted([...planted]));
        const stored = await pages.affected(jobId, 'missing_fragment', 0, 1_000);
        const detail = (url: string) => stored.find((a) => a.url === url)?.detail;
        expect(detail(`${site.base}/p/2`)).to.equal('the page exists but has no element with id or name "gone"');
        expect(detail(`${site.base}/frame.html`)).to.include('"not-here"');
        expect(await d.frontier.counts(`${jobId} fragments`)).to.deep.equal({ queued: 0, leased: 0, done: 0, over: 0 });
      },
    );

  it('a page of 500 links with 25 fragments each: at most 10,000 fragment rows, the same verdicts', async () => {
    // Each /t/<k> has the id f0 only: f1..f24 are missing, on the links whose fragments are kept.
    const links = 500;
    const href = (k: number, j: number) => `<a href="/t/${k}#f${j}">t</a>`;
    const base = await serveHtml((p) =>
      p === '/'
        ? `<html><head><title>Hostile</title></head><body>${Array.from({ length: links }, (_, k) =>
            Array.from({ length: MAX_FRAGMENTS_PER_LINK }, (_, j) => href(k, j)).join(''),
          ).join('')}</body></html>`
        : /^\/t\/\d+$/.test(p)
          ? '<html><head><title>T</title></head><body><h2 id="f0">f0</h2></body></html>'
          : undefined,
    );
    // The /t/ pages are audited (depth 1): their anchors are those of their own fetch.
    const options = { checkFragments: true, scan: { maxDepth: 1 } };
    const oneWorker = await auditSite(
      new URL(`${base}/`),
      1_000,
      deps,
      () => undefined,
      new AbortController().signal,
      options,
      out(randomUUID()),
    );
    const jobId = randomUUID();
    /** The most fragment rows one insert (one page) wrote. */
    let mostRows = 0;
    class Counting extends SqlitePageFrontier {
      override insert(space: string, rows: readonly FoundPage[], expiresAt: Date) {
        if (space === fragmentsOf(jobId)) mostRows = Math.max(mostRows, rows.length);
        return super.insert(space, rows, expiresAt);
      }
    }
    const d = replica(new MemoryPageWork(log), { frontier: new Counting(file) });
    d.worker.start(4);
    const spread = await auditSiteDistributed(
      new URL(`${base}/`),
      1_000,
      deps,
      () => undefined,
      new AbortController().signal,
      options,
      out(jobId),
      d,
      1,
    );
    expect(mostRows).to.be.within(1, MAX_FRAGMENTS_PER_PAGE);
    expect(summary(spread)).to.deep.equal(summary(oneWorker));
    // The page's first 10,000 fragments are verified (the first 400 links'), by both engines.
    const missing = oneWorker.issues.find((i) => i.id === 'missing_fragment');
    expect(missing?.affectedTotal).to.equal(MAX_FRAGMENTS_PER_PAGE / MAX_FRAGMENTS_PER_LINK);
  });

  it('reads the sitemaps and site files through the host budget, each as often as the one-worker audit', async () => {
    const requests: string[] = [];
    const server = http.createServer((req, res) => {
      const p = req.url ?? '';
      if (!p.startsWith('/webutil-probe')) requests.push(`${req.method} ${p}`);
      const base = `http://${req.headers.host}`;
      if (p === '/robots.txt')
        return void res.writeHead(200, { 'content-type': 'text/plain' }).end('Sitemap: /maps/site.xml\n');
      if (p === '/maps/site.xml')
        return void res
          .writeHead(200, { 'content-type': 'application/xml' })
          .end(
            '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">' +
              `<url><loc>${base}/listed</loc></url></urlset>`,
          );
      if (p === '/' || p === '/listed')
        return void res.writeHead(200, { 'content-type': 'text/html' }).end(`<title>Page ${p}</title>`);
      res.writeHead(404, { 'content-type': 'text/html' }).end('gone');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closing.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const options = { checkFragments: false };
    const oneWorker = await auditSite(
      new URL(`${base}/`),
      10,
      deps,
      () => undefined,
      new AbortController().signal,
      options,
      out(randomUUID()),
    );
    const oneWorkerRequests = requests.splice(0).sort();
    /** Slots the budget gave: every request of the audit must take one. */
    let slots = 0;
    const budget: HostBudget = {
      acquire: (host, signal) => {
        slots++;
        return deps.throttle.acquire(host, signal);
      },
      turn: async () => undefined,
    };
    const d = replica(new MemoryPageWork(log), { budget });
    d.worker.start(2);
    const spread = await auditSiteDistributed(
      new URL(`${base}/`),
      10,
      deps,
      () => undefined,
      new AbortController().signal,
      options,
      out(randomUUID()),
      d,
      1,
    );
    expect(summary(spread)).to.deep.equal(summary(oneWorker));
    expect(spread).to.include({ sitemapFound: true, sitemapUrlCount: 1, pagesAudited: 2 });
    // robots.txt and the sitemaps twice, by each engine: for the crawl, and by the site-file checks.
    expect(requests.sort()).to.deep.equal(oneWorkerRequests);
    // The soft-404 probe's request too.
    expect(slots).to.equal(requests.length + 1);
  });

  /**
   * A site for the page cap: the home page links /m<k> (404) and /a<k> (each linking /b<k> and a
   * missing /n<k>), and with `files` a PDF /f<k>.pdf and a page /private/<k> robots.txt disallows.
   */
  const cappedSite = async (files: boolean) => {
    const requests: string[] = [];
    const server = http.createServer((req, res) => {
      const p = req.url ?? '';
      if (!p.startsWith('/webutil-probe')) requests.push(`${req.method} ${p}`);
      const page = (body: string) => void res.writeHead(200, { 'content-type': 'text/html' }).end(body);
      if (p === '/robots.txt')
        return void res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nDisallow: /private/\n');
      if (files && p.endsWith('.pdf'))
        return void res.writeHead(200, { 'content-type': 'application/pdf' }).end('%PDF');
      const hrefs = (list: string[]) => list.map((h) => `<a href="${h}">${h}</a>`).join('');
      if (p === '/')
        return page(
          `<title>Home</title>${hrefs(
            Array.from({ length: 6 }, (_, k) => [
              `/m${k}`,
              ...(files ? [`/f${k}.pdf`, `/private/${k}`] : []),
              `/a${k}`,
            ]).flat(),
          )}`,
        );
      const a = /^\/a(\d+)$/.exec(p);
      if (a) return page(`<title>A ${a[1]}</title>${hrefs([`/b${a[1]}`, `/n${a[1]}`])}`);
      if (/^\/b\d+$/.test(p)) return page(`<title>${p}</title>`);
      res.writeHead(404, { 'content-type': 'text/html' }).end('gone');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closing.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
  };
  /** Both engines' audits of `base` with a cap of 8 pages, and the requests each made. */
  const bothCapped = async (site: Awaited<ReturnType<typeof cappedSite>>) => {
    const audit = (engine: typeof auditSite | 'distributed') => {
      const args = [new URL(`${site.base}/`), 8, deps, () => undefined, new AbortController().signal] as const;
      if (engine !== 'distributed') return engine(...args, { checkFragments: false }, out(randomUUID()));
      const d = replica(new MemoryPageWork(log));
      d.worker.start(4);
      return auditSiteDistributed(...args, { checkFragments: false }, out(randomUUID()), d, 1);
    };
    const oneWorker = await audit(auditSite);
    const oneWorkerRequests = site.requests.splice(0).sort();
    const spread = await audit('distributed');
    return { oneWorker, spread, oneWorkerRequests, spreadRequests: site.requests.splice(0).sort() };
  };

  it('counts pages answering 404 against the page cap as one worker does: the same pages, broken links', async () => {
    const { oneWorker, spread, oneWorkerRequests, spreadRequests } = await bothCapped(await cappedSite(false));
    expect(summary(spread)).to.deep.equal(summary(oneWorker));
    // The home page, then its links in order: /m0 /a0 /m1 /a1 /m2 /a2 /m3 (404s are pages, as the crawl's).
    expect(spread).to.include({ pagesAudited: 8, truncatedPages: true });
    const http4xx = spread.issues.find((i) => i.id === 'http_4xx');
    expect(http4xx?.affectedTotal).to.equal(4);
    expect(spreadRequests).to.deep.equal(oneWorkerRequests);
  });

  it('counts only pages against the page cap, not files nor pages robots.txt disallows', async () => {
    const { oneWorker, spread } = await bothCapped(await cappedSite(true));
    expect(oneWorker).to.include({ pagesAudited: 8 });
    expect(summary(spread)).to.deep.equal(summary(oneWorker));
  });
});
