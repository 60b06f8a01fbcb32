import os from 'node:os';
import { env, loadConfig, serviceEnv } from '@webutil/kit';

export interface FetchSettings {
  /** Budget of one page fetch (a page read for its links), body included. */
  pageTimeoutMs: number;
  /** Budget of one link check request, redirects included. */
  linkTimeoutMs: number;
  /** Most decoded bytes read from one page. */
  maxPageBytes: number;
  /** Most distinct links read from one page (spec: 5,000 for link-extract). */
  linksPerPage: number;
  /** Requests in flight per process. */
  checkConcurrency: number;
  hostConcurrencyInitial: number;
  hostConcurrencyMax: number;
  /** An answer slower than this does not let a host's concurrency grow. */
  slowAnswerMs: number;
  /** Longest Retry-After a 429 may ask for and still be waited out. */
  maxRetryAfterMs: number;
}

export interface PageCheckSettings {
  /** Links checked at most on one page, in document order. */
  checkCap: number;
  /** Time for checking one page's links. */
  budgetMs: number;
}

export interface CrawlLimits {
  /** Pages fetched at most (spec: 250). */
  pages: number;
  /** Unique links checked at most in a broken-link crawl (spec: 1,500). */
  checkedLinks: number;
  /** Unique links reported at most in a link-extract crawl (spec: 3,000). */
  reportedLinks: number;
  /** Wall time of a crawl (spec: 6 minutes). */
  timeBudgetMs: number;
  /** Sample source pages kept per link (spec: 25). */
  sources: number;
  /** Same-shape page chains longer than this are not followed (crawler traps). */
  maxShapeChain: number;
  sitemapFiles: number;
  sitemapUrls: number;
  /** Pages a crawl knows at most (crawled and queued): bounds the frontier's memory. */
  frontierPages: number;
  /** Unique links counted at most beyond the reported ones (for totalUniqueLinks). */
  countedLinks: number;
  /** Pages fetched at once (the host throttle bounds them further). */
  pageConcurrency: number;
}

export interface JobSettings {
  /** Crawls run at once by this process. */
  concurrency: number;
  /** A job is gone (404) this long after it started (spec: 30 minutes). */
  retentionMs: number;
  /** Tries of a job before it ends `failed` (each lost worker costs one). */
  maxAttempts: number;
  /** A job not kept alive for this long goes to another worker (NATS). */
  ackWaitMs: number;
  /** Keep-alives to the queue and refreshed progress while a crawl runs. */
  heartbeatMs: number;
  /** Least time between two progress events of a crawl. */
  progressIntervalMs: number;
  /** A running crawl with no event for this long is declared lost (`failed`). */
  stallMs: number;
  /** A job no worker took for this long is declared lost too. */
  queueStallMs: number;
}

const ENV = {
  ...serviceEnv,
  HOST: env.string('0.0.0.0'),
  PORT: env.port(50053),
  WEBUTIL_ALLOW_TARGETS: env.cidrList(),
  CRAWL_DNS_SERVERS: env.list(),
  DATA_DIR: env.string('.data'),
  MONGO_URL: env.optionalString(),
  NATS_URL: env.optionalString(),
  CRAWL_NATS_PREFIX: env.string('webutil'),
  // The services a site audit's site-level checks call (decision 0489); unset: not available.
  TLS_SCAN_ADDR: env.optionalString(),
  META_SCAN_ADDR: env.optionalString(),
  RENDER_ADDR: env.optionalString(),
  // Billing, where a site audit's hold of credits is settled when its job ends (decision 0490).
  BILLING_ADDR: env.optionalString(),
  CRAWL_WARM_UP: env.bool(true),
  PAGE_TIMEOUT_MS: env.int(20_000, 1),
  LINK_TIMEOUT_MS: env.int(10_000, 1),
  MAX_PAGE_BYTES: env.int(20 * 1024 * 1024, 1024),
  CHECK_CONCURRENCY: env.int(256, 1),
  HOST_CONCURRENCY_INITIAL: env.int(4, 1),
  HOST_CONCURRENCY_MAX: env.int(64, 1),
  SLOW_ANSWER_MS: env.int(1_000, 1),
  MAX_RETRY_AFTER_MS: env.int(30_000, 0),
  PAGE_CHECK_CAP: env.int(500, 1),
  PAGE_CHECK_BUDGET_MS: env.int(60_000, 1),
  CRAWL_MAX_PAGES: env.int(250, 1),
  CRAWL_MAX_CHECKED_LINKS: env.int(1_500, 1),
  CRAWL_MAX_REPORTED_LINKS: env.int(3_000, 1),
  CRAWL_TIME_BUDGET_MS: env.int(6 * 60_000, 1),
  CRAWL_PAGE_CONCURRENCY: env.int(32, 1),
  CRAWL_CONCURRENCY: env.int(4, 1),
  CRAWL_JOB_RETENTION_MS: env.int(30 * 60_000, 1),
  CRAWL_MAX_ATTEMPTS: env.int(3, 1),
  CRAWL_ACK_WAIT_MS: env.int(4_000, 1_000),
  CRAWL_HEARTBEAT_MS: env.int(1_000, 100),
  CRAWL_PROGRESS_INTERVAL_MS: env.int(500, 0),
  CRAWL_STALL_MS: env.int(2 * 60_000, 1_000),
  CRAWL_QUEUE_STALL_MS: env.int(15 * 60_000, 1_000),
  /** Site audits spread over every replica (site-audit/distributed/, decision 0491); off: one worker runs each. */
  SITE_AUDIT_DISTRIBUTED: env.bool(true),
  /**
   * Pages of distributed audits one replica works on at once; unset, on the embedded store 32 (its
   * commits are shared by the workers waiting on them, decision 0499), 64 with a read thread
   * (decision 0501), and 16 on MongoDB.
   */
  SITE_AUDIT_PAGE_WORKERS: env.optionalInt(1),
  /**
   * Threads a replica parses its audit pages on, beside its event loop (decision 0501); unset, one
   * where the process may use more than one core, else none (parsed on the event loop).
   */
  SITE_AUDIT_READ_THREADS: env.optionalInt(0),
};

