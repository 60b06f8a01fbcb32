import type { Logger } from '@webutil/kit';
import {
  AckPolicy,
  type ConsumerConfig,
  type ConsumerMessages,
  DeliverPolicy,
  Events,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type NatsConnection,
  nanos,
  type ObjectStore,
  RetentionPolicy,
  StorageType,
  type StreamConfig,
} from 'nats';
import { connectNats } from './nats-connection.js';
import { asPacked } from './store.js';
import {
  type CrawlEvent,
  type CrawlTransport,
  type EventHandler,
  eventSubject,
  type JobHandler,
  type JobTicket,
  LATER_MS,
} from './transport.js';

export interface NatsTransportOptions {
  url: string;
  /** First subject token; stream, consumer and bucket names derive from it, so stacks can share a server. */
  prefix: string;
  /** A job not kept alive for this long goes to another worker (the replica is presumed dead). */
  ackWaitMs: number;
  /** How long queued jobs, events and results are kept (the job retention). */
  retentionMs: number;
  log: Logger;
}

/** Names of the JetStream resources for a prefix (tests use them to clean up). */
export function natsResourceNames(prefix: string) {
  const base = prefix.replace(/[^A-Za-z0-9]/g, '_').toUpperCase();
  return {
    jobsStream: `${base}_CRAWL_JOBS`,
    eventsStream: `${base}_CRAWL_EVENTS`,
    resultsBucket: `${base.toLowerCase()}_crawl_results`,
    workers: 'crawl-workers',
    recorder: 'crawl-recorder',
  };
}

/**
 * A done event on the wire: the packed result in the message (base64) when it fits NATS'
 * max_payload, in the object store otherwise (a result can exceed it; the store costs several
 * round trips more each way, so only big results pay for it).
 */
type WireEvent =
  | Exclude<CrawlEvent, { type: 'done' }>
  | (Omit<Extract<CrawlEvent, { type: 'done' }>, 'result'> & ({ result: string } | { resultObject: string }));

/** Room left in a message for the rest of a done event (progress, ids) beside an inline result. */
const ENVELOPE_BYTES = 64 * 1024;

const RETRY_PAUSE_MS = 1_000;

/**
 * How long a start waits for JetStream to take its job: a healthy server acks in milliseconds, and
 * the caller of a start that cannot be queued is answered 503 at once rather than after the
 * client's default 5 s (docs/decisions/0251-queue-outages-answered-at-once.md).
 */
export const ENQUEUE_TIMEOUT_MS = 1_000;

/**
 * Jobs on a JetStream work queue with one durable pull consumer shared by every crawl replica:
 * a job whose worker stops sending keep-alives is delivered again after the ack wait, so a crawl
 * started on a replica that died is picked up by another. Events go on a second work-queue stream
 * that the job recorder (every replica, one durable consumer) drains into the job store.
 */
