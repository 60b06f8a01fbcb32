import { randomUUID } from 'node:crypto';
import {
  type AddressPolicy,
  cancelled,
  gauge,
  type Logger,
  type LookupHost,
  notFound,
  parseTargetUrl,
  resolveTarget,
  targetFailure,
  unavailable,
} from '@webutil/kit';
import type { CrawlKind, JobError } from '../model.js';
import type { JobSettings } from '../settings.js';
import { type CrawlDeps, CrawlFailure, crawlSite } from '../site-crawl/crawler.js';
import { normalizePageUrl } from '../site-crawl/frontier.js';
import { type Ending, EventPublisher, failedProgress, initialProgress } from './events.js';
import { type CrawlJob, type JobStore, packResult } from './store.js';
import type { CrawlEvent, CrawlTransport, JobTicket, Lease } from './transport.js';

export interface JobsDeps {
  store: JobStore;
  transport: CrawlTransport;
  crawl: CrawlDeps;
  policy: AddressPolicy;
  /** How target names are resolved (the system resolver when undefined). */
  lookup: LookupHost | undefined;
  options: JobSettings;
  log: Logger;
}

const JOB_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Crawl jobs from start to poll: the start call creates the job and queues it; a worker runs the
 * crawl and publishes progress, done or failed; the recorder writes those into the job store;
 * polls read the store. Any replica can do any of these steps.
 */
/** Crawls this process is running now (Prometheus). */
const activeCrawls = gauge({ name: 'webutil_crawls_active', help: 'Crawls running in this process' });

export class CrawlJobs {
  /** Starts under way in this process, by request id, for `withdraw`. */
  private readonly starting = new Map<string, AbortController>();

  constructor(private readonly deps: JobsDeps) {}

  /**
   * Validates the entry URL (a blocked or unresolvable host is a 400 now, not a failed job later),
   * creates and queues the job. A start withdrawn (its caller left) or cancelled before its job
   * exists does nothing; one withdrawn while the job is being created has it withdrawn before any
   * worker runs it. Once queued, the job stands: the service did the work, and the edge bills it.
   */
  async start(kind: CrawlKind, rawUrl: string, requestId: string, callSignal: AbortSignal): Promise<string> {
    const withdrawal = new AbortController();
    this.starting.set(requestId, withdrawal);
    try {
      return await this.create(kind, rawUrl, AbortSignal.any([callSignal, withdrawal.signal]));
    } finally {
      if (this.starting.get(requestId) === withdrawal) this.starting.delete(requestId);
    }
  }

  /** Withdraws the start of this request id if it is under way here (see `start`). */
  withdraw(requestId: string): boolean {
    const withdrawal = this.starting.get(requestId);
    withdrawal?.abort(cancelled('WITHDRAWN', 'the caller left before the crawl was queued'));
    return withdrawal !== undefined;
  }

  private async create(kind: CrawlKind, rawUrl: string, signal: AbortSignal): Promise<string> {
    const url = parseTargetUrl(rawUrl);
    await this.preflight(url, signal);
    if (signal.aborted) throw signal.reason;
    const id = randomUUID();
    const now = new Date();
    const progress = initialProgress(this.deps.crawl.limits.pages);
    const entry = normalizePageUrl(url);
    await this.deps.store.create({
      id,
      kind,
      url: entry,
      progress,
      createdAt: now,
      expiresAt: new Date(now.getTime() + this.deps.options.retentionMs),
    });
    if (signal.aborted) {
      const error = { code: 'cancelled', message: 'the caller left before the crawl was queued' };
      await this.deps.store.fail(id, error, { attempt: 0, seq: 0, progress: failedProgress(progress, error) });
      throw signal.reason;
    }
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
    if (!job || job.kind !== kind)
      throw notFound('JOB_NOT_FOUND', `no crawl job ${id.slice(0, 64)} (jobs are kept 30 minutes)`);
    const lost = this.lostReason(job);
    if (!lost) return job;
    await this.deps.store.fail(job.id, lost, {
      attempt: job.attempt,
      seq: job.seq,
      progress: failedProgress(job.progress, lost),
    });
    return (await this.deps.store.get(id)) ?? job;
  }

  /** Hands jobs left `crawling` by a previous process back to the queue (the in-process transport keeps nothing). */
  async resumeAbandoned(): Promise<number> {
    const jobs = await this.deps.store.crawling();
    for (const job of jobs)
      await this.deps.transport.enqueue({ id: job.id, kind: job.kind, url: job.url, priorAttempts: job.attempt });
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
    if (job?.status !== 'crawling') return; // expired, or already ended by another delivery
    const events = new EventPublisher(
      this.deps.transport,
      ticket,
      lease.attempt,
      this.deps.options.progressIntervalMs,
      log,
    );
    if (lease.attempt > this.deps.options.maxAttempts) {
      await events.end(
        {
          type: 'failed',
          error: {
            code: 'crawl_interrupted',
            message: `the crawl was interrupted ${lease.attempt - 1} times; giving up`,
          },
        },
        job.progress,
        lease.signal,
      );
      return;
    }
    const heartbeat = setInterval(() => {
      lease.keepAlive();
      events.refresh();
    }, this.deps.options.heartbeatMs);
    const started = Date.now();
    activeCrawls.inc();
    try {
      const restarted = lease.attempt > 1 ? ` (restarted after an interruption, try ${lease.attempt})` : '';
      const crawl = crawlSite(
        ticket.kind,
        new URL(ticket.url),
        this.deps.crawl,
        (p) => events.progress(restarted && p.phase === 'sitemap' ? { ...p, message: p.message + restarted } : p),
        lease.signal,
      );
      const outcome: Ending = await crawl.then(
        (result) => ({ type: 'done' as const, result: packResult(result) }),
        (err: unknown) => {
          if (lease.signal.aborted) throw err;
          if (err instanceof CrawlFailure)
            return { type: 'failed' as const, error: { code: err.code, message: err.message } };
          log.error({ err }, 'crawl crashed');
          return {
            type: 'failed' as const,
            error: { code: 'internal_error', message: 'the crawl stopped on an internal error' },
          };
        },
      );
      await events.end(outcome, undefined, lease.signal);
      log.info({ ms: Date.now() - started, outcome: outcome.type }, 'crawl ended');
    } finally {
      clearInterval(heartbeat);
      activeCrawls.dec();
    }
  }

  /** The entry's host resolves to an allowed address; a start withdrawn meanwhile stops waiting. */
  private async preflight(url: URL, signal: AbortSignal): Promise<void> {
    const resolved = resolveTarget(url.hostname, this.deps.policy, this.deps.lookup).catch((err: unknown) => {
      throw targetFailure(err);
    });
    const listening = new AbortController();
    const stopped = new Promise<void>((resolve) => {
      signal.addEventListener('abort', () => resolve(), { once: true, signal: listening.signal });
    });
    try {
      await Promise.race([resolved, stopped]);
    } finally {
      listening.abort(); // lets go of the listener
    }
  }

  /** Why a job still `crawling` must be presumed lost, if it must. */
  private lostReason(job: CrawlJob): JobError | undefined {
    if (job.status !== 'crawling') return undefined;
    const silence = Date.now() - job.updatedAt.getTime();
    if (job.progress.phase === 'queued') {
      return silence > this.deps.options.queueStallMs
        ? { code: 'crawl_lost', message: 'no crawl worker took the job up in time' }
        : undefined;
    }
    return silence > this.deps.options.stallMs
      ? { code: 'crawl_lost', message: 'the crawl stopped reporting progress and was given up' }
      : undefined;
  }
}
