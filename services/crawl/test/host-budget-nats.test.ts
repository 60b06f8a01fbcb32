import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { AddressPolicy, createLogger, SafeHttp } from '@webutil/kit';
import { removeStreams, SHARED_NATS_URL, uniquePrefix } from '@webutil/scripts/nats-under-test';
import { expect } from 'chai';
import { HostThrottle } from '../src/checking/throttle.js';
import { readConfig } from '../src/config.js';
import { SqliteAuditPages } from '../src/jobs/audit-pages-sqlite.js';
import { auditSiteDistributed } from '../src/site-audit/distributed/coordinator.js';
import type { HostBudget } from '../src/site-audit/distributed/host-budget.js';
import { NatsHostBudget } from '../src/site-audit/distributed/host-budget-nats.js';
import { SqlitePageFrontier } from '../src/site-audit/distributed/page-frontier-sqlite.js';
import { NatsPageWork } from '../src/site-audit/distributed/page-work-nats.js';
import { AuditPageWorker } from '../src/site-audit/distributed/page-worker.js';

const log = createLogger('test', 'silent');
/** The host's adaptive limit every replica shares: at most this many requests in flight. */
const CEILING = 3;
const hostSettings = { initial: 2, ceiling: CEILING, maxPauseMs: 30_000, timeoutsToGiveUp: 3, downForMs: 60_000 };

/**
 * A site of `pages` pages in a tree (each links its three children), each answered after `delayMs`,
 * with robots.txt's `crawlDelay` (seconds) when given; /busy answers 503 with a Retry-After of one
 * second the first time. Records the most requests in flight at once and when each page GET came.
 */
function serveSite(pages: number, delayMs: number, crawlDelay?: number) {
  let inFlight = 0;
  const seen = { peakInFlight: 0, pageGets: [] as number[], busy: [] as number[] };
  const server = http.createServer(async (req, res) => {
    inFlight++;
    seen.peakInFlight = Math.max(seen.peakInFlight, inFlight);
    res.on('close', () => inFlight--);
    const url = req.url ?? '';
    if (url === '/robots.txt')
      return void res
        .writeHead(200, { 'content-type': 'text/plain' })
        .end(`User-agent: *\n${crawlDelay ? `Crawl-delay: ${crawlDelay}\n` : ''}`);
    if (url === '/busy') {
      seen.busy.push(Date.now());
      if (seen.busy.length === 1) return void res.writeHead(503, { 'retry-after': '1' }).end();
      return void res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    }
    const match = /^\/(?:p\/(\d+))?$/.exec(url);
    const i = match ? Number(match[1] ?? 0) : pages;
    if (i >= pages) return void res.writeHead(404, { 'content-type': 'text/html' }).end('gone');
    if (req.method === 'GET') seen.pageGets.push(Date.now());
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    const children = [1, 2, 3].map((k) => 3 * i + k).filter((c) => c < pages);
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end(
        `<!doctype html><html lang="en"><head><title>Page ${i}</title></head><body><h1>Page ${i}</h1>` +
          `${children.map((c) => `<a href="/p/${c}">${c}</a>`).join('')}</body></html>`,
      );
  });
  return new Promise<{ server: http.Server; base: string; host: string; seen: typeof seen }>((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
      resolve({ server, base: `http://${host}`, host, seen });
    }),
  );
}

