import { parentPort } from 'node:worker_threads';
import { ServiceError } from '@webutil/kit';
import { type BookmarkTask, runBookmarkTask } from './bookmark-work.js';

/**
 * A worker thread's entry: runs the one task it is sent and posts its result (large bytes
 * transferred, not copied) or its failure; bookmark-workers.ts ends the thread after.
 */
parentPort?.once('message', async (task: BookmarkTask) => {
  try {
    const result = await runBookmarkTask(task);
    const body = 'body' in result ? result.body : undefined;
    const whole = body && body.byteOffset === 0 && body.byteLength === body.buffer.byteLength;
    parentPort?.postMessage({ result }, whole ? [body.buffer as ArrayBuffer] : []);
  } catch (err) {
    parentPort?.postMessage({
      failure:
        err instanceof ServiceError
          ? { code: err.code, reason: err.reason, message: err.message }
          : { message: err instanceof Error ? err.message : String(err) },
    });
  }
});
