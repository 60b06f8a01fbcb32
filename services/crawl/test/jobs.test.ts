import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AddressPolicy, createLogger, SafeHttp } from '@webutil/kit';
import { expect } from 'chai';
import { HostThrottle } from '../src/checking/throttle.js';
import { CrawlJobs } from '../src/jobs/jobs.js';
import { MemoryTransport } from '../src/jobs/memory-transport.js';
import type { NewJob } from '../src/jobs/store.js';
import { SqliteJobStore } from '../src/jobs/store-sqlite.js';
import type { JobTicket } from '../src/jobs/transport.js';
import { readCrawlSettings } from '../src/settings.js';

/** A store that lets the test act at the moment a job is written (the caller leaving just then). */
class ObservedStore extends SqliteJobStore {
  onCreate: ((job: NewJob) => void) | undefined;
  override async create(job: NewJob): Promise<void> {
    await super.create(job);
    this.onCreate?.(job);
  }
}

describe('crawl start and cancellation', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'crawl-jobs-'));
  const log = createLogger('test', 'silent');
  const settings = readCrawlSettings({ DATA_DIR: dir, WEBUTIL_ALLOW_TARGETS: '127.0.0.0/8' });
  const policy = new AddressPolicy(settings.allowTargets);
  const http = new SafeHttp({ policy });
  const store = new ObservedStore(path.join(dir, 'jobs.sqlite'));
  const transport = new MemoryTransport(log);
  const taken: JobTicket[] = [];
  const jobs = new CrawlJobs({
    store,
    transport,
    crawl: {
      http,
      throttle: new HostThrottle({
        globalLimit: 8,
        initialPerHost: 4,
        maxPerHost: 8,
        slowMs: 1_000,
        timeoutsToGiveUp: 3,
        downForMs: 60_000,
      }),
      ...settings.fetch,
      limits: settings.crawl,
    },
    policy,
    log,
    options: settings.jobs,
  });
  transport.work(1, async (ticket) => void taken.push(ticket));

  after(async () => {
    await transport.close();
    await store.close();
    await http.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates and queues a job for a caller that stays', async () => {
    const id = await jobs.start('link-extract', 'http://127.0.0.1:9/', new AbortController().signal);
    expect((await store.get(id))?.status).to.equal('crawling');
    expect(taken.map((t) => t.id)).to.include(id);
  });

  it('does nothing for a caller that left before the start', async () => {
    const left = new AbortController();
    left.abort(new Error('gone'));
    const before = taken.length;
    await jobs.start('link-extract', 'http://127.0.0.1:9/', left.signal).then(
      () => expect.fail('started'),
      (err: Error) => expect(err.message).to.equal('gone'),
    );
    expect(await store.crawling()).to.have.length(1); // only the job of the caller that stayed
    expect(taken.length).to.equal(before);
  });

  it('withdraws the job of a caller that leaves while it is being created: failed, never queued', async () => {
    const leaving = new AbortController();
    let created = '';
    store.onCreate = (job) => {
      created = job.id;
      leaving.abort(new Error('gone'));
    };
    const before = taken.length;
    const failure = await jobs.start('broken-links', 'http://127.0.0.1:9/', leaving.signal).catch((err: Error) => err);
    store.onCreate = undefined;
    expect(failure).to.be.instanceOf(Error);
    const job = await store.get(created);
    expect(job?.status).to.equal('failed');
    expect(job?.error?.code).to.equal('cancelled');
    expect(taken.length).to.equal(before);
  });
});
