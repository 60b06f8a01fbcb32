import type { Logger } from '@webutil/kit';
import { AckPolicy, DeliverPolicy, type JsMsg, type NatsConnection, nanos, RetentionPolicy, StorageType } from 'nats';
import { connectNats } from '../../jobs/nats-connection.js';
import { type PageWorkHandler, type PageWorkItem, type PageWorkQueue, RETRY_MS } from './page-work.js';

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
    const nc = await connectNats(options.url, 'webutil-audit-pages');
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