/**
 * The service's settings from environment variables (a bad value stops the process, naming it):
 * the process's own as the other services read them, and the domain's grouped as their code takes them.
 */
export function readConfig(source: NodeJS.ProcessEnv = process.env) {
  const c = loadConfig(ENV, source);
  const fetch: FetchSettings = {
    pageTimeoutMs: c.PAGE_TIMEOUT_MS,
    linkTimeoutMs: c.LINK_TIMEOUT_MS,
    maxPageBytes: c.MAX_PAGE_BYTES,
    linksPerPage: 5_000,
    checkConcurrency: c.CHECK_CONCURRENCY,
    hostConcurrencyInitial: Math.min(c.HOST_CONCURRENCY_INITIAL, c.HOST_CONCURRENCY_MAX),
    hostConcurrencyMax: c.HOST_CONCURRENCY_MAX,
    slowAnswerMs: c.SLOW_ANSWER_MS,
    maxRetryAfterMs: c.MAX_RETRY_AFTER_MS,
  };
  const pageCheck: PageCheckSettings = { checkCap: c.PAGE_CHECK_CAP, budgetMs: c.PAGE_CHECK_BUDGET_MS };
  const crawl: CrawlLimits = {
    pages: c.CRAWL_MAX_PAGES,
    checkedLinks: c.CRAWL_MAX_CHECKED_LINKS,
    reportedLinks: c.CRAWL_MAX_REPORTED_LINKS,
    timeBudgetMs: c.CRAWL_TIME_BUDGET_MS,
    sources: 25,
    maxShapeChain: 8,
    sitemapFiles: 50,
    sitemapUrls: 50_000,
    frontierPages: 150_000,
    countedLinks: 1_000_000,
    pageConcurrency: c.CRAWL_PAGE_CONCURRENCY,
  };
  const jobs: JobSettings = {
    concurrency: c.CRAWL_CONCURRENCY,
    retentionMs: c.CRAWL_JOB_RETENTION_MS,
    maxAttempts: c.CRAWL_MAX_ATTEMPTS,
    ackWaitMs: c.CRAWL_ACK_WAIT_MS,
    // Keep-alives well inside the ack wait, or a healthy crawl would be handed to another worker.
    heartbeatMs: Math.min(c.CRAWL_HEARTBEAT_MS, Math.floor(c.CRAWL_ACK_WAIT_MS / 3)),
    progressIntervalMs: c.CRAWL_PROGRESS_INTERVAL_MS,
    stallMs: c.CRAWL_STALL_MS,
    queueStallMs: c.CRAWL_QUEUE_STALL_MS,
  };
  const SITE_AUDIT_READ_THREADS = c.SITE_AUDIT_READ_THREADS ?? (os.availableParallelism() > 1 ? 1 : 0);
  // With its pages parsed on a thread, a replica on the embedded store keeps both busy with 64 (decision 0501).
  const SITE_AUDIT_PAGE_WORKERS =
    c.SITE_AUDIT_PAGE_WORKERS ?? (c.MONGO_URL ? 16 : SITE_AUDIT_READ_THREADS > 0 ? 64 : 32);
  return { ...c, SITE_AUDIT_PAGE_WORKERS, SITE_AUDIT_READ_THREADS, fetch, pageCheck, crawl, jobs };
}

export type CrawlConfig = ReturnType<typeof readConfig>;
