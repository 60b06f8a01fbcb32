/**
 * Where a site audit's memory goes (issue 41): one audit of the generated benchmark site
 * (scripts/src/fixture-audit-site.ts) run in this process as the crawl service runs it, with the heap
 * and RSS sampled every 10 ms and split by phase: the crawl (up to the first read of the stored
 * page records) and the report (from that read on). Run with `node --expose-gc --import tsx`;
 * BENCH_AUDIT_PAGES sets the site's size (default 10000); BENCH_HEAP_SNAPSHOT=1 writes a heap
 * snapshot at the end of the crawl and at the report's peak heap. BENCH_AUDIT_DISTRIBUTED=1 runs the
 * distributed engine as one replica runs it on one machine (frontier in the embedded store, the
 * in-process work queue, SITE_AUDIT_PAGE_WORKERS page workers); its report starts at the
 * coordinator's first read of the frontier's rows.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import { AddressPolicy, createLogger, lookupVia, SafeHttp } from '@webutil/kit';
import { startAuditSite } from '@webutil/scripts/fixture-audit-site';
import { throttleFor } from '../src/checking/throttle.js';
import { readConfig } from '../src/config.js';
import type { AuditPageStore } from '../src/jobs/audit-pages.js';
import { SqliteAuditPages } from '../src/jobs/audit-pages-sqlite.js';
import { auditSite } from '../src/site-audit/audit-site.js';
import { auditSiteDistributed } from '../src/site-audit/distributed/coordinator.js';
import type { PageFrontier } from '../src/site-audit/distributed/page-frontier.js';
import { SqlitePageFrontier } from '../src/site-audit/distributed/page-frontier-sqlite.js';
import { MemoryPageWork } from '../src/site-audit/distributed/page-work.js';
import { AuditPageWorker } from '../src/site-audit/distributed/page-worker.js';

const PAGES = Number(process.env.BENCH_AUDIT_PAGES ?? 10_000);
const SNAPSHOT = process.env.BENCH_HEAP_SNAPSHOT === '1';
const DISTRIBUTED = process.env.BENCH_AUDIT_DISTRIBUTED === '1';
/** Heap (bytes) at which the crawl is stopped for one full collection: what of it is live. */
const LIVE_AT = Number(process.env.BENCH_LIVE_AT_MB ?? 150) * 1024 * 1024;
const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1);
const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);

type Phase = 'crawl' | 'report';
let start = 0;
let phase: Phase = 'crawl';
const peaks = { crawl: { rss: 0, heap: 0 }, report: { rss: 0, heap: 0 } };
/** The heap left after a full collection the first time the crawl's heap passes BENCH_LIVE_AT_MB (150). */
let liveInCrawl: { before: number; after: number } | undefined;
const sample = () => {
  const { rss, heapUsed } = process.memoryUsage();
  if (phase === 'crawl' && !liveInCrawl && heapUsed > LIVE_AT && start > 0) {
    gc();
    liveInCrawl = { before: heapUsed, after: process.memoryUsage().heapUsed };
    if (SNAPSHOT) console.log(`heap snapshot in the crawl: ${v8.writeHeapSnapshot()}`);
  }
  peaks[phase].rss = Math.max(peaks[phase].rss, rss);
  peaks[phase].heap = Math.max(peaks[phase].heap, heapUsed);
};

const dir = mkdtempSync(path.join(os.tmpdir(), 'audit-memory-'));
const config = readConfig({ ...process.env, WEBUTIL_ALLOW_TARGETS: '127.0.0.0/8', DATA_DIR: dir });
const http = new SafeHttp({
  policy: new AddressPolicy(config.WEBUTIL_ALLOW_TARGETS),
  lookup: lookupVia(config.CRAWL_DNS_SERVERS),
  connectionsPerOrigin: config.fetch.hostConcurrencyMax,
  idleTimeoutMs: config.fetch.pageTimeoutMs,
});
const deps = { http, throttle: throttleFor(config.fetch), ...config.fetch, limits: config.crawl };
const stored = new SqliteAuditPages(path.join(dir, 'crawl-jobs.sqlite'));
let afterCrawl = 0;
/** Ends the crawl phase: a full collection, and what it keeps. */
const endCrawl = () => {
  if (phase !== 'crawl') return;
  sample();
  gc();
  afterCrawl = process.memoryUsage().heapUsed;
  if (SNAPSHOT) console.log(`heap snapshot after the crawl: ${v8.writeHeapSnapshot()}`);
  phase = 'report';
};
/** `target` with the first call of `starter` ending the crawl, and the batches `batched` yields sampled. */
function watched<T extends object>(target: T, starter: string, batched: string): T {
  return new Proxy(target, {
    get(object, key, receiver) {
      const value = Reflect.get(object, key, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (key === starter) endCrawl();
        const answer = value.apply(object, args);
        return key === batched ? sampled(answer as AsyncGenerator<unknown>) : answer;
      };
    },
  });
}
// The first read of the stored records (one worker) or of the frontier's rows (distributed) starts the report.
const store = watched<AuditPageStore>(stored, DISTRIBUTED ? '' : 'read', 'read');

