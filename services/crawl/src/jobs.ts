import { randomUUID } from 'node:crypto';
import dns from 'node:dns/promises';
import net from 'node:net';
import { invalidArgument, notFound, parseTargetUrl, unavailable, type AddressPolicy, type Logger } from '@webutil/kit';
import type { BrokenLinkCrawlResult, ExtractResult, GetBrokenLinkCrawlResponse, GetLinkExtractCrawlResponse } from '@webutil/proto/webutil/crawl/v1/crawl';
import type { CrawlEvent, CrawlTransport, JobTicket, Lease } from './crawl-transport.js';
import { CrawlFailure, crawlSite, type CrawlDeps, type CrawlKind, type CrawlProgress } from './crawler.js';
import { normalizePageUrl } from './frontier.js';
import type { CrawlJob, JobError, JobStore } from './job-store.js';

export interface JobsOptions {
  /** A job is gone (404) this long after it started (spec: 30 minutes). */
  retentionMs: number;
  /** Tries of a job before it ends `failed` (each lost worker costs one). */
  maxAttempts: number;
  /** Least time between two progress events of a crawl. */
  progressIntervalMs: number;
  /** Keep-alives to the queue and refreshed progress while a crawl runs. */
  heartbeatMs: number;
  /** A running crawl with no event for this long is declared lost (`failed`). */
  stallMs: number;
  /** A job no worker took for this long is declared lost too. */
  queueStallMs: number;
}

export interface JobsDeps {
  store: JobStore;
  transport: CrawlTransport;
  crawl: CrawlDeps;
  policy: AddressPolicy;
  options: JobsOptions;
  log: Logger;
}

const JOB_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Crawl jobs from start to poll: the start call creates the job and queues it; a worker runs the
 * crawl and publishes progress, done or failed; the recorder writes those into the job store;
 * polls read the store. Any replica can do any of these steps.
 */
export class CrawlJobs {
  constructor(private readonly deps: JobsDeps) {}

  /** Validates the entry URL (a blocked or unresolvable host is a 400 now, not a failed job later), creates and queues the job. */
  async start(kind: CrawlKind, rawUrl: string): Promise<string> {
    const url = parseTargetUrl(rawUrl);
    await this.preflight(url);
    const id = randomUUID();
    const now = new Date();
    const progress = initialProgress(this.deps.crawl.limits.pages);
    const entry = normalizePageUrl(url);
    await this.deps.store.create({ id, kind, url: entry, progress, createdAt: now, expiresAt: new Date(now.getTime() + this.deps.options.retentionMs) });
    try {
      await this.deps.transport.enqueue({ id, kind, url: entry });
    } catch (err) {
      this.deps.log.error({ err, jobId: id }, 'could not queue a crawl');
      const error = { code: 'queue_unavailable', message: 'the crawl could not be queued' };
      await this.deps.store.fail(id, error, { attempt: 0, seq: 0, progress: failedProgress(progress, error) });
      throw unavailable('QUEUE_UNAVAILABLE', 'crawls cannot be started right now; try again shortly');
    }
    return id;
  }

  /** The job as a poll sees it; unknown, expired and other-kind ids are all "not found". */
  async get(kind: CrawlKind, id: string): Promise<CrawlJob> {
    const job = JOB_ID.test(id) ? await this.deps.store.get(id) : undefined;
    if (!job || job.kind !== kind) throw notFound('JOB_NOT_FOUND', `no crawl job ${id.slice(0, 64)} (jobs are kept 30 minutes)`);
    const lost = this.lostReason(job);
    if (!lost) return job;
    await this.deps.store.fail(job.id, lost, { attempt: job.attempt, seq: job.seq, progress: failedProgress(job.progress, lost) });
    return (await this.deps.store.get(id)) ?? job;
  }

