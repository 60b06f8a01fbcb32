import { connect } from 'nats';
import { natsResourceNames } from '../src/nats-transport.js';

/** A prefix no other test run uses, so parallel runs never see each other's jobs. */
export function uniquePrefix(): string {
  return `t${process.pid}x${Math.random().toString(36).slice(2, 8)}`;
}

/** Deletes the streams (and so the consumers and the result bucket) a prefix created. */
export async function removeCrawlStreams(url: string, prefix: string): Promise<void> {
  const names = natsResourceNames(prefix);
  const nc = await connect({ servers: url });
  try {
    const jsm = await nc.jetstreamManager();
    for (const stream of [names.jobsStream, names.eventsStream, `OBJ_${names.resultsBucket}`]) {
      await jsm.streams.delete(stream).catch(() => false);
    }
  } finally {
    await nc.close();
  }
}
