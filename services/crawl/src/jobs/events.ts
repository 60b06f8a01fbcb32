import type { Logger } from '@webutil/kit';
import type { CrawlProgress, JobError } from '../model.js';
import type { PackedResult } from './store.js';
import type { CrawlEvent, CrawlTransport, JobTicket } from './transport.js';

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

export function failedProgress(progress: CrawlProgress, error: JobError): CrawlProgress {
  return { ...progress, phase: 'failed', message: `Failed: ${error.message}` };
}

export type Ending = { type: 'done'; result: PackedResult } | { type: 'failed'; error: JobError };

/**
 * One attempt's events, numbered: progress at most every `intervalMs` (phase changes at once),
 * re-sent on each heartbeat so a running crawl never looks stalled. A lost progress event does
 * not matter (the next one supersedes it); the final event is retried until it is accepted.
 */
export class EventPublisher {
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
    this.transport
      .publish({ ...this.base(), type: 'progress', progress })
      .catch((err: unknown) => this.log.debug({ err }, 'progress event lost'));
  }

  private base() {
    return { jobId: this.ticket.id, kind: this.ticket.kind, attempt: this.attempt, seq: ++this.seq };
  }
}
