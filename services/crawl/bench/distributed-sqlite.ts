/**
 * A distributed site audit's pace on one machine: the crawl service's one-replica wiring (the
 * embedded store's frontier and page records, the in-process work queue, SITE_AUDIT_PAGE_WORKERS
 * page workers) audits the generated site of PAGES pages in this process; SITE=<base URL> audits
 * that site instead (the fixture served by a process of its own keeps a CPU profile the crawl's).
 * Prints the wall time of the audit and of its pages, and this process's CPU time.
 * `node --import tsx [--cpu-prof] services/crawl/bench/distributed-sqlite.ts`.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AddressPolicy, createLogger, SafeHttp } from '@webutil/kit';
import { startAuditSite } from '@webutil/scripts/fixture-audit-site';
import { throttleFor } from '../src/checking/throttle.js';
import { readConfig } from '../src/config.js';
import { SqliteAuditPages } from '../src/jobs/audit-pages-sqlite.js';
import { auditSiteDistributed } from '../src/site-audit/distributed/coordinator.js';
import { SqlitePageFrontier } from '../src/site-audit/distributed/page-frontier-sqlite.js';
import { MemoryPageWork } from '../src/site-audit/distributed/page-work.js';
import { AuditPageWorker } from '../src/site-audit/distributed/page-worker.js';

const PAGES = Number(process.env.PAGES ?? 10_000);

const log = createLogger('bench', 'silent');
const dir = mkdtempSync(path.join(os.tmpdir(), 'audit-bench-'));
const file = path.join(dir, 'crawl-jobs.sqlite');
const site = process.env.SITE ? { base: process.env.SITE, close: async () => undefined } : await startAuditSite(PAGES);
const settings = readConfig({ ...process.env, DATA_DIR: dir, WEBUTIL_ALLOW_TARGETS: '127.0.0.0/8' });
const safe = new SafeHttp({ policy: new AddressPolicy(settings.WEBUTIL_ALLOW_TARGETS) });
const deps = { http: safe, throttle: throttleFor(settings.fetch), ...settings.fetch, limits: settings.crawl };
const pages = new SqliteAuditPages(file);
const frontier = new SqlitePageFrontier(file);
const work = new MemoryPageWork(log);
const leaseMs = settings.jobs.ackWaitMs;
const worker = new AuditPageWorker({ frontier, pages, work, crawl: deps, owner: randomUUID(), leaseMs, log });
worker.start(settings.SITE_AUDIT_PAGE_WORKERS);
const started = performance.now();
const cpuAtStart = process.cpuUsage();
let crawledAt = started;
const result = await auditSiteDistributed(
  new URL(`${site.base}/`),
  PAGES + 1_000,
  deps,
  (p) => {
    if (p.phase === 'crawling') crawledAt = performance.now();
  },
  new AbortController().signal,
  { checkFragments: false, scan: { resources: true } },
  { store: pages, jobId: randomUUID(), expiresAt: new Date(Date.now() + 3_600_000) },
  { frontier, work, worker, leaseMs },
  1,
);
const ms = performance.now() - started;
const cpu = process.cpuUsage(cpuAtStart);
const seconds = (ms: number) => (ms / 1000).toFixed(2);
console.log(
  `${result.pagesAudited} pages audited in ${seconds(ms)} s (pages read by ${seconds(crawledAt - started)} s); ` +
    `CPU ${seconds((cpu.user + cpu.system) / 1000)} s; ` +
    `peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB`,
);
worker.close();
await work.close();
await frontier.close();
await pages.close();
await safe.close();
await site.close();
rmSync(dir, { recursive: true, force: true });
