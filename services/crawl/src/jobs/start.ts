import { randomUUID } from 'node:crypto';
import {
  type AddressPolicy,
  cancelled,
  type Logger,
  type LookupHost,
  parseTargetUrl,
  resolveTarget,
  targetFailure,
  unavailable,
} from '@webutil/kit';
import type { CrawlKind } from '../model.js';
import { normalizePageUrl } from '../page/page-url.js';
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
    const progress = initialProgress(this.deps.pagesCap);
    const entry = normalizePageUrl(url);
    await this.deps.store.create({
      id,
      kind,
      url: entry,
      progress,
      createdAt: now,
      expiresAt: new Date(now.getTime() + this.deps.retentionMs),
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
