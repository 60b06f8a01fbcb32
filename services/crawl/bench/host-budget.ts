/**
 * What the host budget shared by replicas (decision 0494) costs a fast site: the distributed audit
 * of the generated benchmark site (scripts/src/fixture-audit-site.ts) by one and by two replicas
 * in this process, on the shared NATS (scripts/ensure-nats.sh), each replica with its own throttle
 * (before) and with the budget on NATS besides (after). Run with `node --import tsx`;
 * BENCH_AUDIT_PAGES sets the site's size (default 2000).
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AddressPolicy, createLogger, SafeHttp } from '@webutil/kit';
import { startAuditSite } from '@webutil/scripts/fixture-audit-site';
import { removeStreams, SHARED_NATS_URL, uniquePrefix } from '@webutil/scripts/nats-under-test';
import { hostConcurrencySettings, throttleFor } from '../src/checking/throttle.js';
import { readConfig } from '../src/config.js';
import { SqliteAuditPages } from '../src/jobs/audit-pages-sqlite.js';
import { auditSiteDistributed } from '../src/site-audit/distributed/coordinator.js';
import { NatsHostBudget } from '../src/site-audit/distributed/host-budget-nats.js';
import { SqlitePageFrontier } from '../src/site-audit/distributed/page-frontier-sqlite.js';
import { NatsPageWork } from '../src/site-audit/distributed/page-work-nats.js';
import { AuditPageWorker } from '../src/site-audit/distributed/page-worker.js';

const PAGES = Number(process.env.BENCH_AUDIT_PAGES ?? 2_000);
const log = createLogger('bench', 'warn');
const dir = mkdtempSync(path.join(os.tmpdir(), 'host-budget-bench-'));
const config = readConfig({ ...process.env, WEBUTIL_ALLOW_TARGETS: '127.0.0.0/8', DATA_DIR: dir });
const file = path.join(dir, 'crawl-jobs.sqlite');
const pages = new SqliteAuditPages(file);
const prefix = uniquePrefix();
const loads = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(', ');

/** One audit by `replicas` replicas, each with its own throttle and, when `shared`, the budget on NATS. */
async function run(replicas: number, shared: boolean) {
  const site = await startAuditSite(PAGES);
  const closing: (() => Promise<void> | void)[] = [() => site.close()];
  try {
    const made = [];
    for (let i = 0; i < replicas; i++) {
      const http = new SafeHttp({ policy: new AddressPolicy(config.WEBUTIL_ALLOW_TARGETS) });
      const crawl = { http, throttle: throttleFor(config.fetch), ...config.fetch, limits: config.crawl };
      const budget = shared
        ? await NatsHostBudget.connect({
            url: SHARED_NATS_URL,
            prefix,
            settings: hostConcurrencySettings(config.fetch),
            permitMs: 2 * config.fetch.pageTimeoutMs,
            local: crawl.throttle,
            log,
          })
        : undefined;
      const frontier = new SqlitePageFrontier(file);
      const work = await NatsPageWork.connect({
        url: SHARED_NATS_URL,
        prefix,
        ackWaitMs: 30_000,
        retentionMs: 600_000,
        log,
      });
      const worker = new AuditPageWorker({
        frontier,
        pages,
        work,
        crawl,
        owner: randomUUID(),
        leaseMs: 30_000,
        budget,
        log,
      });
      worker.start(config.SITE_AUDIT_PAGE_WORKERS);
      closing.push(
        () => http.close(),
        () => frontier.close(),
        async () => budget?.close(),
        () => work.close(),
        () => worker.close(),
      );
      made.push({ crawl, d: { frontier, work, worker, leaseMs: 30_000 } });
    }
    const first = made[0] as (typeof made)[number];
    const started = performance.now();
    const result = await auditSiteDistributed(
      new URL(`${site.base}/`),
      PAGES,
      first.crawl,
      () => undefined,
      new AbortController().signal,
      { checkFragments: false, scan: { resources: true } },
      { store: pages, jobId: randomUUID(), expiresAt: new Date(Date.now() + 3_600_000) },
      first.d,
      1,
    );
    const ms = performance.now() - started;
    const label = `${replicas} replica${replicas > 1 ? 's' : ''}, ${shared ? 'budget on NATS' : 'own throttles'}`;
    console.log(
      `${label}: ${result.pagesAudited} pages in ${(ms / 1000).toFixed(1)} s, ` +
        `${((1000 * result.pagesAudited) / ms).toFixed(1)} pages/s (load ${loads()})`,
    );
  } finally {
    for (const close of closing.reverse()) await close();
  }
}

console.log(`== host budget bench: ${PAGES}-page site, ${os.cpus().length} cores, load at start ${loads()} ==`);
try {
  for (const replicas of [1, 2]) for (const shared of [false, true]) await run(replicas, shared);
} finally {
  await pages.close();
  await removeStreams(SHARED_NATS_URL, prefix);
  rmSync(dir, { recursive: true, force: true });
}
