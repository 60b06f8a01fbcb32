import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { expectFailure, json } from './billing-helpers.js';
import { type CrawlRoute, pollJob, post, startCrawl } from './crawl-helpers.js';

/**
 * Issue 12: a crawl whose entry page is not a page to crawl ends `failed` with the cause, on both
 * crawl kinds; progress and result count links by one rule.
 */
describe('crawl entry pages and link counts', function () {
  this.timeout(120_000);
  let stack: TestStack;
  let site: FixtureSite;

  before(async () => {
    site = await startFixtureSite();
    site.route('/mixed', (_req, res) => {
      res
        .writeHead(200, { 'content-type': 'text/html' })
        .end(
          '<a href="/ok">ok</a><a href="/status/404">gone</a><a href="https://example.test/">out</a>' +
            '<a href="mailto:me@example.test">mail</a><a href="#top">top</a><a href="javascript:void(0)">js</a>',
        );
    });
    // Only loopback is allowed; a page time-out short enough for the hanging entry page to end it.
    stack = await startTestStack({ allowTargets: '127.0.0.0/8', env: { PAGE_TIMEOUT_MS: '3000' } });
  });
  after(async () => {
    await stack?.stop();
    await site?.close();
  });

  const failures: [string, () => string, string, RegExp][] = [
    [
      'a site that is down',
      () => 'http://127.0.0.1:1/',
      'target_unreachable',
      /connection was refused \(ECONNREFUSED\)$/,
    ],
    [
      'an entry page redirecting to a private address',
      () => site.url(`/redirect-to?url=${encodeURIComponent('http://10.0.0.1/')}`),
      'target_blocked',
      /^10\.0\.0\.1 is a private or reserved address, which is not fetched/,
    ],
    ['an entry page answering 404', () => site.url('/status/404'), 'target_http_error', /answered 404/],
    ['an entry page answering 503', () => site.url('/status/503'), 'target_http_error', /answered 503/],
    [
      'an entry page that never answers',
      () => site.url('/hang'),
      'target_unreachable',
      /^the entry page could not be fetched: no answer in time/,
    ],
    ['an entry page that is not HTML', () => site.url('/json'), 'not_html', /not HTML/],
    ['an entry page that redirects in a loop', () => site.url('/redirect-loop'), 'target_unreachable', /loop/],
  ];
  for (const route of ['broken-links', 'link-extract'] as CrawlRoute[]) {
    for (const [what, url, code, message] of failures) {
      it(`${route} crawl of ${what} ends failed with ${code}`, async () => {
        const jobId = await startCrawl(stack, route, url());
        const { job } = await pollJob(stack, route, jobId);
        expect(job.status).to.equal('failed');
        expect(job.error.code).to.equal(code);
        expect(job.error.message).to.match(message);
        expect(job.error.message).to.not.match(/\(([A-Z_]+)\) \(\1\)/); // no doubled code
        expect(job.progress.phase).to.equal('failed');
        expect(job).to.not.have.property('result');
      });
    }
  }

  it('words a network failure once, with its code once, on every route that reports it', async () => {
    const down = 'http://127.0.0.1:1/';
    const wording = 'the connection was refused (ECONNREFUSED)';
    const extract = await expectFailure(
      await stack.api(`/v1/link-extract?url=${encodeURIComponent(down)}`),
      400,
      'target_unreachable',
    );
    expect(extract.error?.message).to.equal(wording);
    const check = await expectFailure(
      await stack.api('/v1/broken-links', post({ url: down })),
      400,
      'target_unreachable',
    );
    expect(check.error?.message).to.equal(wording);
    site.route('/to-down', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<a href="${down}">down</a>`);
    });
    const page = await json(await stack.api('/v1/broken-links', post({ url: site.url('/to-down') })));
    expect(page.data.links[0].reason).to.equal(wording);
    const jobId = await startCrawl(stack, 'broken-links', down);
    expect((await pollJob(stack, 'broken-links', jobId)).job.error.message).to.equal(
      `the entry page could not be fetched: ${wording}`,
    );
  });

  it("counts the extract crawl's links in progress as in the result: no in-page anchors or other schemes", async () => {
    const jobId = await startCrawl(stack, 'link-extract', site.url('/mixed'));
    const { job } = await pollJob(stack, 'link-extract', jobId);
    expect(job.status).to.equal('done');
    expect(job.result.counts).to.deep.equal({ total: 4, internal: 2, external: 1, mailto: 1, tel: 0 });
    expect(job.result.totalLinks).to.equal(4);
    expect(job.progress.linksFound).to.equal(job.result.totalLinks);
    expect(job.progress.message).to.match(/: found 4 links on \d+ pages$/);
  });

  it("counts the broken-link crawl's links in progress as in the result: every unique link", async () => {
    const jobId = await startCrawl(stack, 'broken-links', site.url('/mixed'));
    const { job } = await pollJob(stack, 'broken-links', jobId);
    expect(job.status).to.equal('done');
    expect(job.result.totalUniqueLinks).to.equal(6);
    expect(job.progress.linksFound).to.equal(job.result.totalUniqueLinks);
  });
});
