import { notFound } from '@webutil/kit';
import type { CrawlKind, JobError } from '../model.js';
import { failedProgress } from './events.js';
import type { CrawlJob, JobStore } from './store.js';

export interface ReadDeps {
  store: JobStore;
  /** A running crawl with no event for this long is declared lost. */
  stallMs: number;
  /** A job no worker took for this long is declared lost too. */
  queueStallMs: number;
}

const JOB_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * A poll (GetBrokenLinkCrawl, GetLinkExtractCrawl): the job as the store holds it. A job whose
 * worker went silent is ended `failed` here, by whichever replica the poll reaches.
 */
export class CrawlReader {
  constructor(private readonly deps: ReadDeps) {}

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

  /** Why a job still `crawling` must be presumed lost, if it must. */
  private lostReason(job: CrawlJob): JobError | undefined {
    if (job.status !== 'crawling') return undefined;
    const silence = Date.now() - job.updatedAt.getTime();
    if (job.progress.phase === 'queued') {
      return silence > this.deps.queueStallMs
        ? { code: 'crawl_lost', message: 'no crawl worker took the job up in time' }
        : undefined;
    }
    return silence > this.deps.stallMs
      ? { code: 'crawl_lost', message: 'the crawl stopped reporting progress and was given up' }
      : undefined;
  }
}
