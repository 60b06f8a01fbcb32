/**
 * A page-read thread (page-read-threads.ts): reads each page body it is given for the audit's
 * links, targets and facts, and answers with them. Pages are read one at a time, in the order
 * they came: the thread holds one page's parse at most.
 */
import { parentPort } from 'node:worker_threads';
import type { SafeResponse } from '@webutil/kit';
import { type PageReadMessage, type PageReadOptions, readAuditPage } from './page-read.js';

export interface PageReadTask {
  id: number;
  url: string;
  headers: SafeResponse['headers'];
  timeToHeadersMs: number;
  body: Uint8Array;
  options: PageReadOptions;
}

export interface PageReadAnswer {
  id: number;
  page?: PageReadMessage;
  failure?: string;
}

async function read(task: PageReadTask): Promise<PageReadAnswer> {
  const body = Buffer.from(task.body.buffer, task.body.byteOffset, task.body.byteLength);
  try {
    const page = await readAuditPage(
      {
        url: task.url,
        headers: task.headers,
        timeToHeadersMs: task.timeToHeadersMs,
        body: (async function* () {
          yield body;
        })(),
        dump: async () => undefined,
      },
      task.options,
    );
    return { id: task.id, page: { ...page, targets: page.targets.toStored() } };
  } catch (err) {
    return { id: task.id, failure: err instanceof Error ? err.message : String(err) };
  }
}

let reading = Promise.resolve();
/** Answers made in this turn, posted together at its end (one wake-up of the event loop that waits for them). */
let outbox: PageReadAnswer[] = [];

function answer(done: PageReadAnswer): void {
  outbox.push(done);
  if (outbox.length === 1)
    setImmediate(() => {
      const answers = outbox;
      outbox = [];
      parentPort?.postMessage(answers);
    });
}

parentPort?.on('message', (tasks: PageReadTask[]) => {
  for (const task of tasks) reading = reading.then(() => read(task)).then(answer);
});
