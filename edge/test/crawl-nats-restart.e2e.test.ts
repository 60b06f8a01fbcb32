import { type CrawlSite, startCrawlSite } from '@webutil/scripts/fixture-crawl-site';
import { type OwnNats, startOwnNats } from '@webutil/scripts/nats-under-test';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { json } from './billing-helpers.js';
import { pollJob, startCrawl } from './crawl-helpers.js';

/** NATS itself restarts while a crawl runs (a private nats-server; the shared one is never touched). */
describe('a crawl across a NATS restart', function () {
  this.timeout(120_000);
  let nats: OwnNats;
  let stack: TestStack;
  let slow: CrawlSite;

  before(async () => {
    [nats, slow] = await Promise.all([
      startOwnNats(),
      startCrawlSite({ pages: 100, latencyMs: 100, silentHost: false, rateLimited: false }),
    ]);
    stack = await startTestStack({
      allowTargets: '127.0.0.0/8',
      env: { NATS_URL: nats.url, CRAWL_ACK_WAIT_MS: '3000' },
    });
  });
  after(async () => {
    await stack?.stop();
    await Promise.all([slow?.close(), nats?.dispose()]);
  });

  it('finishes, its progress and result recorded after NATS is back', async () => {
    const jobId = await startCrawl(stack, 'broken-links', slow.entryUrl);
    let before: any;
    for (;;) {
      const { data } = await json(await stack.api(`/v1/broken-links/crawl/${jobId}`));
      expect(data.status).to.equal('crawling');
      before = data.progress;
      if (before.pagesCrawled > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await nats.stop();
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await nats.start();
    const { job } = await pollJob(stack, 'broken-links', jobId, 90_000);
    expect(job.status, JSON.stringify(job.error)).to.equal('done');
    expect(job.result.pagesCrawled).to.be.above(before.pagesCrawled);
    expect(job.progress.phase).to.equal('done');
  });
});
