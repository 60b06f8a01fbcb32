import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { removeStreams, SHARED_NATS_URL, uniquePrefix } from '@webutil/scripts/nats-under-test';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { account, json } from './billing-helpers.js';
import { post } from './crawl-helpers.js';

/** How long each of the flood's crawls holds its worker (its pages never answer). */
const FLOOD_BUDGET_MS = 10_000;
/** The issue's target for another caller's small job beside the flood. */
const TARGET_MS = 30_000;

/**
 * Crawl workers shared fairly among callers across replicas (docs/decisions/0262-fair-crawl-workers.md):
 * two crawl replicas of two workers each on one JetStream queue and one job store. An Enterprise
 * account queues 16 crawls that each hold a worker for the whole budget: first in, first out, they
 * would hold all four workers for four rounds (40 s). Another account's 2-page crawl, then its
 * bookmark check of 10 links, each take the next freed worker instead.
 */
describe('crawl workers shared fairly among callers, across replicas', function () {
  this.timeout(180_000);
  const prefix = uniquePrefix();
  let stack: TestStack;
  let site: FixtureSite;

  before(async () => {
    site = await startFixtureSite();
    site.route('/two', (_req, res) => {
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end('<html><body><a href="/ok">the other page</a></body></html>');
    });
    stack = await startTestStack({
      allowTargets: '127.0.0.0/8',
      env: { NATS_URL: SHARED_NATS_URL, CRAWL_NATS_PREFIX: prefix },
      envFor: { crawl: { CRAWL_CONCURRENCY: '2', CRAWL_TIME_BUDGET_MS: String(FLOOD_BUDGET_MS) } },
      replicas: { crawl: 2 },
    });
  });
  after(async () => {
    await stack?.stop();
    await site?.close();
    await removeStreams(SHARED_NATS_URL, prefix).catch(() => undefined);
  });

  /** Polls a job of `path` until it ends; its time from `since`. */
  async function ended(path: string, apiKey: string, since: number) {
    for (;;) {
      const res = await stack.api(path, { apiKey });
      const body = await json(res);
      expect(res.status, JSON.stringify(body)).to.equal(200);
      if (body.data.status !== 'crawling') return { job: body.data, ms: Date.now() - since };
      if (Date.now() - since > 3 * TARGET_MS) throw new Error(`${path} still crawling: ${JSON.stringify(body.data)}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  it("another account's 2-page crawl and 10-link bookmark check end within 30 s beside 16 slow crawls", async () => {
    const flooder = await account(stack, 'ENTERPRISE', '--top-up', '1000', '--rate-limit', '100000');
    const floodKey = flooder.apiKey as string;
    const starts = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        stack.api('/v1/broken-links/crawl', { ...post({ url: site.url(`/hang?flood=${i}`) }), apiKey: floodKey }),
      ),
    );
    expect(starts.map((res) => res.status)).to.deep.equal(Array(16).fill(202));
    const floodJobs = await Promise.all(starts.map(async (res) => (await json(res)).data.jobId as string));
    // A 17th is past the plan's bound: refused, nothing queued (decision 0142).
    const past = await stack.api('/v1/link-extract/crawl', { ...post({ url: site.url('/ok') }), apiKey: floodKey });
    expect(past.status).to.equal(429);
    expect(Number(past.headers.get('retry-after'))).to.be.above(0);

    const other = await account(stack, 'STARTER');
    const crawlStarted = Date.now();
    const crawl = await stack.api('/v1/broken-links/crawl', {
      ...post({ url: site.url('/two') }),
      apiKey: other.apiKey,
    });
    expect(crawl.status).to.equal(202);
    const crawledId = (await json(crawl)).data.jobId as string;
    const crawled = await ended(`/v1/broken-links/crawl/${crawledId}`, other.apiKey, crawlStarted);
    expect(crawled.job.status, JSON.stringify(crawled.job)).to.equal('done');
    expect(crawled.job.progress.pagesCrawled).to.equal(2);
    expect(crawled.ms, 'the 2-page crawl beside the flood').to.be.below(TARGET_MS);

    const form = new FormData();
    const links = Array.from(
      { length: 10 },
      (_, i) => `<bookmark href="${site.url(`/ok?b=${i}`)}"><title>b${i}</title></bookmark>`,
    );
    form.set('file', new Blob([`<?xml version="1.0"?><xbel version="1.0">${links.join('')}</xbel>`]), 'b.xbel');
    const checkStarted = Date.now();
    const check = await stack.api('/v1/bookmarks/check', { method: 'POST', body: form, apiKey: other.apiKey });
    const checkBody = await json(check);
    expect(check.status, JSON.stringify(checkBody)).to.equal(202);
    const checked = await ended(`/v1/bookmarks/check/${checkBody.data.jobId}`, other.apiKey, checkStarted);
    expect(checked.job.status, JSON.stringify(checked.job)).to.equal('done');
    expect(checked.ms, 'the bookmark check beside the flood').to.be.below(TARGET_MS);

    // Neither waited behind the flood: first in, first out, all 16 flood crawls would have started before them.
    const startLine = (id: string) => stack.logs.findIndex((l) => l.includes(id) && l.includes('crawl started'));
    const floodStarts = floodJobs.map(startLine);
    for (const id of [crawledId, checkBody.data.jobId as string]) {
      const at = startLine(id);
      expect(at, `the start of ${id} in the logs`).to.be.at.least(0);
      expect(floodStarts.filter((f) => f < 0 || f > at).length, 'flood crawls started after it').to.be.at.least(4);
    }
  });
});
