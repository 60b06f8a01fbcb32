import type { JobStore } from './store.js';
import type { CrawlEvent } from './transport.js';

/**
 * The recorder: one worker's event (run.ts) into the job store, where polls read it (read.ts).
 * Stale and late events are ignored by the store's guards, so any replica may record any event.
 */
export async function recordEvent(store: JobStore, event: CrawlEvent): Promise<void> {
  const update = { attempt: event.attempt, seq: event.seq, progress: event.progress };
  if (event.type === 'progress') await store.recordProgress(event.jobId, update);
  else if (event.type === 'done') await store.finish(event.jobId, { ...update, result: event.result });
  else await store.fail(event.jobId, event.error, update);
}
