import { type HostileSite, startHostileSite } from '@webutil/scripts/fixture-hostile-site';
import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { creditsHeader, json } from './billing-helpers.js';
import { pollJob, post, startCrawl } from './crawl-helpers.js';

/** Far above a normal answer (milliseconds on loopback), far below what a blocked loop took (tens of seconds). */
const LIVENESS_MS = 10_000;

/**
 * Hostile pages and sitemaps (issue 8: quadratic parsing and regexes, unbounded crawl memory, a
 * frontier too large to spread) cost the crawl service bounded time: each hostile request ends
 * normally and is billed, and a normal request to the same service is answered while it runs.
 */
describe('hostile sites against the crawl service', function () {
  this.timeout(180_000);
  let stack: TestStack;
  let hostile: HostileSite;
  let normal: FixtureSite;

  before(async () => {
    hostile = await startHostileSite();
    normal = await startFixtureSite();
    normal.route('/page', (_req, res) => {
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end('<a href="/ok">ok</a><a href="https://example.test/">x</a>');
    });
    // Time-outs far above a loaded machine's slowest answer: a timed-out page would shrink the frontier.
    stack = await startTestStack({
      allowTargets: '127.0.0.0/8',
      env: { PAGE_TIMEOUT_MS: '120000', LINK_TIMEOUT_MS: '60000' },
    });
  });
  after(async () => {
    await stack?.stop();
    await hostile?.close();
    await normal?.close();
  });

  /** A normal link-extract answered correctly within the liveness bound. */
  async function normalRequestAnswers(): Promise<void> {
    const started = performance.now();
    const res = await stack.api(`/v1/link-extract?url=${encodeURIComponent(normal.url('/page'))}`);
    const body = await json(res);
    expect(res.status, JSON.stringify(body)).to.equal(200);
    expect(body.data.totalLinks).to.equal(2);
    expect(performance.now() - started).to.be.below(LIVENESS_MS);
  }

  it('reads a 1 MB page of nested tags up to the nesting cap, answers 200 (billed), and stays responsive', async () => {
    const before = creditsHeader(await stack.api('/v1/quota'));
    const pending = stack.api(`/v1/link-extract?url=${encodeURIComponent(hostile.site.url('/nested'))}`);
    await hostile.served('/nested'); // the service has the hostile page in hand
    await normalRequestAnswers();
    const res = await pending;
    const body = await json(res);
    expect(res.status, JSON.stringify(body)).to.equal(200);
    expect(body.data.links.map((l: any) => l.originalHref)).to.deep.equal(['/before']);
    expect(body.data.truncated).to.equal(true);
    // The header is the balance once this request's credit was held; the normal request ran meanwhile.
    expect(creditsHeader(res)).to.be.within(before - 2, before - 1);
    expect(creditsHeader(await stack.api('/v1/quota'))).to.equal(before - 1 - 1); // this request and the normal one
  });

  it('checks 20 links answering a regex-hostile body in bounded time, and stays responsive', async () => {
    const pending = stack.api('/v1/broken-links', post({ url: hostile.site.url('/regex-links') }));
    await hostile.served(/^\/regex\/\d+$/); // a hostile body read for its soft-404 fingerprint
    await normalRequestAnswers();
    const res = await pending;
    const body = await json(res);
    expect(res.status, JSON.stringify(body)).to.equal(200);
    expect(body.data.checkedLinks).to.equal(20);
    // Every unknown path answers the same 200 page, the soft-404 probe included: all are soft 404s.
    expect(body.data.links.map((l: any) => l.category)).to.deep.equal(new Array(20).fill('Soft 404'));
  });

  it("answers a page whose links would pass gRPC's 64 MiB reply limit with those short enough to report", async () => {
    // Each relative link resolves under a 16,000-character <base href>: 5,000 of them are 80 MB.
    const res = await stack.api(`/v1/link-extract?url=${encodeURIComponent(hostile.site.url('/long-base'))}`);
    const body = await json(res);
    expect(res.status, JSON.stringify(body).slice(0, 500)).to.equal(200);
    expect(body.data.links.map((l: any) => l.url)).to.deep.equal([
      hostile.site.url('/short-1'),
      hostile.site.url('/short-2'),
    ]);
    expect(body.data.truncated).to.equal(true);
  });

  it('crawls the hostile site (sitemap bomb, nested tags, huge id lists, 135,000 queued URLs) to done', async () => {
    const jobId = await startCrawl(stack, 'broken-links', hostile.entryUrl, { checkFragments: true });
    // The crawl is in its pages, and the hostile ones have been served to it.
    for (;;) {
      const { data } = await json(await stack.api(`/v1/broken-links/crawl/${jobId}`));
      if (!['queued', 'sitemap'].includes(data.progress.phase)) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await Promise.all(['/bomb.xml.gz', '/nested', /^\/ids\/\d+$/, /^\/wide\/\d+$/].map((p) => hostile.served(p)));
    let answeredDuringCrawl = 0;
    for (let i = 0; i < 3; i++) {
      await normalRequestAnswers();
      answeredDuringCrawl++;
    }
    const { job } = await pollJob(stack, 'broken-links', jobId, 150_000);
    expect(job.status, JSON.stringify(job.error ?? job.progress)).to.equal('done');
    expect(answeredDuringCrawl).to.equal(3);
    expect(job.progress.pagesCrawled).to.equal(250);
    const result = job.result;
    expect(result.truncatedPages).to.equal(true);
    expect(result.pagesCrawled).to.equal(250);
    expect(result.pagesDiscovered).to.be.above(130_000);
    const pages = new Map(result.pages.map((p: any) => [new URL(p.url).pathname, p]));
    expect((pages.get('/nested') as any)?.linksOnPage).to.equal(1);
    expect(job.progress.sitemapFound).to.equal(true);
    expect(job.progress.sitemapUrlCount).to.equal(0);
    // /ids/0#last names an id beyond the ids kept per page: unknown, so not reported missing.
    const last = result.links.find((l: any) => l.url.endsWith('/ids/0'));
    expect(last?.severity, last?.reason).to.equal('ok');
    expect(last?.fragments?.some((f: any) => f.fragment === 'last')).to.equal(false);
  });
});
