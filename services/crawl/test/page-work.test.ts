import { createLogger } from '@webutil/kit';
import { removeStreams, SHARED_NATS_URL, uniquePrefix } from '@webutil/scripts/nats-under-test';
import { expect } from 'chai';
import { MemoryPageWork, type PageWorkItem, type PageWorkQueue } from '../src/site-audit/distributed/page-work.js';
import { NatsPageWork } from '../src/site-audit/distributed/page-work-nats.js';

const log = createLogger('test', 'silent');

async function until(check: () => boolean, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const items = (jobId: string, n: number): PageWorkItem[] =>
  Array.from({ length: n }, (_, i) => ({ jobId, url: `https://a.test/p${i}` }));

/** A handler that holds its item until the replica shuts down (a worker that stopped answering). */
const hang = (taken: PageWorkItem[]) => (item: PageWorkItem, lease: { signal: AbortSignal }) => {
  taken.push(item);
  return new Promise<void>((_, reject) => lease.signal.addEventListener('abort', () => reject(lease.signal.reason)));
};

describe('Audit page work items', function () {
  this.timeout(40_000);
  const open: PageWorkQueue[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((q) => q.close()));
  });

  it('in process: every item to a worker, at most `concurrency` at once, a failed one again', async () => {
    const q = new MemoryPageWork(log);
    open.push(q);
    const done: string[] = [];
    let running = 0;
    let most = 0;
    let failedOnce = false;
    q.work(3, async (item) => {
      running++;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, 5));
      running--;
      if (item.url.endsWith('p7') && !failedOnce) {
        failedOnce = true;
        throw new Error('lost the store for a moment');
      }
      done.push(item.url);
    });
    await q.publish(items('j', 20));
    await until(() => done.length === 20);
    expect(new Set(done).size).to.equal(20);
    expect(most).to.equal(3);
  });

  describe('on JetStream (real server)', () => {
    const prefix = uniquePrefix();
    const queue = async (ackWaitMs = 1_000) => {
      const q = await NatsPageWork.connect({ url: SHARED_NATS_URL, prefix, ackWaitMs, retentionMs: 60_000, log });
      open.push(q);
      return q;
    };
    after(async () => {
      await removeStreams(SHARED_NATS_URL, prefix);
    });

    it('spreads the items over two replicas, each item acked once', async () => {
      const [a, b] = [await queue(), await queue()];
      const byA: string[] = [];
      const byB: string[] = [];
      const slow = (into: string[]) => async (item: PageWorkItem) => {
        await new Promise((resolve) => setTimeout(resolve, 10));
        into.push(item.url);
      };
      a.work(2, slow(byA));
      b.work(2, slow(byB));
      await a.publish(items('j1', 60));
      await until(() => byA.length + byB.length === 60);
      expect(new Set([...byA, ...byB]).size).to.equal(60);
      expect(byA.length).to.be.above(0);
      expect(byB.length).to.be.above(0);
    });

    it("delivers a silent replica's items to another after the ack wait; a kept-alive item stays", async () => {
      const silent = await queue();
      const takenBySilent: PageWorkItem[] = [];
      silent.work(2, hang(takenBySilent));
      const alive = await queue();
      await alive.publish(items('j2', 2));
      await until(() => takenBySilent.length === 2);
      const rescued: string[] = [];
      alive.work(2, async (item, lease) => {
        // Longer than the ack wait, kept alive: not delivered again meanwhile.
        for (let i = 0; i < 6; i++) {
          lease.keepAlive();
          await new Promise((resolve) => setTimeout(resolve, 300));
        }
        rescued.push(item.url);
      });
      await until(() => rescued.length === 2);
      expect(rescued.sort()).to.deep.equal(takenBySilent.map((i) => i.url).sort());
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      expect(rescued).to.have.length(2);
    });
  });
});
