import type { Logger } from '@webutil/kit';
import {
  AckPolicy,
  connect,
  DeliverPolicy,
  type JsMsg,
  type NatsConnection,
  nanos,
  RetentionPolicy,
  StorageType,
} from 'nats';

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
const RETRY_MS = 1_000;

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

export interface NatsPageWorkOptions {
  url: string;
  /** The crawl transport's prefix: first subject token, and the stream's name. */
  prefix: string;
  /** An item not kept alive for this long goes to another replica (this one is presumed dead). */
  ackWaitMs: number;
  /** How long items are kept (the job retention). */
  retentionMs: number;
  log: Logger;
}

export function pageWorkNames(prefix: string) {
  const base = prefix.replace(/[^A-Za-z0-9]/g, '_').toUpperCase();
  return { stream: `${base}_AUDIT_PAGES`, workers: 'audit-page-workers' };
}

/**
 * Items on a JetStream work-queue stream with one durable pull consumer shared by every replica:
 * an item whose worker stops sending keep-alives (a SIGKILLed replica) is delivered to another
 * after the ack wait.
 */
export class NatsPageWork implements PageWorkQueue {
  private readonly names: ReturnType<typeof pageWorkNames>;
  private readonly shutdown = new AbortController();
  private readonly loops: Promise<void>[] = [];
  private running = 0;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly options: NatsPageWorkOptions,
  ) {
    this.names = pageWorkNames(options.prefix);
  }

  static async connect(options: NatsPageWorkOptions): Promise<NatsPageWork> {
    const nc = await connect({
      servers: options.url,
      name: 'webutil-audit-pages',
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
      waitOnFirstConnect: true,
    });
    const names = pageWorkNames(options.prefix);
    const jsm = await nc.jetstreamManager();
    const stream = {
      name: names.stream,
      subjects: [`${options.prefix}.audit-pages.>`],
      retention: RetentionPolicy.Workqueue,
      storage: StorageType.File,
      max_age: nanos(options.retentionMs),
    };
    if (
      await jsm.streams.info(names.stream).then(
        () => true,
        () => false,
      )
    )
      await jsm.streams.update(names.stream, stream);
    else await jsm.streams.add(stream);
    const consumer = {
      durable_name: names.workers,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      max_deliver: -1,
      ack_wait: nanos(options.ackWaitMs),
      max_ack_pending: -1,
    };
    if (
      await jsm.consumers.info(names.stream, names.workers).then(
        () => true,
        () => false,
      )
    )
      await jsm.consumers.update(names.stream, names.workers, consumer);
    else await jsm.consumers.add(names.stream, consumer);
    return new NatsPageWork(nc, options);
  }

  async publish(items: readonly PageWorkItem[]): Promise<void> {
    const js = this.nc.jetstream();
    await Promise.all(
      items.map((item) =>
        js.publish(`${this.options.prefix}.audit-pages.${item.jobId}`, JSON.stringify(item), { timeout: 5_000 }),
      ),
    );
  }

  work(concurrency: number, handler: PageWorkHandler): void {
    for (let i = 0; i < concurrency; i++) this.loops.push(this.loop(handler));
  }

  async close(): Promise<void> {
    this.shutdown.abort(new Error('shutting down'));
    while (this.running > 0) await sleep(50);
    await this.nc.drain().catch(() => undefined);
    await Promise.allSettled(this.loops);
  }

  private async loop(handler: PageWorkHandler): Promise<void> {
    const closing = () => this.shutdown.signal.aborted;
    while (!closing()) {
      let msg: JsMsg | null;
      try {
        const consumer = await this.nc.jetstream().consumers.get(this.names.stream, this.names.workers);
        msg = await consumer.next({ expires: 5_000 });
      } catch (err) {
        if (closing()) break;
        this.options.log.debug({ err }, 'waiting for the audit page queue');
        await sleep(RETRY_MS);
        continue;
      }
      if (!msg) continue;
      if (closing()) {
        msg.nak();
        break;
      }
      let item: PageWorkItem;
      try {
        item = JSON.parse(new TextDecoder().decode(msg.data)) as PageWorkItem;
      } catch {
        msg.term('unreadable');
        continue;
      }
      const held = msg;
      this.running++;
      try {
        await handler(item, { keepAlive: () => held.working(), signal: this.shutdown.signal });
        held.ack();
      } catch (err) {
        if (!closing()) this.options.log.warn({ err, ...item }, 'audit page handed back for another try');
        held.nak(closing() ? undefined : RETRY_MS);
      } finally {
        this.running--;
      }
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
