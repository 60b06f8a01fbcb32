import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '@webutil/kit';
import type { KV, NatsConnection } from 'nats';
import type { HostConcurrencySettings } from '../../checking/host-concurrency.js';
import { HostNotAnsweringError, type Release, type RequestSlots } from '../../checking/throttle.js';
import { connectNats } from '../../jobs/nats-connection.js';
import {
  type BudgetAnswer,
  budgetRound,
  crawlDelayTurn,
  type HostBudget,
  type HostBudgetRecord,
} from './host-budget.js';

export interface NatsHostBudgetOptions {
  url: string;
  /** The crawl transport's prefix: the bucket is named after it. */
  prefix: string;
  settings: HostConcurrencySettings;
  /** How long a permit is held at most: a dead replica's permits come back after it. */
  permitMs: number;
  /** The process's own throttle, taken first: its bound on all requests at once still holds. */
  local: RequestSlots;
  log: Logger;
}

/** How often a replica with requests waiting reads the record again (another replica may have given permits back). */
const POLL_MS = 20;
/** A host's record unwritten this long is forgotten (its learned limit too), as the process's throttle forgets. */
const FORGET_MS = 10 * 60_000;

export function hostBudgetBucket(prefix: string): string {
  return `${prefix.replace(/[^A-Za-z0-9]/g, '_').toUpperCase()}_HOST_BUDGET`;
}

const hostKey = (host: string) => `h.${Buffer.from(host).toString('base64url')}`;
const delayKey = (origin: string) => `d.${Buffer.from(origin).toString('base64url')}`;

interface Waiter {
  grant: (release: Release) => void;
  reject: (reason: unknown) => void;
  signal: AbortSignal | undefined;
  /** The process's slot, held while waiting for the host's permit. */
  localRelease: Release;
  settled: boolean;
}

/** A host's requests on this replica: those waiting, the answers not yet written, the record last seen. */
interface HostQueue {
  key: string;
  waiters: Waiter[];
  answers: BudgetAnswer[];
  seen?: { record: HostBudgetRecord; revision: number };
  running: boolean;
  again: boolean;
  timer?: NodeJS.Timeout;
}

/**
 * The host budget in a NATS JetStream key-value bucket, one record per host changed by
 * compare-and-set (decision 0494): a replica's round writes its answers and takes the permits it
 * can in one update, retried on a conflict with the record read again.
 */
