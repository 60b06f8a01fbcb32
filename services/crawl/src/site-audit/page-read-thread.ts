/**
 * A page-read thread (page-read-threads.ts): reads each page body it is given for the audit's
 * links, targets and facts, and answers with them, one message a page. Pages are read one at a
 * time, in the order they came: the thread holds one page's parse at most.
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
parentPort?.on('message', (task: PageReadTask) => {
  reading = reading.then(() => read(task)).then((answer) => parentPort?.postMessage(answer));
});
