import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { AddressPolicy, createLogger, env, loadConfig, runService, SafeHttp, serviceEnv } from '@webutil/kit';
import type { CrawlTransport } from './crawl-transport.js';
import type { CrawlDeps } from './crawler.js';
import { HostThrottle } from './host-throttle.js';
import type { JobStore } from './job-store.js';
import { MongoJobStore } from './job-store-mongo.js';
import { SqliteJobStore } from './job-store-sqlite.js';
import { CrawlJobs } from './jobs.js';
import { MemoryTransport } from './memory-transport.js';
import { NatsTransport } from './nats-transport.js';
import { crawlService } from './server.js';

const config = loadConfig({
  ...serviceEnv,
  HOST: env.string('0.0.0.0'),
  PORT: env.port(50053),
  WEBUTIL_ALLOW_TARGETS: env.cidrList(),
  DATA_DIR: env.string('.data'),
  MONGO_URL: env.optionalString(),
  NATS_URL: env.optionalString(),
  /** First subject token of crawl traffic on NATS; stacks sharing a server use different ones. */
  CRAWL_NATS_PREFIX: env.string('webutil'),
  // Fetching
  PAGE_TIMEOUT_MS: env.int(20_000, 1),
  LINK_TIMEOUT_MS: env.int(10_000, 1),
  MAX_PAGE_BYTES: env.int(20 * 1024 * 1024, 1024),
  CHECK_CONCURRENCY: env.int(256, 1),
  HOST_CONCURRENCY_INITIAL: env.int(4, 1),
  HOST_CONCURRENCY_MAX: env.int(64, 1),
  SLOW_ANSWER_MS: env.int(1_000, 1),
  MAX_RETRY_AFTER_MS: env.int(30_000, 0),
  // Single-page check
  PAGE_CHECK_CAP: env.int(500, 1),
  PAGE_CHECK_BUDGET_MS: env.int(60_000, 1),
  // Crawls (spec limits by default)
  CRAWL_MAX_PAGES: env.int(250, 1),
  CRAWL_MAX_CHECKED_LINKS: env.int(1_500, 1),
  CRAWL_MAX_REPORTED_LINKS: env.int(3_000, 1),
  CRAWL_TIME_BUDGET_MS: env.int(6 * 60_000, 1),
  CRAWL_PAGE_CONCURRENCY: env.int(32, 1),
  CRAWL_CONCURRENCY: env.int(4, 1),
  CRAWL_JOB_RETENTION_MS: env.int(30 * 60_000, 1),
  CRAWL_MAX_ATTEMPTS: env.int(3, 1),
  CRAWL_ACK_WAIT_MS: env.int(30_000, 1_000),
  CRAWL_HEARTBEAT_MS: env.int(5_000, 100),
  CRAWL_PROGRESS_INTERVAL_MS: env.int(500, 0),
  CRAWL_STALL_MS: env.int(2 * 60_000, 1_000),
  CRAWL_QUEUE_STALL_MS: env.int(15 * 60_000, 1_000),
});

