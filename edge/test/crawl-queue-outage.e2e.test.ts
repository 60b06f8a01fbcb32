import path from 'node:path';
import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { type OwnNats, startOwnNats } from '@webutil/scripts/nats-under-test';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { account, eventually, expectFailure, quota } from './billing-helpers.js';
import { post } from './crawl-helpers.js';

/** The bound on answering a start that cannot be queued (~0.1 s here when idle)... */
const PROMPT_MS = 2_000;
/** ...and slack for a loaded, shared test machine; retries of the old kind took 15 s. */
const SLACK_MS = 2_000;

/**
 * Issue 29, item 3: with NATS down a crawl start is answered 503 queue_unavailable with Retry-After
 * at once (no retry by the edge, none by the service), spends nothing and leaves no job document;
 * once NATS is back, starts are queued and run again. A private nats-server; the shared one is
 * never touched.
 */
describe('a crawl start while the queue is down', function () {
  this.timeout(120_000);
  let nats: OwnNats;
  let stack: TestStack;
  let site: FixtureSite;

  before(async () => {
    [nats, site] = await Promise.all([startOwnNats(), startFixtureSite()]);
    stack = await startTestStack({ allowTargets: '127.0.0.0/8', env: { NATS_URL: nats.url } });
  });
  after(async () => {
    await stack?.stop();
    await Promise.all([site?.close(), nats?.dispose()]);
  });

  const storedJobs = () => {
    const db = new Database(path.join(stack.dataDir, 'crawl-jobs.sqlite'), { readonly: true });
    try {
      return (db.prepare('SELECT count(*) AS n FROM crawl_jobs').get() as { n: number }).n;
    } finally {
      db.close();
    }
  };

  it('answers 503 queue_unavailable with Retry-After within 2 s, spends nothing, stores no job', async () => {
    const { apiKey } = await account(stack, 'STARTER', '--top-up', '100');
    const before = (await quota(stack, { apiKey })).remaining;
    const jobsBefore = storedJobs();
    await nats.stop();
    try {
      for (const route of ['broken-links', 'link-extract']) {
        const started = Date.now();
        const res = await stack.api(`/v1/${route}/crawl`, { ...post({ url: site.url('/ok') }), apiKey });
        const tookMs = Date.now() - started;
        await expectFailure(res, 503, 'queue_unavailable');
        expect(Number(res.headers.get('retry-after'))).to.be.above(0);
        process.stdout.write(`      ${route}: 503 after ${tookMs} ms\n`);
        expect(tookMs, 'time to the 503').to.be.below(PROMPT_MS + SLACK_MS);
      }
      // One try per start: the edge did not retry the non-idempotent call. Each try's line was
      // written before its 503, but reaches the test through the crawl process's stdout later.
      const tries = () => stack.logs.filter((line) => line.includes('could not queue a crawl')).length;
      await eventually(async () => expect(tries()).to.be.at.least(2), 10_000);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(tries()).to.equal(2);
      expect(storedJobs()).to.equal(jobsBefore);
      expect((await quota(stack, { apiKey })).remaining).to.equal(before);
    } finally {
      await nats.start();
    }
    // Back: a start is queued and its job runs.
    const jobId = await eventually(async () => {
      const res = await stack.api('/v1/link-extract/crawl', { ...post({ url: site.url('/ok') }), apiKey });
      expect(res.status).to.equal(202);
      return ((await res.json()) as { data: { jobId: string } }).data.jobId;
    }, 30_000);
    await eventually(async () => {
      const res = await stack.api(`/v1/link-extract/crawl/${jobId}`, { apiKey });
      const body = (await res.json()) as { data?: { status: string } };
      expect(body.data?.status, JSON.stringify(body)).to.equal('done');
    }, 60_000);
    await eventually(async () => expect((await quota(stack, { apiKey })).remaining).to.equal(before - 1));
  });
});