/** The report's live heap: after a full collection at each batch of records it reads. */
let liveInReport = 0;
async function* sampled<T>(batches: AsyncGenerator<T>): AsyncGenerator<T> {
  for await (const batch of batches) {
    gc();
    liveInReport = Math.max(liveInReport, process.memoryUsage().heapUsed);
    yield batch;
  }
}

const site = await startAuditSite(PAGES);
gc();
const base = process.memoryUsage();
start = base.heapUsed;
const timer = setInterval(sample, 10);
const started = performance.now();
const options = { checkFragments: false, scan: { resources: true, maxPages: PAGES } };
const out = { store, jobId: `bench-${randomUUID()}`, expiresAt: new Date(Date.now() + 3_600_000) };
const frontier = new SqlitePageFrontier(path.join(dir, 'crawl-jobs.sqlite'));
const watchedFrontier = watched<PageFrontier>(frontier, 'results', 'results');
const log = createLogger('bench', 'warn');
const work = new MemoryPageWork(log);
const worker = new AuditPageWorker({
  frontier: watchedFrontier,
  pages: store,
  work,
  crawl: deps,
  owner: 'bench',
  leaseMs: config.jobs.ackWaitMs,
  log,
});
if (DISTRIBUTED) worker.start(config.SITE_AUDIT_PAGE_WORKERS);
const entry = new URL(`${site.base}/`);
const never = new AbortController().signal;
const result = DISTRIBUTED
  ? await auditSiteDistributed(
      entry,
      PAGES,
      deps,
      () => undefined,
      never,
      options,
      out,
      {
        frontier: watchedFrontier,
        work,
        worker,
        leaseMs: config.jobs.ackWaitMs,
      },
      1,
    )
  : await auditSite(entry, PAGES, deps, () => undefined, never, options, out);
const ms = performance.now() - started;
clearInterval(timer);
sample();
const packed = JSON.stringify(result).length;
const affected = result.issues.reduce((n, i) => n + i.affected.length, 0);
console.log(
  `${DISTRIBUTED ? 'distributed engine (one replica)' : 'one-worker audit'}: ` +
    `${result.pagesAudited} pages audited in ${(ms / 1000).toFixed(1)} s; ` +
    `before: rss ${mb(base.rss)} MB, heap ${mb(base.heapUsed)} MB`,
);
console.log(`crawl:  peak rss ${mb(peaks.crawl.rss)} MB, peak heap ${mb(peaks.crawl.heap)} MB`);
if (liveInCrawl)
  console.log(`        heap at ${mb(liveInCrawl.before)} MB in the crawl, live after gc: ${mb(liveInCrawl.after)} MB`);
console.log(`        heap kept after the crawl (after gc): ${mb(afterCrawl)} MB`);
console.log(`report: peak rss ${mb(peaks.report.rss)} MB, peak heap ${mb(peaks.report.heap)} MB`);
console.log(`        live heap at its batches of records (after gc), at most: ${mb(liveInReport)} MB`);
console.log(`result: ${result.issues.length} issues, ${affected} affected URLs, ${mb(packed)} MB as JSON`);
const status = (await import('node:fs')).readFileSync('/proc/self/status', 'utf8');
console.log(`VmHWM ${mb(Number(/^VmHWM:\s+(\d+) kB/m.exec(status)?.[1]) * 1024)} MB`);
worker.close();
await work.close();
await frontier.close();
await stored.close();
await http.close();
await site.close();
rmSync(dir, { recursive: true, force: true });
