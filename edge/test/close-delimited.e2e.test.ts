import { type CloseDelimitedSite, startCloseDelimitedSite } from '@webutil/scripts/fixture-close-delimited';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { json } from './billing-helpers.js';
import { pollJob, post, startCrawl } from './crawl-helpers.js';

/**
 * Issue 37, item 1: a 1.3 MB page sent by an HTTP/1.0 server that closes the connection after the
 * body crashed the crawl service (undici's `assert(!this.paused)`, exit 70) in 5 of 7 checks. Through
 * the REST edge, every route that fetches a page reads it without a crash, and the services answer
 * normally afterwards (docs/decisions/0301-undici-paused-parser-patch.md).
 */
describe('close-delimited HTTP/1.0 pages through the REST edge', function () {
  this.timeout(240_000);
  let stack: TestStack;
  let site: CloseDelimitedSite;

  before(async () => {
    site = await startCloseDelimitedSite();
    stack = await startTestStack({ allowTargets: '127.0.0.0/8' });
  });
  after(async () => {
    await stack?.stop();
    await site?.close();
  });

  /** No service died on an uncaught assertion (a crashed service is restarted and answers 503 meanwhile). */
  function expectNoCrash(): void {
    expect(stack.logs.filter((line) => /AssertionError|exited|exit code/i.test(line))).to.deep.equal([]);
  }

  it('checks that page 20 times in a row, every time whole, then a normal check succeeds', async () => {
    for (let i = 0; i < 20; i++) {
      const path = ['/page', '/paused', '/slow'][i % 3] as string;
      const res = await stack.api('/v1/broken-links', post({ url: site.url(path) }));
      const body = await json(res);
      expect(res.status, `check ${i + 1}: ${JSON.stringify(body).slice(0, 300)}`).to.equal(200);
      // Both links are read: the one after the 1.3 MB image proves the body was read to its end.
      expect(body.data.links.map((l: any) => l.url).sort()).to.deep.equal([site.url('/after'), site.url('/before')]);
      expect(body.data.links.map((l: any) => l.statusCode)).to.deep.equal([404, 404]);
    }
    const extract = await stack.api(`/v1/link-extract?url=${encodeURIComponent(site.url('/page'))}`);
    expect(extract.status).to.equal(200);
    expect((await json(extract)).data.totalLinks).to.equal(2);
    expectNoCrash();
  });

  it('crawls it, scans its metadata and down-checks it with a keyword, then answers normally', async () => {
    const jobId = await startCrawl(stack, 'broken-links', site.url('/page'));
    const { job } = await pollJob(stack, 'broken-links', jobId, 120_000);
    expect(job.status, JSON.stringify(job.error ?? job.progress)).to.equal('done');
    expect(job.result.pagesCrawled).to.be.at.least(1);
    for (const path of ['/page', '/paused']) {
      const scan = await stack.api(`/v1/meta-scan?url=${encodeURIComponent(site.url(path))}`);
      expect(scan.status, JSON.stringify(await json(scan)).slice(0, 300)).to.equal(200);
      // A keyword makes the down-check read the body (its first megabyte).
      const down = await stack.api(`/v1/down-check?url=${encodeURIComponent(site.url(path))}&keyword=Inline`);
      const downBody = await json(down);
      expect(down.status, JSON.stringify(downBody).slice(0, 300)).to.equal(200);
    }
    const normal = await stack.api('/v1/broken-links', post({ url: site.url('/page') }));
    expect(normal.status).to.equal(200);
    expectNoCrash();
  });
});
