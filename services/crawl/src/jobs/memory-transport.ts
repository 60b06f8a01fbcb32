import type { Logger } from '@webutil/kit';
import {
  type CrawlEvent,
  type CrawlTransport,
  type EventHandler,
  type JobHandler,
  type JobTicket,
  LATER_MS,
} from './transport.js';

/**
 * The one-machine transport: a queue and a bus inside the process. Nothing survives the process;
 * jobs it was running stay `crawling` in the job store and are handed back at the next start.
 */
export class MemoryTransport implements CrawlTransport {
  private readonly queue: JobTicket[] = [];
  private readonly shutdown = new AbortController();
  private readonly running = new Set<Promise<void>>();
  private concurrency = 0;
  private handler: JobHandler | undefined;
  private recorder: EventHandler | undefined;

  constructor(private readonly log: Logger) {}

  async enqueue(ticket: JobTicket): Promise<void> {
    this.queue.push(ticket);
    this.pump();
  }

  async publish(event: CrawlEvent): Promise<void> {
    await this.recorder?.(event);
  }

  work(concurrency: number, handler: JobHandler): void {
    this.concurrency = concurrency;
    this.handler = handler;
    this.pump();
  }

  record(handler: EventHandler): void {
    this.recorder = handler;
  }

  async close(): Promise<void> {
    this.shutdown.abort(new Error('shutting down'));
    this.queue.length = 0;
    await Promise.allSettled([...this.running]);
  }

  private pump(): void {
    const handler = this.handler;
    while (handler && !this.shutdown.signal.aborted && this.running.size < this.concurrency && this.queue.length > 0) {
      const ticket = this.queue.shift() as JobTicket;
      const lease = {
        attempt: (ticket.priorAttempts ?? 0) + 1,
        keepAlive: () => undefined,
        signal: this.shutdown.signal,
      };
      const run: Promise<void> = handler(ticket, lease)
        .then((delivery) => {
          // Back in the queue after a moment: the jobs behind it are offered to the worker first.
          if (delivery === 'later') setTimeout(() => this.enqueue(ticket), LATER_MS).unref();
        })
        .catch((err: unknown) => {
          if (this.shutdown.signal.aborted) return;
          // Another try, as a redelivery would give it.
          this.log.warn({ err, jobId: ticket.id }, 'crawl job failed; trying again');
          this.queue.push({ ...ticket, priorAttempts: lease.attempt });
        })
        .finally(() => {
          this.running.delete(run);
          this.pump();
        });
      this.running.add(run);
    }
  }
}
