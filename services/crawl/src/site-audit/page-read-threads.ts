import type { Worker } from 'node:worker_threads';
import { moduleWorker, type SafeResponse } from '@webutil/kit';
import { PageTargets } from '../page/fragments.js';
import { type PageRead, type PageReadOptions, type ReadableResponse, readAuditPage } from './page-read.js';
import type { PageReadAnswer, PageReadTask } from './page-read-thread.js';

/**
 * A body up to this size is read on a thread, whole; a longer one (rare) is parsed here as it
 * streams, so that no large body is held whole while it waits for a thread.
 */
const WHOLE_BODY_BYTES = 256 * 1024;
/** A thread's heap ceiling: it reads one page at a time, of WHOLE_BODY_BYTES at most. */
const THREAD_HEAP_MB = 32;
/** A thread with no read for this long is ended, returning its memory; the next read starts another. */
const IDLE_MS = 1_000;

const startThread = moduleWorker(import.meta.url, 'page-read-thread');

/** The thread died before it answered (out of memory, killed): the page itself is not at fault. */
class ThreadGone extends Error {}

interface Waiting {
  resolve: (page: PageRead) => void;
  reject: (err: Error) => void;
}

/** One thread and the reads it owes. */
class ReadThread {
  private readonly waiting = new Map<number, Waiting>();
  private readonly worker: Worker;
  private idle: NodeJS.Timeout | undefined;
  /** Reads asked for in this turn of the event loop, posted together at its end (one wake-up of the thread). */
  private outbox: PageReadTask[] = [];

  constructor(onGone: (thread: ReadThread) => void) {
    this.worker = startThread({
      resourceLimits: { maxOldGenerationSizeMb: THREAD_HEAP_MB, maxYoungGenerationSizeMb: 4 },
    });
    // A thread owing no read never keeps the process up.
    this.worker.unref();
    this.worker.on('message', (answers: PageReadAnswer[]) => {
      for (const answer of answers) this.answered(answer);
    });
    const gone = (why: string) => {
      clearTimeout(this.idle);
      onGone(this);
      for (const waiting of this.waiting.values()) waiting.reject(new ThreadGone(`page-read thread ${why}`));
      this.waiting.clear();
    };
    this.worker.once('error', (err) => gone(`failed: ${err.message}`));
    this.worker.once('exit', (code) => gone(`exited (${code})`));
  }

  read(task: PageReadTask): Promise<PageRead> {
    return new Promise((resolve, reject) => {
      clearTimeout(this.idle);
      this.waiting.set(task.id, { resolve, reject });
      this.worker.ref();
      this.outbox.push(task);
      if (this.outbox.length === 1)
        setImmediate(() => {
          const tasks = this.outbox;
          this.outbox = [];
          this.worker.postMessage(tasks);
        });
    });
  }

  terminate(): Promise<number> {
    return this.worker.terminate();
  }

  private answered(answer: PageReadAnswer): void {
    const waiting = this.waiting.get(answer.id);
    if (!waiting) return;
    this.waiting.delete(answer.id);
    if (this.waiting.size === 0) {
      this.worker.unref();
      this.idle = setTimeout(() => void this.worker.terminate(), IDLE_MS);
      this.idle.unref();
    }
    if (answer.page) waiting.resolve({ ...answer.page, targets: PageTargets.fromStored(answer.page.targets) });
    else waiting.reject(new Error(answer.failure ?? 'the page could not be read'));
  }
}

/**
 * Where a replica's audit pages are parsed (docs/decisions/0501-page-reads-on-threads.md): on
 * `threads` threads beside the event loop, which then keeps to fetching, the store and the
 * frontier; with none, on the event loop as the body streams. A thread is started at its first
 * read and ended once idle; a page whose thread died is read here instead.
 */
export class PageReadThreads {
  private readonly threads: (ReadThread | undefined)[];
  private nextId = 0;
  private turn = 0;

  constructor(threads: number) {
    this.threads = new Array<ReadThread | undefined>(threads).fill(undefined);
  }

  async read(res: SafeResponse, options: PageReadOptions): Promise<PageRead> {
    if (this.threads.length === 0) return readAuditPage(res, options);
    const iterator = res.body[Symbol.asyncIterator]();
    const chunks: Buffer[] = [];
    let bytes = 0;
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      chunks.push(next.value);
      bytes += next.value.length;
      if (bytes > WHOLE_BODY_BYTES) return readAuditPage(continued(res, chunks, iterator), options);
    }
    // A buffer of its own (Buffer.concat may hand out a slice of a shared pool, all of which a message would copy).
    const body = Buffer.from(new ArrayBuffer(bytes));
    let at = 0;
    for (const chunk of chunks) at += chunk.copy(body, at);
    const { url, headers, timeToHeadersMs } = res;
    try {
      return await this.thread().read({ id: this.nextId++, url, headers, timeToHeadersMs, body, options });
    } catch (err) {
      if (!(err instanceof ThreadGone)) throw err;
      return readAuditPage(continued(res, [body], undefined), options);
    }
  }

  /** Threads running now (tests read it). */
  get running(): number {
    return this.threads.filter((thread) => thread !== undefined).length;
  }

  async close(): Promise<void> {
    const running = this.threads.filter((thread) => thread !== undefined);
    this.threads.fill(undefined);
    await Promise.all(running.map((thread) => thread.terminate()));
  }

  /** The threads in turn, each started when first needed (again, once it ended). */
  private thread(): ReadThread {
    const index = this.turn++ % this.threads.length;
    let thread = this.threads[index];
    if (!thread) {
      thread = new ReadThread((gone) => {
        if (this.threads[index] === gone) this.threads[index] = undefined;
      });
      this.threads[index] = thread;
    }
    return thread;
  }
}

/** The response with its body given again: `chunks` already read, then the rest of it. */
function continued(res: SafeResponse, chunks: Buffer[], rest: AsyncIterator<Buffer> | undefined): ReadableResponse {
  return {
    url: res.url,
    headers: res.headers,
    timeToHeadersMs: res.timeToHeadersMs,
    body: (async function* () {
      yield* chunks;
      if (rest) for (let next = await rest.next(); !next.done; next = await rest.next()) yield next.value;
    })(),
    dump: () => res.dump(),
  };
}
