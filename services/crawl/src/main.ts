import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  AddressPolicy,
  createLogger,
  exitOnFatalErrors,
  type Logger,
  lookupVia,
  processOptions,
  runService,
  SafeHttp,
} from '@webutil/kit';
import { openArtifactStore, sweepArtifacts } from '@webutil/kit/artifacts';
import { hostConcurrencySettings, throttleFor } from './checking/throttle.js';
import { type CrawlConfig, readConfig } from './config.js';
import { AuditCredits } from './jobs/audit-credits.js';
import type { AuditPageStore } from './jobs/audit-pages.js';
import { SqliteAuditPages } from './jobs/audit-pages-sqlite.js';
import { MemoryTransport } from './jobs/memory-transport.js';
import { CrawlReader } from './jobs/read.js';
import { recordEvent } from './jobs/record.js';
import { CrawlRunner, resumeAbandoned } from './jobs/run.js';
import { CrawlStarts } from './jobs/start.js';
import type { JobStore } from './jobs/store.js';
import { SqliteJobStore } from './jobs/store-sqlite.js';
import type { CrawlTransport } from './jobs/transport.js';
import { crawlService, siteAuditService } from './server.js';
import { type AuditHistory, MongoAuditHistory, SqliteAuditHistory } from './site-audit/audit-history.js';
import type { DistributedAuditDeps } from './site-audit/distributed/coordinator.js';
import type { NatsHostBudget } from './site-audit/distributed/host-budget-nats.js';
import type { PageFrontier } from './site-audit/distributed/page-frontier.js';
import { SqlitePageFrontier } from './site-audit/distributed/page-frontier-sqlite.js';
import { MemoryPageWork, type PageWorkQueue } from './site-audit/distributed/page-work.js';
import { AuditPageWorker } from './site-audit/distributed/page-worker.js';
import { PageReadThreads } from './site-audit/page-read-threads.js';
import { closeSiteServices, connectSiteServices } from './site-audit/site-services.js';
import { warmUp } from './warm-up.js';

const config = readConfig();

const log = createLogger('crawl', config.LOG_LEVEL);
exitOnFatalErrors(log);
if (config.CRAWL_WARM_UP) await warmUp(config, log);
const policy = new AddressPolicy(config.WEBUTIL_ALLOW_TARGETS);
const lookup = lookupVia(config.CRAWL_DNS_SERVERS);
const http = new SafeHttp({
  policy,
  lookup,
  connectionsPerOrigin: config.fetch.hostConcurrencyMax,
  idleTimeoutMs: config.fetch.pageTimeoutMs,
});
const fetching = { http, throttle: throttleFor(config.fetch), ...config.fetch };
const store = await openStore(config);
const auditPages = await openAuditPages(config);
const transport = await openTransport(config, log);
const auditHistory = await openAuditHistory(config);
const distributed = config.SITE_AUDIT_DISTRIBUTED ? await openDistributedAudits(config, log) : undefined;
// The site audits' start-page screenshots, kept as long as their jobs (decision 0489).
const auditImages = await openArtifactStore({
  dataDir: config.DATA_DIR,
  mongoUrl: config.MONGO_URL,
  bucket: 'site-audit',
});
const stopSweepingImages = sweepArtifacts(auditImages, 10 * 60_000, log);
const siteClients = connectSiteServices(config);
const auditCredits = config.BILLING_ADDR ? new AuditCredits(config.BILLING_ADDR, log) : undefined;

// A crawl job's four roles, each its own file under jobs/: any replica may play any of them.
const starts = new CrawlStarts({
  store,
  transport,
  policy,
  lookup,
  pagesCap: config.crawl.pages,
  retentionMs: config.jobs.retentionMs,
  log,
});
const runner = new CrawlRunner({
  store,
  auditPages,
  transport,
  crawl: { ...fetching, limits: config.crawl },
  options: config.jobs,
  log,
  auditHistory,
  distributed,
  siteServices: { clients: siteClients, images: auditImages },
  auditCredits,
});
distributed?.worker.start(config.SITE_AUDIT_PAGE_WORKERS);
const reader = new CrawlReader({ store, stallMs: config.jobs.stallMs, queueStallMs: config.jobs.queueStallMs });
transport.record((event) => recordEvent(store, event));
transport.work(config.jobs.concurrency, (ticket, lease) => runner.run(ticket, lease));
if (transport instanceof MemoryTransport) {
  const resumed = await resumeAbandoned(store, transport);
  if (resumed > 0) log.info({ resumed }, 'crawls of the previous run handed back to workers');
}
const sweeper = setInterval(
  () => {
    store.sweep().catch((err: unknown) => log.warn({ err }, 'could not delete expired crawl jobs'));
    auditPages.sweep().catch((err: unknown) => log.warn({ err }, 'could not delete expired audit pages'));
    distributed?.frontier
      .sweep()
      .catch((err: unknown) => log.warn({ err }, 'could not delete expired audit frontiers'));
  },
  Math.min(60_000, config.jobs.retentionMs),
);
sweeper.unref();