export class NatsTransport implements CrawlTransport {
  private readonly names: ReturnType<typeof natsResourceNames>;
  private readonly shutdown = new AbortController();
  private readonly loops: Promise<void>[] = [];
  /** Jobs this process runs, with their latest delivery (a redelivery replaces it). */
  private readonly running = new Map<string, { msg: JsMsg }>();
  private recorderMessages: ConsumerMessages | undefined;
  /** False from a disconnect until the client is connected again: a start then fails at once. */
  private connected = true;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly results: ObjectStore,
    private readonly options: NatsTransportOptions,
  ) {
    this.names = natsResourceNames(options.prefix);
    void this.watchConnection();
  }

  private async watchConnection(): Promise<void> {
    for await (const s of this.nc.status()) {
      if (s.type === Events.Disconnect) this.connected = false;
      else if (s.type === Events.Reconnect) this.connected = true;
    }
  }

  static async connect(options: NatsTransportOptions): Promise<NatsTransport> {
    if (!/^[A-Za-z0-9_-]{1,32}$/.test(options.prefix))
      throw new Error(`CRAWL_NATS_PREFIX must be 1-32 letters, digits, _ or -: ${options.prefix}`);
    const nc = await connectNats(options.url, 'webutil-crawl');
    const names = natsResourceNames(options.prefix);
    const jsm = await nc.jetstreamManager();
    const common = {
      retention: RetentionPolicy.Workqueue,
      storage: StorageType.File,
      max_age: nanos(options.retentionMs),
    };
    await ensureStream(jsm, {
      ...common,
      name: names.jobsStream,
      subjects: [`${options.prefix}.crawl-jobs.>`],
      duplicate_window: nanos(Math.min(120_000, options.retentionMs)),
    });
    await ensureStream(jsm, { ...common, name: names.eventsStream, subjects: [`${options.prefix}.crawl.*.*.*`] });
    const consumer = { ack_policy: AckPolicy.Explicit, deliver_policy: DeliverPolicy.All, max_deliver: -1 };
    await ensureConsumer(jsm, names.jobsStream, {
      ...consumer,
      durable_name: names.workers,
      ack_wait: nanos(options.ackWaitMs),
    });
    await ensureConsumer(jsm, names.eventsStream, {
      ...consumer,
      durable_name: names.recorder,
      ack_wait: nanos(30_000),
    });
    const js = nc.jetstream();
    const results = await js.views.os(names.resultsBucket, {
      storage: StorageType.File,
      ttl: nanos(options.retentionMs),
    });
    return new NatsTransport(nc, js, results, options);
  }

  async enqueue(ticket: JobTicket): Promise<void> {
    if (!this.connected || this.nc.isClosed()) throw new Error('NATS is not connected');
    await this.js.publish(`${this.options.prefix}.crawl-jobs.${ticket.kind}`, JSON.stringify(ticket), {
      msgID: ticket.id,
      timeout: ENQUEUE_TIMEOUT_MS,
    });
  }

  async publish(event: CrawlEvent): Promise<void> {
    let wire: WireEvent;
    if (event.type === 'done') {
      const { result, ...rest } = event;
      const maxPayload = this.nc.info?.max_payload ?? 1024 * 1024;
      if (Math.ceil(result.length / 3) * 4 + ENVELOPE_BYTES <= maxPayload)
        wire = { ...rest, result: result.toString('base64') };
      else {
        const name = `${event.jobId}-${event.attempt}`;
        await this.results.putBlob({ name }, result);
        wire = { ...rest, resultObject: name };
      }
    } else wire = event;
    const msgID = event.type === 'progress' ? undefined : `${event.jobId}-${event.type}-${event.attempt}`;
    await this.js.publish(eventSubject(this.options.prefix, event), JSON.stringify(wire), { msgID, timeout: 5_000 });
  }

  work(concurrency: number, handler: JobHandler): void {
    for (let i = 0; i < concurrency; i++) this.loops.push(this.workLoop(handler));
  }

  record(handler: EventHandler): void {
    this.loops.push(this.recordLoop(handler));
  }

  async close(): Promise<void> {
    this.shutdown.abort(new Error('shutting down'));
    await this.recorderMessages?.close();
    // Running jobs see the abort and hand their delivery back (nak) before the connection drains.
    while (this.running.size > 0) await sleep(50);
    await this.nc.drain().catch(() => undefined);
    await Promise.allSettled(this.loops);
  }

  private get closing(): boolean {
    return this.shutdown.signal.aborted;
  }

  private async workLoop(handler: JobHandler): Promise<void> {
    while (!this.closing) {
      let msg: JsMsg | null;
      try {
        const consumer = await this.js.consumers.get(this.names.jobsStream, this.names.workers);
        msg = await consumer.next({ expires: 5_000 });
      } catch (err) {
        if (this.closing) break;
        this.options.log.debug({ err }, 'waiting for the job queue');
        await sleep(RETRY_PAUSE_MS);
        continue;
      }
      if (!msg) continue;
      if (this.closing) {
        msg.nak();
        break;
      }
      await this.runDelivery(msg, handler);
    }
  }

  private async runDelivery(msg: JsMsg, handler: JobHandler): Promise<void> {
    const ticket = readOrDrop<JobTicket>(msg);
    if (!ticket) return;
    const current = this.running.get(ticket.id);
    if (current) {
      // Redelivered (our keep-alives were lost, e.g. while NATS restarted) but still running here.
      current.msg = msg;
      return;
    }
    const delivery = { msg };
    this.running.set(ticket.id, delivery);
    const lease = {
      attempt: (ticket.priorAttempts ?? 0) + msg.info.deliveryCount,
      keepAlive: () => delivery.msg.working(),
      signal: this.shutdown.signal,
    };
    try {
      if ((await handler(ticket, lease)) === 'later') delivery.msg.nak(LATER_MS);
      else delivery.msg.ack();
    } catch (err) {
      if (!this.closing) this.options.log.warn({ err, jobId: ticket.id }, 'crawl job handed back for another try');
      delivery.msg.nak(this.closing ? undefined : 5_000);
    } finally {
      this.running.delete(ticket.id);
    }
  }

  private async recordLoop(handler: EventHandler): Promise<void> {
    while (!this.closing) {
      try {
        const consumer = await this.js.consumers.get(this.names.eventsStream, this.names.recorder);
        this.recorderMessages = await consumer.consume({ max_messages: 256 });
        for await (const msg of this.recorderMessages) await this.recordOne(msg, handler);
      } catch (err) {
        if (this.closing) break;
        this.options.log.debug({ err }, 'event recorder waiting for NATS');
      }
      if (!this.closing) await sleep(RETRY_PAUSE_MS);
    }
  }

  private async recordOne(msg: JsMsg, handler: EventHandler): Promise<void> {
    const wire = readOrDrop<WireEvent>(msg);
    if (!wire) return;
    try {
      if (wire.type === 'done' && 'result' in wire)
        await handler({ ...wire, result: asPacked(Buffer.from(wire.result, 'base64')) });
      else if (wire.type === 'done') {
        const { resultObject, ...rest } = wire;
        const packed = await this.results.getBlob(resultObject);
        if (!packed) {
          msg.ack(); // recorded by an earlier delivery of this event
          return;
        }
        await handler({ ...rest, result: asPacked(packed) });
        await this.results.delete(resultObject);
      } else await handler(wire);
      msg.ack();
    } catch (err) {
      this.options.log.warn({ err, subject: msg.subject }, 'could not record a crawl event; retrying');
      msg.nak(RETRY_PAUSE_MS);
    }
  }
}

/** A message's JSON, or undefined after dropping a message nobody could ever read (no redelivery). */
function readOrDrop<T>(msg: JsMsg): T | undefined {
  try {
    return JSON.parse(new TextDecoder().decode(msg.data)) as T;
  } catch {
    msg.term('unreadable');
    return undefined;
  }
}

/** Creates the stream, or brings an existing one (an older configuration) up to this one. */
async function ensureStream(jsm: JetStreamManager, config: Partial<StreamConfig> & { name: string }): Promise<void> {
  const exists = await jsm.streams.info(config.name).then(
    () => true,
    () => false,
  );
  if (exists) await jsm.streams.update(config.name, config);
  else await jsm.streams.add(config);
}

async function ensureConsumer(
  jsm: JetStreamManager,
  stream: string,
  config: Partial<ConsumerConfig> & { durable_name: string },
): Promise<void> {
  const exists = await jsm.consumers.info(stream, config.durable_name).then(
    () => true,
    () => false,
  );
  if (exists) await jsm.consumers.update(stream, config.durable_name, config);
  else await jsm.consumers.add(stream, config);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
