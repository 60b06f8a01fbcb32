import { randomUUID } from 'node:crypto';
import {
  type AddressPolicy,
  cancelled,
  type Logger,
  type LookupHost,
  parseTargetUrl,
  resolveTarget,
  resourceExhausted,
  targetFailure,
  unavailable,
} from '@webutil/kit';
import type { CrawlKind, CrawlOptions, CrawlProgress } from '../model.js';
import { normalizePageUrl } from '../page/page-url.js';
import type { ScanOptions } from '../scan-options.js';
import { auditBudgetMs } from '../site-audit/audit-site.js';
import { failedProgress, initialProgress } from './events.js';
import type { JobStore } from './store.js';
import type { CrawlTransport } from './transport.js';

export interface StartDeps {
  store: JobStore;
  transport: CrawlTransport;
  policy: AddressPolicy;
  /** How target names are resolved (the system resolver when undefined). */
  lookup: LookupHost | undefined;
  /** Pages a crawl fetches at most (its progress starts with the cap). */
  pagesCap: number;
  /** A job is gone this long after it started. */
  retentionMs: number;
  log: Logger;
}

/** Who starts a crawl (the start request's CrawlCaller). */
export interface StartCaller {
  /** Billing's name of who pays: `account:<id>`, or `ip:<network>` for an anonymous caller. */
  key: string;
  /** Absent for an anonymous caller. */
  plan?: string;
}

/**
 * Crawl jobs one caller may have queued or running at once, by plan: a crawl costs a few credits
 * and may hold a worker for minutes, so without a bound one caller could queue hours of crawling
 * ahead of everyone else (docs/decisions/0142-crawls-per-caller.md).
 */
export const CRAWLS_PER_CALLER: Readonly<Record<string, number>> = {
  ANONYMOUS: 2,
  FREE: 2,
  STARTER: 4,
  GROWTH: 8,
  SCALE: 12,
  ENTERPRISE: 16,
};

/** The bound of a plan; an anonymous caller's, or a plan this service does not know, is the smallest. */
export function crawlsPerCaller(plan: string | undefined): number {
  return CRAWLS_PER_CALLER[plan ?? 'ANONYMOUS'] ?? (CRAWLS_PER_CALLER.ANONYMOUS as number);
}

/** When a caller at its bound is told to come back: crawls take seconds to minutes. */
const RETRY_AFTER_SECONDS = 30;

/**
 * The start of a crawl job (StartBrokenLinkCrawl, StartLinkExtractCrawl): the job created in the
 * store and queued for a worker (run.ts). Any replica can start a job that any other runs.
 */
export class CrawlStarts {
  /** Starts under way in this process, by request id, for `withdraw`. */
  private readonly starting = new Map<string, AbortController>();

  constructor(private readonly deps: StartDeps) {}

  /**
   * Validates the entry URL (a blocked or unresolvable host is a 400 now, not a failed job later),
   * creates and queues the job. A start withdrawn (its caller left) or cancelled before its job
   * exists does nothing; one withdrawn while the job is being created has it withdrawn before any
   * worker runs it. Once queued, the job stands: the service did the work, and the edge bills it.
   * A caller that already has its plan's bound of jobs queued or running is refused
   * (RESOURCE_EXHAUSTED, TOO_MANY_CRAWLS, with a time to retry), and nothing is stored.
   */
  async start(
    kind: CrawlKind,
    rawUrl: string,
    requestId: string,
    callSignal: AbortSignal,
    caller?: StartCaller,
    options: CrawlOptions = { checkFragments: false },
  ): Promise<string> {
    const withdrawal = new AbortController();
    this.starting.set(requestId, withdrawal);
    try {
      return await this.create(kind, rawUrl, caller, options, AbortSignal.any([callSignal, withdrawal.signal]));
    } finally {
      if (this.starting.get(requestId) === withdrawal) this.starting.delete(requestId);
    }
  }

  /**
   * A bookmark check (bookmark-check/): as `start`, for a list of URLs packed as the job's input
   * instead of a site (no entry host to resolve: each URL is checked, or refused, on its own).
   */
  async startList(
    kind: 'bookmarks',
    input: Buffer,
    progress: CrawlProgress,
    requestId: string,
    callSignal: AbortSignal,
    caller?: StartCaller,
  ): Promise<string> {
    const withdrawal = new AbortController();
    this.starting.set(requestId, withdrawal);
    try {
      const signal = AbortSignal.any([callSignal, withdrawal.signal]);
      return await this.create(kind, `${kind}:`, caller, { checkFragments: false }, signal, { input, progress });
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

  private async create(
    kind: CrawlKind,
    rawUrl: string,
    caller: StartCaller | undefined,
    options: CrawlOptions,
    signal: AbortSignal,
    list?: { input: Buffer; progress: CrawlProgress },
  ): Promise<string> {
    let entry = rawUrl;
    if (!list) {
      const url = parseTargetUrl(rawUrl);
      await this.preflight(url, signal);
      entry = normalizePageUrl(url);
    }
    if (signal.aborted) throw signal.reason;
    const id = randomUUID();
    const now = new Date();
    // A site audit's cap is its own (its plan's, set by the edge), and its job lives past its time budget.
    const audit = kind === 'site-audit' ? (options.scan?.maxPages ?? 1) : undefined;
    const pagesCap = audit ?? Math.min(this.deps.pagesCap, options.scan?.maxPages ?? this.deps.pagesCap);
    const progress = list?.progress ?? initialProgress(pagesCap);
    const lifetimeMs = this.deps.retentionMs + (audit ? auditBudgetMs(audit) : 0);
    const bound = caller && crawlsPerCaller(caller.plan);
    const created = await this.deps.store.create(
      {
        id,
        kind,
        url: entry,
        caller: caller?.key,
        // The plan's bound is also its weight in the workers' fair shares (run.ts, store.claim).
        weight: bound,
        checkFragments: options.checkFragments || undefined,
        scan: nonEmpty(options.scan),
        input: list?.input,
        progress,
        createdAt: now,
        expiresAt: new Date(now.getTime() + lifetimeMs),
      },
      bound,
    );
    if (!created) {
      throw resourceExhausted(
        'TOO_MANY_CRAWLS',
        `this caller already has ${bound} crawls queued or running, the most its plan allows at once; ` +
          'start another when one has ended',
        RETRY_AFTER_SECONDS,
      );
    }
    if (signal.aborted) {
      const error = { code: 'cancelled', message: 'the caller left before the crawl was queued' };
      await this.deps.store.fail(id, error, { attempt: 0, seq: 0, progress: failedProgress(progress, error) });
      throw signal.reason;
    }
    try {
      await this.deps.transport.enqueue({
        id,
        kind,
        url: entry,
        checkFragments: options.checkFragments || undefined,
        scan: nonEmpty(options.scan),
      });
    } catch (err) {
      // Never queued: the job goes (nothing for the caller to poll, nothing counted against its
      // bound). Should the queue have taken it after all, the worker finds no job and drops it.
      this.deps.log.error({ err, jobId: id }, 'could not queue a crawl; its job is discarded');
      await this.deps.store.discard(id).catch((discardErr: unknown) => {
        this.deps.log.error({ err: discardErr, jobId: id }, 'could not discard a crawl job never queued');
      });
      throw unavailable('QUEUE_UNAVAILABLE', 'crawls cannot be started right now; try again shortly');
    }
    return id;
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
}

/** Options worth keeping with a job: none when every one was left out. */
function nonEmpty(scan: ScanOptions | undefined): ScanOptions | undefined {
  return scan && Object.keys(scan).length > 0 ? scan : undefined;
}
