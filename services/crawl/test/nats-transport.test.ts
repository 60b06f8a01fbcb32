import { randomUUID } from 'node:crypto';
import { createLogger } from '@webutil/kit';
import { removeStreams, SHARED_NATS_URL, uniquePrefix } from '@webutil/scripts/nats-under-test';
import { expect } from 'chai';
import { connect } from 'nats';
import { initialProgress } from '../src/jobs/events.js';
import { NatsTransport, natsResourceNames } from '../src/jobs/nats-transport.js';
import { packResult, unpackResult } from '../src/jobs/store.js';
import type { CrawlEvent, JobTicket, Lease } from '../src/jobs/transport.js';
import type { CrawlResult } from '../src/model.js';

const log = createLogger('test', 'silent');
const ticket = (): JobTicket => ({ id: randomUUID(), kind: 'broken-links', url: 'https://a.test/' });
const progress = initialProgress(250);

/** Waits until check() is true (polling), failing after `ms`. */
async function until(check: () => boolean, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('NATS transport (JetStream, real server)', function () {
  this.timeout(30_000);
  const prefix = uniquePrefix();
  const open: NatsTransport[] = [];
  const transport = async (ackWaitMs = 1_000) => {
    const t = await NatsTransport.connect({ url: SHARED_NATS_URL, prefix, ackWaitMs, retentionMs: 60_000, log });
    open.push(t);
    return t;
  };

  afterEach(async () => {
    await Promise.all(open.splice(0).map((t) => t.close()));
  });
  after(async () => {
    await removeStreams(SHARED_NATS_URL, prefix);
  });

  it('delivers a job to one worker, and every event (a result over 1 MB included) to the recorder', async () => {
    const t = await transport();
    const taken: [JobTicket, number][] = [];
    const recorded: CrawlEvent[] = [];
    const job = ticket();
    const links = Array.from({ length: 40_000 }, (_, i) => {
      const url = `https://a.test/${i}/${randomUUID()}`;
      return {
        url,
        originalHref: url,
        text: randomUUID(),
        rel: 'nofollow',
        type: 'internal' as const,
        scheme: 'https',
        element: 'a',
      };
    });
    const bigResult: CrawlResult = {
      kind: 'link-extract',
      result: {
        url: 'https://a.test/',
        scannedAt: new Date().toISOString(),
        totalLinks: links.length,
        truncated: false,
        counts: { total: links.length, internal: links.length, external: 0, mailto: 0, tel: 0 },
        links: links.map((l) => ({ ...l, sources: ['https://a.test/'], sourceCount: 1 })),
      },
    };
    t.record(async (event) => void recorded.push(event));
    t.work(2, async (tk, lease) => {
      taken.push([tk, lease.attempt]);
      await t.publish({ type: 'progress', jobId: tk.id, kind: tk.kind, attempt: lease.attempt, seq: 1, progress });
      await t.publish({
        type: 'done',
        jobId: tk.id,
        kind: tk.kind,
        attempt: lease.attempt,
        seq: 2,
        progress,
        result: packResult(bigResult),
      });
    });
    await t.enqueue(job);
    await until(() => recorded.length === 2);
    expect(taken).to.deep.equal([[job, 1]]);
    expect(recorded.map((e) => e.type)).to.deep.equal(['progress', 'done']);
    const done = recorded[1] as Extract<CrawlEvent, { type: 'done' }>;
    expect(done.result.length).to.be.above(1024 * 1024);
    expect(unpackResult(done.result)).to.deep.equal(bigResult);
  });

  it('carries a result that fits a message in the done event itself, not through the object store', async () => {
    const t = await transport();
    const recorded: CrawlEvent[] = [];
    const result: CrawlResult = {
      kind: 'link-extract',
      result: {
        url: 'https://a.test/',
        scannedAt: new Date().toISOString(),
        totalLinks: 0,
        truncated: false,
        counts: { total: 0, internal: 0, external: 0, mailto: 0, tel: 0 },
        links: [],
      },
    };
    const nc = await connect({ servers: SHARED_NATS_URL });
    try {
      const jsm = await nc.jetstreamManager();
      const objectsPut = async () =>
        (await jsm.streams.info(`OBJ_${natsResourceNames(prefix).resultsBucket}`)).state.last_seq;
      const before = await objectsPut();
      t.record(async (event) => void recorded.push(event));
      const job = ticket();
      const done = { type: 'done', jobId: job.id, kind: job.kind, attempt: 1, seq: 1, progress } as const;
      await t.publish({ ...done, result: packResult(result) });
      await until(() => recorded.length === 1);
      expect(unpackResult((recorded[0] as Extract<CrawlEvent, { type: 'done' }>).result)).to.deep.equal(result);
      expect(await objectsPut(), 'messages ever put in the results bucket').to.equal(before);
    } finally {
      await nc.close();
    }
  });

  it('hands a job whose worker went silent to another worker after the ack wait', async () => {
    const silent = await transport();
    const healthy = await transport();
    const job = ticket();
    const attempts: string[] = [];
    let release!: () => void;
    const stuck = new Promise<void>((resolve) => (release = resolve));
    // The first replica takes the job and then neither keeps it alive nor finishes: as if it died.
    silent.work(1, async (_tk, lease: Lease) => {
      attempts.push(`silent:${lease.attempt}`);
      await Promise.race([stuck, new Promise((resolve) => lease.signal.addEventListener('abort', resolve))]);
    });
    await silent.enqueue(job);
    await until(() => attempts.length === 1);
    healthy.work(1, async (_tk, lease) => void attempts.push(`healthy:${lease.attempt}`));
    await until(() => attempts.length === 2);
    expect(attempts).to.deep.equal(['silent:1', 'healthy:2']);
    release();
  });

  it('keeps a job with its worker while keep-alives flow, past the ack wait', async () => {
    const a = await transport();
    const b = await transport();
    const attempts: number[] = [];
    a.work(1, async (_tk, lease) => {
      attempts.push(lease.attempt);
      for (let i = 0; i < 10; i++) {
        lease.keepAlive();
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    });
    b.work(1, async (_tk, lease) => void attempts.push(lease.attempt));
    await a.enqueue(ticket());
    await until(() => attempts.length === 1);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(attempts).to.deep.equal([1]);
  });

  it('hands running jobs back at once on shutdown', async () => {
    const leaving = await transport(30_000);
    const staying = await transport(30_000);
    const attempts: string[] = [];
    leaving.work(1, async (_tk, lease) => {
      attempts.push(`leaving:${lease.attempt}`);
      await new Promise((_resolve, reject) =>
        lease.signal.addEventListener('abort', () => reject(lease.signal.reason)),
      );
    });
    await leaving.enqueue(ticket());
    await until(() => attempts.length === 1);
    staying.work(1, async (_tk, lease) => void attempts.push(`staying:${lease.attempt}`));
    await leaving.close();
    await until(() => attempts.length === 2, 5_000); // far sooner than the 30 s ack wait
    expect(attempts).to.deep.equal(['leaving:1', 'staying:2']);
  });
});