const log = createLogger('crawl', config.LOG_LEVEL);
const policy = new AddressPolicy(config.WEBUTIL_ALLOW_TARGETS);
const http = new SafeHttp({ policy, connectionsPerOrigin: config.HOST_CONCURRENCY_MAX, idleTimeoutMs: config.PAGE_TIMEOUT_MS });
const throttle = new HostThrottle({
  globalLimit: config.CHECK_CONCURRENCY,
  initialPerHost: Math.min(config.HOST_CONCURRENCY_INITIAL, config.HOST_CONCURRENCY_MAX),
  maxPerHost: config.HOST_CONCURRENCY_MAX,
  slowMs: config.SLOW_ANSWER_MS,
  timeoutsToGiveUp: 3,
  downForMs: 60_000,
});
const checker = {
  http,
  throttle,
  requestTimeoutMs: config.LINK_TIMEOUT_MS,
  pageTimeoutMs: config.PAGE_TIMEOUT_MS,
  maxPageBytes: config.MAX_PAGE_BYTES,
  maxRetryAfterMs: config.MAX_RETRY_AFTER_MS,
  slowMs: config.SLOW_ANSWER_MS,
};
const crawl: CrawlDeps = {
  ...checker,
  pageConcurrency: config.CRAWL_PAGE_CONCURRENCY,
  limits: {
    pages: config.CRAWL_MAX_PAGES,
    checkedLinks: config.CRAWL_MAX_CHECKED_LINKS,
    reportedLinks: config.CRAWL_MAX_REPORTED_LINKS,
    timeBudgetMs: config.CRAWL_TIME_BUDGET_MS,
    sources: 25,
    linksPerPage: 5_000,
    maxShapeChain: 8,
    sitemapFiles: 50,
    sitemapUrls: 50_000,
  },
};

async function openStore(): Promise<JobStore> {
  if (config.MONGO_URL) return MongoJobStore.connect(config.MONGO_URL);
  mkdirSync(config.DATA_DIR, { recursive: true });
  return new SqliteJobStore(path.join(config.DATA_DIR, 'crawl-jobs.sqlite'));
}

async function openTransport(): Promise<CrawlTransport> {
  if (!config.NATS_URL) return new MemoryTransport(log);
  return NatsTransport.connect({ url: config.NATS_URL, prefix: config.CRAWL_NATS_PREFIX, ackWaitMs: config.CRAWL_ACK_WAIT_MS, retentionMs: config.CRAWL_JOB_RETENTION_MS, log });
}

const store = await openStore();
const transport = await openTransport();
const jobs = new CrawlJobs({
  store,
  transport,
  crawl,
  policy,
  log,
  options: {
    retentionMs: config.CRAWL_JOB_RETENTION_MS,
    maxAttempts: config.CRAWL_MAX_ATTEMPTS,
    progressIntervalMs: config.CRAWL_PROGRESS_INTERVAL_MS,
    // Keep-alives well inside the ack wait, or a healthy crawl would be handed to another worker.
    heartbeatMs: Math.min(config.CRAWL_HEARTBEAT_MS, Math.floor(config.CRAWL_ACK_WAIT_MS / 3)),
    stallMs: config.CRAWL_STALL_MS,
    queueStallMs: config.CRAWL_QUEUE_STALL_MS,
  },
});
transport.record((event) => jobs.record(event));
transport.work(config.CRAWL_CONCURRENCY, (ticket, lease) => jobs.run(ticket, lease));
if (transport instanceof MemoryTransport) {
  const resumed = await jobs.resumeAbandoned();
  if (resumed > 0) log.info({ resumed }, 'crawls of the previous run handed back to workers');
}
const sweeper = setInterval(() => {
  store.sweep().catch((err: unknown) => log.warn({ err }, 'could not delete expired crawl jobs'));
}, Math.min(60_000, config.CRAWL_JOB_RETENTION_MS));
sweeper.unref();

await runService({
  name: 'crawl',
  host: config.HOST,
  port: config.PORT,
  protoFiles: ['webutil/crawl/v1/crawl.proto'],
  bindings: [
    crawlService(
      {
        extract: { http, timeoutMs: config.PAGE_TIMEOUT_MS, linkCap: 5_000, maxPageBytes: config.MAX_PAGE_BYTES },
        pageCheck: { ...checker, linkCap: 5_000, checkCap: config.PAGE_CHECK_CAP, budgetMs: config.PAGE_CHECK_BUDGET_MS },
        jobs,
      },
      log,
    ),
  ],
  shutdownGraceMs: config.SHUTDOWN_GRACE_MS,
  metricsPort: config.METRICS_PORT,
  log,
  onShutdown: async () => {
    clearInterval(sweeper);
    await transport.close();
    await store.close();
    await http.close();
  },
});
