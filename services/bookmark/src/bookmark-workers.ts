import { invalidArgument, moduleWorker, ServiceError } from '@webutil/kit';
import pLimit from 'p-limit';
import type { BookmarkResults, BookmarkTask } from './bookmark-work.js';

export interface BookmarkWorkerLimits {
  /** Tasks at once; more wait their turn (each is one file's work). */
  concurrency: number;
  /** The thread's V8 heap ceiling (old generation), MB. */
  heapMb: number;
  /** Longest one task may run. */
  timeoutMs: number;
}

const startWorker = moduleWorker(import.meta.url, 'bookmark-worker');

const tooComplex = (why: string) =>
  invalidArgument('FILE_TOO_COMPLEX', `the file ${why}; a bookmark file of up to 10 MB of any ordinary shape fits`);

/**
 * Runs bookmark work off the event loop (docs/decisions/0292-bookmark-bounds.md): each task in a
 * fresh worker thread with a heap ceiling and a time limit, a bounded number at once, so one
 * hostile file costs the service a bounded amount of memory and never stalls its other calls.
 * The thread is ended after its task (or when the caller goes away), returning its memory.
 */
export class BookmarkWorkers {
  private readonly limit: ReturnType<typeof pLimit>;

  constructor(private readonly limits: BookmarkWorkerLimits) {
    this.limit = pLimit(limits.concurrency);
  }

  run<K extends BookmarkTask['kind']>(
    task: Extract<BookmarkTask, { kind: K }>,
    signal: AbortSignal,
  ): Promise<BookmarkResults[K]> {
    return this.limit(() => this.once(task, signal)) as Promise<BookmarkResults[K]>;
  }

  private once(task: BookmarkTask, signal: AbortSignal): Promise<unknown> {
    signal.throwIfAborted();
    const worker = startWorker({
      resourceLimits: { maxOldGenerationSizeMb: this.limits.heapMb, maxYoungGenerationSizeMb: 16 },
    });
    return new Promise((resolve, reject) => {
      let settled = false;
      const settle = (fn: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        void worker.terminate();
        fn();
      };
      const timer = setTimeout(
        () => settle(() => reject(tooComplex(`takes longer than ${this.limits.timeoutMs / 1000} s to read`))),
        this.limits.timeoutMs,
      );
      const onAbort = () => settle(() => reject(signal.reason));
      signal.addEventListener('abort', onAbort, { once: true });
      worker.once(
        'message',
        (message: { result?: unknown; failure?: { code?: number; reason?: string; message: string } }) =>
          settle(() => {
            const { failure } = message;
            if (!failure) resolve(message.result);
            else if (failure.code !== undefined && failure.reason)
              reject(new ServiceError(failure.code, failure.reason, failure.message));
            else reject(new Error(failure.message));
          }),
      );
      worker.once('error', (err: Error & { code?: string }) =>
        settle(() =>
          reject(
            err.code === 'ERR_WORKER_OUT_OF_MEMORY'
              ? tooComplex(`needs more than ${this.limits.heapMb} MB to read`)
              : err,
          ),
        ),
      );
      worker.once('exit', (code) =>
        settle(() => reject(new Error(`bookmark worker exited (${code}) before answering`))),
      );
      // The file in a buffer of its own, handed to the thread rather than copied again.
      const file = new Uint8Array(task.file);
      worker.postMessage({ ...task, file }, [file.buffer]);
    });
  }
}
