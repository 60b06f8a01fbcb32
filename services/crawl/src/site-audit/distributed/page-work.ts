import type { Logger } from '@webutil/kit';

/**
 * A distributed audit's pages as work items for every crawl replica's page workers: a JetStream
 * work-queue stream in a cluster (a subject per job), an in-process queue on one machine
 * (docs/decisions/0491-distributed-audit-frontier.md). A work item only names the page: the row in
 * the frontier (page-frontier.ts) says whether it still needs fetching, so an item delivered twice
 * (a redelivery, a stranded page published again) is fetched once.
 */
export interface PageWorkItem {
  jobId: string;
  url: string;
}

/** A worker's hold on an item. */
export interface PageWorkLease {
  /** Tells the queue the item is still being worked on (call well within the ack wait). */
  keepAlive(): void;
  /** Aborts when this replica shuts down; the item then goes back to the queue. */
  signal: AbortSignal;
}

/** Resolving acks the item; throwing hands it back to be delivered again after a pause. */
export type PageWorkHandler = (item: PageWorkItem, lease: PageWorkLease) => Promise<void>;

export interface PageWorkQueue {
  publish(items: readonly PageWorkItem[]): Promise<void>;
  /** Starts taking items, at most `concurrency` at once. */
  work(concurrency: number, handler: PageWorkHandler): void;
  /** Stops taking items; items being worked on are aborted and handed back. */
  close(): Promise<void>;
}

/** How long an item that failed stays out of the queue. */
export const RETRY_MS = 1_000;

/** The one-machine queue: nothing survives the process (the frontier's stranded rows are published again). */
export class MemoryPageWork implements PageWorkQueue {
  private readonly queue: PageWorkItem[] = [];
  private readonly shutdown = new AbortController();
  private readonly running = new Set<Promise<void>>();
  private concurrency = 0;
  private handler: PageWorkHandler | undefined;

  constructor(private readonly log: Logger) {}

  async publish(items: readonly PageWorkItem[]): Promise<void> {
    this.queue.push(...items);
    this.pump();
  }

  work(concurrency: number, handler: PageWorkHandler): void {
    this.concurrency = concurrency;
    this.handler = handler;
    this.pump();
  }

  async close(): Promise<void> {
    this.shutdown.abort(new Error('shutting down'));
    this.queue.length = 0;
    await Promise.allSettled([...this.running]);
  }

  private pump(): void {
    const handler = this.handler;
    while (handler && !this.shutdown.signal.aborted && this.running.size < this.concurrency && this.queue.length > 0) {
      const item = this.queue.shift() as PageWorkItem;
      const run: Promise<void> = handler(item, { keepAlive: () => undefined, signal: this.shutdown.signal })
        .catch((err: unknown) => {
          if (this.shutdown.signal.aborted) return;
          this.log.warn({ err, ...item }, 'audit page handed back for another try');
          setTimeout(() => void this.publish([item]), RETRY_MS).unref();
        })
        .finally(() => {
          this.running.delete(run);
          this.pump();
        });
      this.running.add(run);
    }
  }
}
