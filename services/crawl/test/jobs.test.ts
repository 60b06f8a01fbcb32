import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AddressPolicy, createLogger, lookupVia, ServiceError } from '@webutil/kit';
import { type FixtureDns, startFixtureDns } from '@webutil/scripts/fixture-dns';
import { expect } from 'chai';
import { readConfig } from '../src/config.js';
import { MemoryTransport } from '../src/jobs/memory-transport.js';
import { CrawlStarts, crawlsPerCaller } from '../src/jobs/start.js';
import type { NewJob } from '../src/jobs/store.js';
import { SqliteJobStore } from '../src/jobs/store-sqlite.js';
import type { JobTicket } from '../src/jobs/transport.js';

/** A store that lets the test act at the moment a job is written (the caller leaving just then). */
class ObservedStore extends SqliteJobStore {
  onCreate: ((job: NewJob) => void) | undefined;
  override async create(job: NewJob, perCaller?: number): Promise<boolean> {
    const created = await super.create(job, perCaller);
    if (created) this.onCreate?.(job);
    return created;
  }
}

describe('crawl start and cancellation', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'crawl-jobs-'));
  const log = createLogger('test', 'silent');
  const settings = readConfig({ DATA_DIR: dir, WEBUTIL_ALLOW_TARGETS: '127.0.0.0/8' });
  const policy = new AddressPolicy(settings.WEBUTIL_ALLOW_TARGETS);
  const store = new ObservedStore(path.join(dir, 'jobs.sqlite'));
  const transport = new MemoryTransport(log);
  const taken: JobTicket[] = [];
  let dns: FixtureDns;
  let jobs: CrawlStarts;
  const stays = () => new AbortController().signal;
  let requests = 0;
  const requestId = () => `start-${++requests}`;

  before(async () => {
    dns = await startFixtureDns();
    jobs = new CrawlStarts({
      store,
      transport,
      policy,
      lookup: lookupVia([dns.server]),
      pagesCap: settings.crawl.pages,
      retentionMs: settings.jobs.retentionMs,
      log,
    });
  });
  transport.work(1, async (ticket) => void taken.push(ticket));

  after(async () => {
    await dns.close();
    await transport.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates and queues a job for a caller that stays', async () => {
    const id = await jobs.start('link-extract', 'http://127.0.0.1:9/', requestId(), stays());
    expect((await store.get(id))?.status).to.equal('crawling');
    expect(taken.map((t) => t.id)).to.include(id);
  });

  it('does nothing for a caller that left before the start', async () => {
    const left = new AbortController();
    left.abort(new Error('gone'));
    const before = taken.length;
    await jobs.start('link-extract', 'http://127.0.0.1:9/', requestId(), left.signal).then(
      () => expect.fail('started'),
      (err: Error) => expect(err.message).to.equal('gone'),
    );
    expect(await store.crawling()).to.have.length(1); // only the job of the caller that stayed
    expect(taken.length).to.equal(before);
  });

  it('withdraws the job of a caller that leaves while it is being created: failed, never queued', async () => {
    const id = requestId();
    let created = '';
    store.onCreate = (job) => {
      created = job.id;
      expect(jobs.withdraw(id)).to.equal(true);
    };
    const before = taken.length;
    const failure = await jobs.start('broken-links', 'http://127.0.0.1:9/', id, stays()).catch((err: Error) => err);
    store.onCreate = undefined;
    expect(failure).to.include({ reason: 'WITHDRAWN' });
    const job = await store.get(created);
    expect(job?.status).to.equal('failed');
    expect(job?.error?.code).to.equal('cancelled');
    expect(taken.length).to.equal(before);
  });

  it('stops a start withdrawn while its host is being resolved: no job, at once', async () => {
    dns.set('slow.example.test', ['127.0.0.1'], { delayMs: 3_000 });
    const id = requestId();
    const before = (await store.crawling()).length;
    const started = Date.now();
    const starting = jobs.start('link-extract', 'http://slow.example.test/', id, stays()).catch((err: Error) => err);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(jobs.withdraw(id)).to.equal(true);
    expect(await starting).to.include({ reason: 'WITHDRAWN' });
    // Liveness: far less than the resolver's 3 s.
    expect(Date.now() - started).to.be.below(2_000);
    expect((await store.crawling()).length).to.equal(before);
    expect(jobs.withdraw(id), 'nothing under way any more').to.equal(false);
  });

  it('lets a job stand once queued: a withdrawal after that finds nothing to stop', async () => {
    const id = requestId();
    const jobId = await jobs.start('link-extract', 'http://127.0.0.1:9/', id, stays());
    expect(jobs.withdraw(id)).to.equal(false);
    expect((await store.get(jobId))?.status).to.equal('crawling');
  });

  it('refuses a caller past its plan’s bound of crawls queued or running (both kinds): nothing stored', async () => {
    const caller = { key: 'account:starter-1', plan: 'STARTER' };
    const bound = crawlsPerCaller('STARTER');
    for (let i = 0; i < bound; i++)
      await jobs.start(i % 2 ? 'link-extract' : 'broken-links', 'http://127.0.0.1:9/', requestId(), stays(), caller);
    const queued = taken.length;
    const stored = (await store.crawling()).length;
    const refusal = await jobs
      .start('broken-links', 'http://127.0.0.1:9/', requestId(), stays(), caller)
      .catch((err: ServiceError) => err);
    expect(refusal).to.be.instanceOf(ServiceError);
    expect(refusal).to.include({ reason: 'TOO_MANY_CRAWLS' });
    expect((refusal as ServiceError).retryAfterSeconds).to.be.above(0);
    expect((await store.crawling()).length).to.equal(stored);
    expect(taken.length).to.equal(queued);
    // The same plan's other caller, and a start without a caller (an internal consumer), are not held to it.
    await jobs.start('broken-links', 'http://127.0.0.1:9/', requestId(), stays(), { ...caller, key: 'account:2' });
    await jobs.start('broken-links', 'http://127.0.0.1:9/', requestId(), stays());
  });

  it('holds an anonymous caller, or one of a plan it does not know, to the smallest bound', () => {
    expect(crawlsPerCaller(undefined)).to.equal(2);
    expect(crawlsPerCaller('NO-SUCH-PLAN')).to.equal(2);
    expect(crawlsPerCaller('ENTERPRISE')).to.equal(16);
  });
});