describe('host budget across replicas (NATS key-value)', function () {
  this.timeout(120_000);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'host-budget-'));
  const file = path.join(dir, 'jobs.sqlite');
  const settings = readConfig({ DATA_DIR: dir, WEBUTIL_ALLOW_TARGETS: '127.0.0.0/8' });
  const safe = new SafeHttp({ policy: new AddressPolicy(settings.WEBUTIL_ALLOW_TARGETS) });
  const pages = new SqliteAuditPages(file);
  const prefix = uniquePrefix();
  const closing: (() => Promise<void> | void)[] = [];

  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close();
  });
  after(async () => {
    await safe.close();
    await pages.close();
    await removeStreams(SHARED_NATS_URL, prefix);
    rmSync(dir, { recursive: true, force: true });
  });

  /** A replica's own throttle: alone, it would send the host up to the ceiling itself. */
  const ownThrottle = () =>
    new HostThrottle({
      globalLimit: 64,
      initialPerHost: CEILING,
      maxPerHost: CEILING,
      slowMs: 10_000,
      timeoutsToGiveUp: 3,
      downForMs: 60_000,
    });
  const budgetOf = async (local: HostThrottle, permitMs = 60_000) => {
    const budget = await NatsHostBudget.connect({
      url: SHARED_NATS_URL,
      prefix,
      settings: hostSettings,
      permitMs,
      local,
      log,
    });
    closing.push(() => budget.close());
    return budget;
  };

  /** A crawl replica: its throttle, its budget on NATS, its page workers; `acquired` counts its requests. */
  const replica = async () => {
    const crawl = { http: safe, throttle: ownThrottle(), ...settings.fetch, limits: settings.crawl };
    const shared = await budgetOf(crawl.throttle);
    const counted = { acquired: 0 };
    const budget: HostBudget = {
      acquire: (host, signal) => {
        counted.acquired++;
        return shared.acquire(host, signal);
      },
      turn: (origin, delayMs, signal) => shared.turn(origin, delayMs, signal),
    };
    const frontier = new SqlitePageFrontier(file);
    const work = await NatsPageWork.connect({
      url: SHARED_NATS_URL,
      prefix,
      ackWaitMs: 10_000,
      retentionMs: 60_000,
      log,
    });
    const worker = new AuditPageWorker({
      frontier,
      pages,
      work,
      crawl,
      owner: randomUUID(),
      leaseMs: 10_000,
      budget,
      log,
    });
    closing.push(
      () => frontier.close(),
      () => work.close(),
      () => worker.close(),
    );
    worker.start(6);
    return { d: { frontier, work, worker, leaseMs: 10_000 }, crawl, counted };
  };

  const audit = async (base: string) => {
    const a = await replica();
    const b = await replica();
    const jobId = randomUUID();
    const result = await auditSiteDistributed(
      new URL(`${base}/`),
      1_000,
      a.crawl,
      () => undefined,
      new AbortController().signal,
      { checkFragments: false },
      { store: pages, jobId, expiresAt: new Date(Date.now() + 600_000) },
      a.d,
      1,
    );
    return { result, a: a.counted, b: b.counted };
  };

  it("keeps two replicas' requests to a host within its limit", async () => {
    const site = await serveSite(60, 40);
    closing.push(() => void site.server.close());
    const { result, a, b } = await audit(site.base);
    expect(result.pagesAudited).to.equal(60);
    // Both replicas fetched: alone, each would have sent the host up to its ceiling.
    expect(a.acquired).to.be.greaterThan(0);
    expect(b.acquired).to.be.greaterThan(0);
    expect(site.seen.peakInFlight).to.be.at.most(CEILING);
  });

  it("spaces page fetches by robots.txt's Crawl-delay across replicas", async () => {
    const site = await serveSite(8, 0, 0.3);
    closing.push(() => void site.server.close());
    const { result, a, b } = await audit(site.base);
    expect(result.pagesAudited).to.equal(8);
    expect(a.acquired).to.be.greaterThan(0);
    expect(b.acquired).to.be.greaterThan(0);
    const gets = site.seen.pageGets.sort((x, y) => x - y);
    const gaps = gets.slice(1).map((at, i) => at - (gets[i] as number));
    expect(gaps).to.have.length(7);
    // A little under the delay for the timers' and the network's jitter.
    for (const gap of gaps) expect(gap).to.be.at.least(250);
  });

  it("holds the other replica back for a 503's Retry-After", async () => {
    const site = await serveSite(1, 0);
    closing.push(() => void site.server.close());
    const a = await budgetOf(ownThrottle());
    const b = await budgetOf(ownThrottle());
    const releaseA = await a.acquire(site.host);
    const answer = await fetch(`${site.base}/busy`);
    expect(answer.status).to.equal(503);
    releaseA('overloaded', Number(answer.headers.get('retry-after')) * 1000);
    // The pause is A's to write; B is asked once it is written (under load the write came after B's ask).
    await a.written();
    const releaseB = await b.acquire(site.host);
    expect((await fetch(`${site.base}/busy`)).status).to.equal(200);
    releaseB('fast');
    const [refused, accepted] = site.seen.busy as [number, number];
    expect(accepted - refused).to.be.at.least(900);
  });

  it("gives a dead replica's permits back when they expire", async () => {
    const site = await serveSite(1, 0);
    closing.push(() => void site.server.close());
    const dead = await budgetOf(ownThrottle(), 1_000);
    // It takes the whole starting limit and stops without giving it back.
    await Promise.all([dead.acquire(site.host), dead.acquire(site.host)]);
    await dead.close();
    const live = await budgetOf(ownThrottle());
    const asked = Date.now();
    const release = await live.acquire(site.host);
    const waited = Date.now() - asked;
    release('neutral');
    expect(waited).to.be.at.least(500).and.at.most(10_000);
  });
});