  /** Hands jobs left `crawling` by a previous process back to the queue (the in-process transport keeps nothing). */
  async resumeAbandoned(): Promise<number> {
    const jobs = await this.deps.store.crawling();
    for (const job of jobs) await this.deps.transport.enqueue({ id: job.id, kind: job.kind, url: job.url, priorAttempts: job.attempt });
    return jobs.length;
  }

  /** The recorder: one event into the store (stale and late events are ignored by the store's guards). */
  async record(event: CrawlEvent): Promise<void> {
    const update = { attempt: event.attempt, seq: event.seq, progress: event.progress };
    if (event.type === 'progress') await this.deps.store.recordProgress(event.jobId, update);
    else if (event.type === 'done') await this.deps.store.finish(event.jobId, { ...update, result: event.result });
    else await this.deps.store.fail(event.jobId, event.error, update);
  }

  /** The worker: runs one delivery of a job and publishes what happens. */
  async run(ticket: JobTicket, lease: Lease): Promise<void> {
    const log = this.deps.log.child({ jobId: ticket.id, kind: ticket.kind, attempt: lease.attempt });
    const job = await this.deps.store.get(ticket.id);
    if (!job || job.status !== 'crawling') return; // expired, or already ended by another delivery
    const events = new EventPublisher(this.deps.transport, ticket, lease.attempt, this.deps.options.progressIntervalMs, log);
    if (lease.attempt > this.deps.options.maxAttempts) {
      await events.end({ type: 'failed', error: { code: 'crawl_interrupted', message: `the crawl was interrupted ${lease.attempt - 1} times; giving up` } }, job.progress, lease.signal);
      return;
    }
    const heartbeat = setInterval(() => {
      lease.keepAlive();
      events.refresh();
    }, this.deps.options.heartbeatMs);
    const started = Date.now();
    try {
      const restarted = lease.attempt > 1 ? ` (restarted after an interruption, try ${lease.attempt})` : '';
      const crawl = crawlSite(ticket.kind, new URL(ticket.url), this.deps.crawl, (p) => events.progress(restarted && p.phase === 'sitemap' ? { ...p, message: p.message + restarted } : p), lease.signal);
      const outcome = await crawl.then(
        (done) => ({ type: 'done' as const, result: done.result }),
        (err: unknown) => {
          if (lease.signal.aborted) throw err;
          if (err instanceof CrawlFailure) return { type: 'failed' as const, error: { code: err.code, message: err.message } };
          log.error({ err }, 'crawl crashed');
          return { type: 'failed' as const, error: { code: 'internal_error', message: 'the crawl stopped on an internal error' } };
        },
      );
      await events.end(outcome, undefined, lease.signal);
      log.info({ ms: Date.now() - started, outcome: outcome.type }, 'crawl ended');
    } finally {
      clearInterval(heartbeat);
    }
  }

  private async preflight(url: URL): Promise<void> {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    let addresses: string[];
    try {
      addresses = net.isIP(host) ? [host] : (await dns.lookup(host, { all: true })).map((a) => a.address);
    } catch {
      throw invalidArgument('TARGET_UNREACHABLE', `${host} does not resolve`);
    }
    if (!addresses.some((a) => this.deps.policy.allows(a))) {
      throw invalidArgument('TARGET_BLOCKED', `${host} resolves to ${addresses[0]} (${this.deps.policy.refusal(addresses[0] ?? '')}); private and internal addresses are not crawled`);
    }
  }

  /** Why a job still `crawling` must be presumed lost, if it must. */
  private lostReason(job: CrawlJob): JobError | undefined {
    if (job.status !== 'crawling') return undefined;
    const silence = Date.now() - job.updatedAt.getTime();
    if (job.progress.phase === 'queued') {
      return silence > this.deps.options.queueStallMs ? { code: 'crawl_lost', message: 'no crawl worker took the job up in time' } : undefined;
    }
    return silence > this.deps.options.stallMs ? { code: 'crawl_lost', message: 'the crawl stopped reporting progress and was given up' } : undefined;
  }
}

