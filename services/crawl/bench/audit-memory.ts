/**
 * Where a site audit's memory goes (issue 41): one audit of the generated benchmark site
 * (scripts/src/fixture-audit-site.ts) run in this process as the crawl service runs it, with the heap
 * and RSS sampled every 10 ms and split by phase: the crawl (up to the first read of the stored
 * page records) and the report (from that read on). Run with `node --expose-gc --import tsx`;
 * BENCH_AUDIT_PAGES sets the site's size (default 10000); BENCH_HEAP_SNAPSHOT=1 writes a heap
 * snapshot at the end of the crawl and at the report's peak heap.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import { AddressPolicy, lookupVia, SafeHttp } from '@webutil/kit';
import { startAuditSite } from '@webutil/scripts/fixture-audit-site';
import { throttleFor } from '../src/checking/throttle.js';
import { readConfig } from '../src/config.js';
import type { AuditPageStore } from '../src/jobs/audit-pages.js';
import { SqliteAuditPages } from '../src/jobs/audit-pages-sqlite.js';
import { auditSite } from '../src/site-audit/audit-site.js';

const PAGES = Number(process.env.BENCH_AUDIT_PAGES ?? 10_000);
const SNAPSHOT = process.env.BENCH_HEAP_SNAPSHOT === '1';
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
// The first read of the stored records starts the report.
const store: AuditPageStore = new Proxy(stored, {
  get(target, key, receiver) {
    const value = Reflect.get(target, key, receiver);
    if (typeof value !== 'function') return value;
    return (...args: unknown[]) => {
      if (phase === 'crawl' && key === 'read') {
        sample();
        gc();
        afterCrawl = process.memoryUsage().heapUsed;
        if (SNAPSHOT) console.log(`heap snapshot after the crawl: ${v8.writeHeapSnapshot()}`);
        phase = 'report';
      }
      const answer = value.apply(target, args);
      return key === 'read' ? sampled(answer as AsyncGenerator<unknown>) : answer;
    };
  },
});

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
const result = await auditSite(
  new URL(`${site.base}/`),
  PAGES,
  deps,
  () => undefined,
  new AbortController().signal,
  { checkFragments: false, scan: { resources: true, maxPages: PAGES } },
  { store, jobId: 'bench', expiresAt: new Date(Date.now() + 3_600_000) },
);
const ms = performance.now() - started;
clearInterval(timer);
sample();
const packed = JSON.stringify(result).length;
const affected = result.issues.reduce((n, i) => n + i.affected.length, 0);
console.log(
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
await stored.close();
await http.close();
await site.close();
rmSync(dir, { recursive: true, force: true });
