import { gauge, type Logger } from '@webutil/kit';
import { checkBookmarkList } from '../bookmark-check/check-bookmarks.js';
import type { JobSettings } from '../config.js';
import { CrawlFailure, type CrawlOptions, type CrawlProgress, type CrawlResult } from '../model.js';
import type { AuditHistory } from '../site-audit/audit-history.js';
import { auditSite } from '../site-audit/audit-site.js';
import { withComparison } from '../site-audit/compare-audits.js';
import { auditSiteDistributed, type DistributedAuditDeps } from '../site-audit/distributed/coordinator.js';
import type { SiteServicesOf } from '../site-audit/site-services.js';
import { type CrawlDeps, crawlSite } from '../site-crawl/crawler.js';
import type { AuditCredits } from './audit-credits.js';
import type { AuditPageStore } from './audit-pages.js';
import { type Ending, EventPublisher } from './events.js';
import { type JobStore, packResult } from './store.js';
import type { CrawlTransport, Delivery, JobTicket, Lease } from './transport.js';

export interface RunDeps {
  store: JobStore;
  /** Site audits' per-page results, in the job store's database. */
  auditPages: AuditPageStore;
  transport: CrawlTransport;
  crawl: CrawlDeps;
  options: Pick<JobSettings, 'maxAttempts' | 'heartbeatMs' | 'progressIntervalMs'>;
  log: Logger;
  /** Finished site audits kept for the next audit of the site to compare with. */
  auditHistory?: AuditHistory;
  /** Set: site audits are spread over every replica's page workers (decision 0491). */
  distributed?: DistributedAuditDeps;
  /** The services a site audit's site-level checks call (TLS scan, down-check, screenshots). */
  siteServices?: SiteServicesOf;
  /** Settles a site audit's hold of credits when its job ends (absent: no billing configured). */
  auditCredits?: AuditCredits;
}

/** Crawls this process is running now (Prometheus). */
const activeCrawls = gauge({ name: 'webutil_crawls_active', help: 'Crawls running in this process' });

/**
 * The worker: runs one delivery of a queued job (start.ts) and publishes what happens, progress
 * then done or failed, for the recorder (record.ts). The job store decides whose turn it is
 * (store.claim): a job whose caller holds more workers for its weight than another caller with a
 * job queued goes back to the queue for a moment (`later`), and the worker takes the next.
 * Throwing hands the job back for another try.
 */
export class CrawlRunner {
  constructor(private readonly deps: RunDeps) {}

  async run(ticket: JobTicket, lease: Lease): Promise<Delivery> {
    const claim = await this.deps.store.claim(ticket.id);
    if (claim.turn === 'wait') return 'later';
    const job = claim.turn === 'run' ? await this.deps.store.get(ticket.id) : undefined;
    if (claim.turn === 'gone' || job?.status !== 'crawling') return 'done'; // expired, or ended by another delivery
    // Tries are the store's claims: a job handed back `later` was not tried.
    const attempt = claim.attempt;
    const log = this.deps.log.child({ jobId: ticket.id, kind: ticket.kind, attempt });
    const events = new EventPublisher(this.deps.transport, ticket, attempt, this.deps.options.progressIntervalMs, log);
    if (attempt > this.deps.options.maxAttempts) {
      await events.end(
        {
          type: 'failed',
          error: {
            code: 'crawl_interrupted',
            message: `the crawl was interrupted ${attempt - 1} times; giving up`,
          },
        },
        job.progress,
        lease.signal,
      );
      const hold = ticket.scan?.creditHold;
      if (hold)
        await this.deps.auditCredits?.settle(
          ticket.id,
          hold,
          { type: 'failed', error: { code: '', message: '' } },
          ticket.url,
        );
      return 'done';
    }
    const heartbeat = setInterval(() => {
      lease.keepAlive();
      events.refresh();
    }, this.deps.options.heartbeatMs);
    const started = Date.now();
    log.info('crawl started');
    activeCrawls.inc();
    try {
      const restarted = attempt > 1 ? ` (restarted after an interruption, try ${attempt})` : '';
      const onProgress = (p: CrawlProgress) =>
        events.progress(restarted && p.phase === 'sitemap' ? { ...p, message: p.message + restarted } : p);
      const options = { checkFragments: ticket.checkFragments ?? false, scan: ticket.scan };
      const crawl =
        ticket.kind === 'bookmarks'
          ? checkBookmarkList(job, this.deps.crawl, (p) => events.progress(p), lease.signal)
          : ticket.kind === 'site-audit'
            ? this.audit(ticket, job, onProgress, lease, options, attempt, log)
                .then((result) =>
                  withComparison(this.deps.auditHistory, job, result, (err) =>
                    log.warn({ err }, 'the audit could not be compared with the previous one'),
                  ),
                )
                .then((result): CrawlResult => ({ kind: 'site-audit', result }))
            : crawlSite(ticket.kind, new URL(ticket.url), this.deps.crawl, onProgress, lease.signal, options);
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
      const hold = ticket.scan?.creditHold;
      if (hold) await this.deps.auditCredits?.settle(ticket.id, hold, outcome, ticket.url);
      log.info({ ms: Date.now() - started, outcome: outcome.type }, 'crawl ended');
      return 'done';
    } finally {
      clearInterval(heartbeat);
      activeCrawls.dec();
    }
  }

  /** A site audit: spread over the replicas when configured (fragment checks still run on one worker). */
  private audit(
    ticket: JobTicket,
    job: { id: string; expiresAt: Date },
    onProgress: (p: CrawlProgress) => void,
    lease: Lease,
    options: CrawlOptions,
    attempt: number,
    log: Logger,
  ) {
    const out = { store: this.deps.auditPages, jobId: job.id, expiresAt: job.expiresAt };
    const entry = new URL(ticket.url);
    const pagesCap = ticket.scan?.maxPages ?? 1;
    const { distributed } = this.deps;
    const spread = distributed !== undefined;
    // Which engine runs the audit: operators (and the e2e tests) read it from the log.
    log.info({ engine: spread ? 'distributed' : 'one-worker' }, 'site audit engine');
    return spread
      ? auditSiteDistributed(
          entry,
          pagesCap,
          this.deps.crawl,
          onProgress,
          lease.signal,
          options,
          out,
          distributed,
          attempt,
          this.deps.siteServices,
        )
      : auditSite(entry, pagesCap, this.deps.crawl, onProgress, lease.signal, options, out, this.deps.siteServices);
  }
}

/**
 * Hands jobs left `crawling` by a previous process back to the queue: the in-process transport
 * keeps nothing across a restart, the store does.
 */
export async function resumeAbandoned(store: JobStore, transport: CrawlTransport): Promise<number> {
  const jobs = await store.crawling();
  for (const job of jobs)
    await transport.enqueue({
      id: job.id,
      kind: job.kind,
      url: job.url,
      checkFragments: job.checkFragments,
      scan: job.scan,
      priorAttempts: job.attempt,
    });
  return jobs.length;
}