export class NatsHostBudget implements HostBudget {
  private readonly hosts = new Map<string, HostQueue>();
  private readonly replica = randomUUID().slice(0, 8);
  private permits = 0;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly kv: KV,
    private readonly options: NatsHostBudgetOptions,
  ) {}

  static async connect(options: NatsHostBudgetOptions): Promise<NatsHostBudget> {
    const nc = await connectNats(options.url, 'webutil-host-budget');
    const kv = await nc.jetstream().views.kv(hostBudgetBucket(options.prefix), { history: 1, ttl: FORGET_MS });
    return new NatsHostBudget(nc, kv, options);
  }

  async close(): Promise<void> {
    for (const queue of this.hosts.values()) clearTimeout(queue.timer);
    await this.nc.close().catch(() => undefined);
  }

  async acquire(host: string, signal?: AbortSignal): Promise<Release> {
    const localRelease = await this.options.local.acquire(host, signal);
    const q = this.queueOf(host);
    return new Promise<Release>((grant, reject) => {
      const onAbort = () => {
        if (waiter.settled) return;
        waiter.settled = true;
        q.waiters.splice(q.waiters.indexOf(waiter), 1);
        localRelease('neutral');
        reject(signal?.reason);
      };
      const waiter: Waiter = {
        grant: (release) => {
          signal?.removeEventListener('abort', onAbort);
          grant(release);
        },
        reject,
        signal,
        localRelease,
        settled: false,
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      q.waiters.push(waiter);
      void this.sync(host, q);
    });
  }

  private queueOf(host: string): HostQueue {
    let queue = this.hosts.get(host);
    if (!queue) {
      queue = { key: hostKey(host), waiters: [], answers: [], running: false, again: false };
      this.hosts.set(host, queue);
    }
    return queue;
  }

  /**
   * Resolves once the answers given so far (permits back, a Retry-After) are in the shared record: a
   * release returns at once and its write follows, so another replica reads it from then on.
   */
  async written(): Promise<void> {
    while ([...this.hosts.values()].some((q) => q.answers.length > 0)) await sleep(POLL_MS / 4);
  }

  async turn(origin: string, delayMs: number, signal: AbortSignal): Promise<void> {
    if (delayMs <= 0) return;
    const key = delayKey(origin);
    for (;;) {
      signal.throwIfAborted();
      const entry = await this.kv.get(key);
      const seen = entry && entry.operation === 'PUT' ? (entry.json() as { nextAt: number }) : undefined;
      const now = Date.now();
      const { at, nextAt } = crawlDelayTurn(seen?.nextAt, delayMs, now);
      const written = await this.write(key, JSON.stringify({ nextAt }), entry?.revision);
      if (written === undefined) continue; // another replica took a turn meanwhile
      if (at > now) await sleep(at - now, undefined, { signal });
      return;
    }
  }

  /** Rounds on the host's record until nothing is left to write or grant now; one at a time per host. */
  private async sync(host: string, q: HostQueue): Promise<void> {
    if (q.running) {
      q.again = true;
      return;
    }
    q.running = true;
    clearTimeout(q.timer);
    q.timer = undefined;
    let retryAt = Infinity;
    try {
      do {
        q.again = false;
        retryAt = await this.round(host, q);
      } while (q.again);
    } catch (err) {
      this.options.log.warn({ err, host }, 'host budget round failed');
      retryAt = Date.now() + POLL_MS;
    } finally {
      q.running = false;
    }
    if (q.waiters.length > 0 || q.answers.length > 0) {
      q.timer = setTimeout(
        () => {
          q.seen = undefined; // read afresh: other replicas may have given permits back
          void this.sync(host, q);
        },
        Math.max(0, Math.min(retryAt - Date.now(), POLL_MS)),
      );
      q.timer.unref();
    } else this.hosts.delete(host);
  }

  /** One compare-and-set on the host's record; returns when a waiting request may next be granted. */
  private async round(host: string, q: HostQueue): Promise<number> {
    for (;;) {
      const asking = [...q.waiters];
      const answers = [...q.answers];
      const seen = q.seen ?? (await this.read(q.key));
      const round = budgetRound({
        record: seen?.record,
        settings: this.options.settings,
        answers,
        wanted: asking.length,
        permitId: () => `${this.replica}.${(++this.permits).toString(36)}`,
        permitMs: this.options.permitMs,
        now: Date.now(),
      });
      if (round.changed) {
        const revision = await this.write(q.key, JSON.stringify(round.record), seen?.revision);
        if (revision === undefined) {
          q.seen = undefined;
          continue;
        }
        q.seen = { record: round.record, revision };
        q.answers.splice(0, answers.length);
      }
      for (const [i, { permit, sent }] of round.granted.entries()) {
        const waiter = asking[i] as Waiter;
        const release = this.releaser(host, permit, sent, waiter.localRelease);
        if (waiter.settled) {
          release('neutral'); // cancelled while the round ran: given back
          continue;
        }
        waiter.settled = true;
        q.waiters.splice(q.waiters.indexOf(waiter), 1);
        waiter.grant(release);
      }
      if (round.down)
        for (const waiter of q.waiters.splice(0)) {
          waiter.settled = true;
          waiter.localRelease('neutral');
          waiter.reject(new HostNotAnsweringError(host));
        }
      return round.retryAt;
    }
  }

  private releaser(host: string, permit: string, sent: BudgetAnswer['sent'], localRelease: Release): Release {
    let released = false;
    return (signal, retryAfterMs) => {
      if (released) return;
      released = true;
      localRelease(signal, retryAfterMs);
      const q = this.queueOf(host);
      q.answers.push({ permit, sent, signal, retryAfterMs });
      void this.sync(host, q);
    };
  }

  private async read(key: string): Promise<{ record: HostBudgetRecord; revision: number } | undefined> {
    const entry = await this.kv.get(key);
    if (entry?.operation !== 'PUT') return undefined;
    return { record: entry.json() as HostBudgetRecord, revision: entry.revision };
  }

  /** Writes `value` if the key is still at `revision` (absent when undefined); undefined on a conflict. */
  private async write(key: string, value: string, revision: number | undefined): Promise<number | undefined> {
    try {
      return revision === undefined ? await this.kv.create(key, value) : await this.kv.update(key, value, revision);
    } catch (err) {
      // JetStream's "wrong last sequence": another replica wrote first.
      if ((err as { api_error?: { err_code?: number } }).api_error?.err_code === 10071) return undefined;
      throw err;
    }
  }
}