export function initialProgress(pagesCap: number): CrawlProgress {
  return {
    phase: 'queued',
    message: 'Waiting for a crawl worker',
    sitemapFound: false,
    sitemapUrlCount: 0,
    pagesCrawled: 0,
    pagesDiscovered: 0,
    pagesCap,
    linksFound: 0,
    linksChecked: 0,
    linksTotal: 0,
  };
}

function failedProgress(progress: CrawlProgress, error: JobError): CrawlProgress {
  return { ...progress, phase: 'failed', message: `Failed: ${error.message}` };
}

type Ending = { type: 'done'; result: unknown } | { type: 'failed'; error: JobError };

/**
 * One attempt's events, numbered: progress at most every `intervalMs` (phase changes at once),
 * re-sent on each heartbeat so a running crawl never looks stalled. A lost progress event does
 * not matter (the next one supersedes it); the final event is retried until it is accepted.
 */
class EventPublisher {
  private seq = 0;
  private latest: CrawlProgress | undefined;
  private lastSent = 0;
  private lastPhase = '';
  private timer: NodeJS.Timeout | undefined;
  private ended = false;

  constructor(
    private readonly transport: CrawlTransport,
    private readonly ticket: JobTicket,
    private readonly attempt: number,
    private readonly intervalMs: number,
    private readonly log: Logger,
  ) {}

  progress(progress: CrawlProgress): void {
    this.latest = progress;
    if (progress.phase !== this.lastPhase || Date.now() - this.lastSent >= this.intervalMs) this.flush();
    else this.timer ??= setTimeout(() => this.flush(), this.intervalMs - (Date.now() - this.lastSent));
  }

  refresh(): void {
    if (this.latest) this.flush();
  }

  async end(ending: Ending, fallback: CrawlProgress | undefined, signal: AbortSignal): Promise<void> {
    this.ended = true;
    clearTimeout(this.timer);
    const last = this.latest ?? fallback ?? initialProgress(0);
    const progress = ending.type === 'failed' ? failedProgress(last, ending.error) : { ...last, phase: 'done' };
    const event = { ...this.base(), progress, ...ending } as CrawlEvent;
    for (let pause = 250; ; pause = Math.min(pause * 2, 5_000)) {
      try {
        await this.transport.publish(event);
        return;
      } catch (err) {
        if (signal.aborted) throw signal.reason;
        this.log.warn({ err }, `could not publish the ${ending.type} event; retrying`);
        await new Promise((resolve) => setTimeout(resolve, pause));
      }
    }
  }

  private flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const progress = this.latest;
    if (this.ended || !progress) return;
    this.lastSent = Date.now();
    this.lastPhase = progress.phase;
    this.transport.publish({ ...this.base(), type: 'progress', progress }).catch((err: unknown) => this.log.debug({ err }, 'progress event lost'));
  }

  private base() {
    return { jobId: this.ticket.id, kind: this.ticket.kind, attempt: this.attempt, seq: ++this.seq };
  }
}

/** A broken-link job as the poll RPC returns it. */
export function brokenLinkJobView(job: CrawlJob): GetBrokenLinkCrawlResponse {
  return {
    jobId: job.id,
    status: job.status,
    progress: job.progress,
    result: job.status === 'done' ? (job.result as BrokenLinkCrawlResult) : undefined,
    error: job.error,
  };
}

/** A link-extract job as the poll RPC returns it: the extract progress shape. */
export function linkExtractJobView(job: CrawlJob): GetLinkExtractCrawlResponse {
  const p = job.progress;
  return {
    jobId: job.id,
    status: job.status,
    progress: {
      phase: p.phase,
      message: p.message,
      sitemapFound: p.sitemapFound,
      sitemapUrlCount: p.sitemapUrlCount,
      pagesScanned: p.pagesCrawled,
      pagesDiscovered: p.pagesDiscovered,
      pagesCap: p.pagesCap,
      linksFound: p.linksFound,
    },
    result: job.status === 'done' ? (job.result as ExtractResult) : undefined,
    error: job.error,
  };
}