await runService({
  name: 'crawl',
  ...processOptions(config),
  protoFiles: ['webutil/crawl/v1/crawl.proto', 'webutil/crawl/v1/site_audit.proto'],
  bindings: [
    crawlService({ pageCheck: { ...fetching, ...config.pageCheck }, starts, reader }, log),
    siteAuditService({ starts, reader, auditPages, images: auditImages }, log),
  ],
  log,
  onShutdown: async () => {
    clearInterval(sweeper);
    distributed?.worker.close();
    await distributed?.work.close(); // pages being audited are handed back
    await distributed?.budget?.close(); // permits held run out
    await transport.close(); // running crawls are handed back
    await distributed?.frontier.close();
    await store.close();
    await auditPages.close();
    await auditHistory.close();
    stopSweepingImages();
    closeSiteServices(siteClients);
    auditCredits?.close();
    await auditImages.close();
    await http.close();
  },
});

/**
 * The job store the config names. mongoose and the NATS client are imported only when used:
 * mongoose alone adds 16 MB to the process's resident memory.
 */
async function openStore(config: CrawlConfig): Promise<JobStore> {
  if (config.MONGO_URL) {
    const { MongoJobStore } = await import('./jobs/store-mongo.js');
    return MongoJobStore.connect(config.MONGO_URL);
  }
  mkdirSync(config.DATA_DIR, { recursive: true });
  return new SqliteJobStore(path.join(config.DATA_DIR, 'crawl-jobs.sqlite'));
}

/** Site audits' page records, in the same database as the jobs (docs/decisions/0471). */
async function openAuditPages(config: CrawlConfig): Promise<AuditPageStore> {
  if (config.MONGO_URL) {
    const { MongoAuditPages } = await import('./jobs/audit-pages-mongo.js');
    return MongoAuditPages.connect(config.MONGO_URL);
  }
  return new SqliteAuditPages(path.join(config.DATA_DIR, 'crawl-jobs.sqlite'));
}

/** Finished site audits kept for comparison, beside the job store. */
async function openAuditHistory(config: CrawlConfig): Promise<AuditHistory> {
  if (config.MONGO_URL) return MongoAuditHistory.connect(config.MONGO_URL);
  mkdirSync(config.DATA_DIR, { recursive: true });
  return new SqliteAuditHistory(path.join(config.DATA_DIR, 'site-audit-history.sqlite'));
}

async function openTransport(config: CrawlConfig, log: Logger): Promise<CrawlTransport> {
  if (!config.NATS_URL) return new MemoryTransport(log);
  const { NatsTransport } = await import('./jobs/nats-transport.js');
  return NatsTransport.connect({
    url: config.NATS_URL,
    prefix: config.CRAWL_NATS_PREFIX,
    ackWaitMs: config.jobs.ackWaitMs,
    retentionMs: config.jobs.retentionMs,
    log,
  });
}

/** The hosts' politeness budget shared by the replicas on the crawl transport's NATS (decision 0494). */
async function connectHostBudget(config: CrawlConfig, log: Logger): Promise<NatsHostBudget> {
  const { NatsHostBudget } = await import('./site-audit/distributed/host-budget-nats.js');
  const f = config.fetch;
  return NatsHostBudget.connect({
    url: config.NATS_URL as string,
    prefix: config.CRAWL_NATS_PREFIX,
    settings: hostConcurrencySettings(f),
    // Past the longest request: a live replica's permit never runs out under it.
    permitMs: 2 * Math.max(f.pageTimeoutMs, f.linkTimeoutMs),
    local: fetching.throttle,
    log,
  });
}

/**
 * Distributed site audits (decision 0491): the frontier beside the job store, pages as work items
 * on the crawl transport's NATS (in process without it), and this replica's page workers.
 */
async function openDistributedAudits(
  config: CrawlConfig,
  log: Logger,
): Promise<DistributedAuditDeps & { budget?: NatsHostBudget }> {
  const leaseMs = config.jobs.ackWaitMs;
  let frontier: PageFrontier;
  if (config.MONGO_URL) {
    const { MongoPageFrontier } = await import('./site-audit/distributed/page-frontier-mongo.js');
    frontier = await MongoPageFrontier.connect(config.MONGO_URL);
  } else {
    mkdirSync(config.DATA_DIR, { recursive: true });
    frontier = new SqlitePageFrontier(path.join(config.DATA_DIR, 'crawl-jobs.sqlite'));
  }
  let work: PageWorkQueue;
  if (config.NATS_URL) {
    const { NatsPageWork } = await import('./site-audit/distributed/page-work-nats.js');
    work = await NatsPageWork.connect({
      url: config.NATS_URL,
      prefix: config.CRAWL_NATS_PREFIX,
      ackWaitMs: leaseMs,
      retentionMs: config.jobs.retentionMs,
      log,
    });
  } else work = new MemoryPageWork(log);
  // Each host's politeness held across replicas on NATS; on one machine the process's throttle is the budget.
  const budget = config.NATS_URL ? await connectHostBudget(config, log) : undefined;
  const worker = new AuditPageWorker({
    frontier,
    pages: auditPages,
    work,
    crawl: { ...fetching, limits: config.crawl },
    owner: `${os.hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`,
    leaseMs,
    budget,
    reads: new PageReadThreads(config.SITE_AUDIT_READ_THREADS),
    log,
  });
  return { frontier, work, worker, leaseMs, budget };
}
