import { type CrawlSite, startCrawlSite } from '@webutil/scripts/fixture-crawl-site';
import { removeStreams, SHARED_NATS_URL, uniquePrefix } from '@webutil/scripts/nats-under-test';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';

import { creditsHeader, expectFailure, json } from './billing-helpers.js';
import { byUrl, crawlEnds, pollJob, post, startCrawl } from './crawl-helpers.js';

/**
 * Link checking and crawls through the REST edge, on the real NATS (JetStream) with a prefix of
 * this run's own, against the generated fixture site on 127.0.0.1-4.
 */

const SEVERITIES = ['ok', 'warning', 'broken', 'info'];
const TYPES = ['internal', 'external', 'mailto', 'tel', 'anchor', 'other'];
const LINK_KEYS = [
  'url',
  'originalHref',
  'text',
  'type',
  'rel',
  'statusCode',
  'statusText',
  'severity',
  'reason',
  'category',
  'redirected',
  'element',
];
const OPTIONAL_LINK_KEYS = ['finalUrl', 'responseTimeMs', 'errorCode', 'fragments'];

/** A link record exactly as the spec describes it. */
function expectLinkRecord(link: any, crawl: boolean): void {
  const keys = Object.keys(link);
  expect(keys).to.include.members(LINK_KEYS);
  expect(keys.filter((k) => !LINK_KEYS.includes(k) && !OPTIONAL_LINK_KEYS.includes(k))).to.deep.equal(
    crawl ? ['sources', 'sourceCount'] : [],
  );
  expect(TYPES).to.include(link.type);
  expect(SEVERITIES).to.include(link.severity);
  for (const k of ['url', 'originalHref', 'text', 'statusText', 'reason', 'category'])
    expect(link[k], k).to.be.a('string');
  expect(link.rel === null || typeof link.rel === 'string').to.equal(true);
  expect(link.statusCode === null || Number.isInteger(link.statusCode)).to.equal(true);
  expect(link.redirected).to.be.a('boolean');
  expect(link.fragments).to.be.an('array').with.length.at.most(25);
  if (link.type === 'internal' || link.type === 'external') expect(link.url).to.not.contain('#');
  expect('finalUrl' in link).to.equal(link.redirected);
  if ('responseTimeMs' in link) expect(link.responseTimeMs).to.be.a('number').and.satisfy(Number.isInteger);
  if (link.statusCode === null) expect(link).to.not.have.property('responseTimeMs');
  if (crawl) {
    expect(link.sources).to.be.an('array').with.length.within(1, 25);
    expect(link.sourceCount).to.be.at.least(link.sources.length);
  }
}

function expectScoreCard(data: any): void {
  expect(Object.keys(data.summary).sort()).to.deep.equal([
    'broken',
    'external',
    'info',
    'internal',
    'ok',
    'resources',
    'warnings',
  ]);
  expect(data.healthScore).to.be.within(0, 100);
  expect(['A+', 'A', 'B', 'C', 'D', 'F']).to.include(data.grade);
  const codes = data.statusBreakdown.map((row: any) => row.code);
  expect(new Set(codes).size).to.equal(codes.length);
  for (const row of data.statusBreakdown) {
    expect(Object.keys(row).sort()).to.deep.equal(['code', 'count', 'label', 'severity']);
    expect(SEVERITIES).to.include(row.severity);
  }
  const total = data.statusBreakdown.reduce((n: number, row: any) => n + row.count, 0);
  expect(total).to.equal(data.links.length);
  const { ok, warnings, broken, info } = data.summary;
  expect(ok + warnings + broken + info).to.equal(data.links.length);
}

/**
 * What the fixture's home page links must be graded as, wherever they are checked: fragments
 * verified only with checkFragments.
 */
function expectHomeVerdicts(links: Map<string, any>, e: CrawlSite['expected'], checkFragments: boolean): void {
  const is = (url: string | undefined, want: Record<string, unknown>) => {
    const link = links.get(url as string);
    expect(link, `no record for ${url}`).to.not.equal(undefined);
    expect(link, url).to.deep.include(want);
    return link;
  };
  is(e.notFound, { severity: 'broken', statusCode: 404, category: '4xx Client error' });
  is(e.gone, { severity: 'broken', statusCode: 410 });
  is(e.serverError, { severity: 'broken', statusCode: 500, category: '5xx Server error' });
  is(e.redirectChain, {
    severity: 'warning',
    statusCode: 200,
    redirected: true,
    finalUrl: e.redirectChain.replace('/3', '/0'),
  });
  is(e.redirectLoop, { severity: 'broken', errorCode: 'ERR_TOO_MANY_REDIRECTS', category: 'Redirect loop' });
  is(e.moved, { severity: 'warning', redirected: true, finalUrl: e.moved.replace('/moved', '/docs/0.html') });
  is(e.headHostile, { severity: 'ok', statusCode: 200 });
  is(e.rateLimited, { severity: 'ok', statusCode: 200 });
  is(e.pdf, { severity: 'ok', statusCode: 200 });
  is(e.relative, { severity: 'ok', type: 'internal', originalHref: 'docs/2.html' });
  is(e.goodAnchor, { severity: 'info', type: 'anchor', statusCode: null });
  is(e.goodFragment, { severity: 'ok', statusCode: 200, originalHref: '/docs/0.html#section-2' });
  if (checkFragments) {
    is(e.missingAnchor, { severity: 'warning', type: 'anchor', category: 'Missing anchor' });
    expect(links.get(e.goodFragment).fragments).to.deep.equal([{ fragment: 'section-2', found: true }]);
    const missing = is(e.missingFragment, { severity: 'warning', statusCode: 200, category: 'Missing anchor' });
    expect(missing.fragments).to.deep.equal([{ fragment: 'nope', found: false }]);
    expect(missing.reason).to.contain('"nope"');
  } else {
    is(e.missingAnchor, { severity: 'info', type: 'anchor', reason: 'in-page anchor' });
    is(e.missingFragment, { severity: 'ok', statusCode: 200, fragments: [] });
  }
  // One missing page linked with 50 fragments: one record, no fragment judged on an error page.
  is(e.fragmentedMissing, { severity: 'broken', statusCode: 404, originalHref: '/docs/missing.html#part-0' });
  expect([...links.keys()].filter((url) => url.startsWith(e.fragmentedMissing))).to.have.length(1);
  for (const [url, type] of [
    [e.mailto, 'mailto'],
    [e.tel, 'tel'],
    [e.javascript, 'other'],
  ] as const)
    is(url, { severity: 'info', type, statusCode: null, redirected: false });
  is(e.botWall, { severity: 'warning', statusCode: 403, category: 'Bot protection' });
  expect(links.get(e.botWall).reason).to.contain('Cloudflare');
  is(e.softNotFound, { severity: 'broken', statusCode: 200, category: 'Soft 404' });
  is(e.softFound, { severity: 'ok', statusCode: 200 });
  for (const url of e.silent) {
    const link = is(url, { severity: 'broken', statusCode: null, errorCode: 'ETIMEDOUT', category: 'Timeout' });
    expect(link).to.not.have.property('responseTimeMs');
  }
}

describe('link checking and crawls through the edge (NATS)', function () {
  this.timeout(120_000);
  const prefix = uniquePrefix();
  let stack: TestStack;
  let site: CrawlSite;
  let small: CrawlSite;

  before(async () => {
    [site, small] = await Promise.all([
      startCrawlSite({ pages: 300, externalPerPage: 14 }),
      startCrawlSite({ pages: 20, silentHost: false, rateLimited: false }),
    ]);
    stack = await startTestStack({
      allowTargets: '127.0.0.0/8',
      env: { NATS_URL: SHARED_NATS_URL, CRAWL_NATS_PREFIX: prefix, LINK_TIMEOUT_MS: '2000', CRAWL_ACK_WAIT_MS: '3000' },
    });
  });
  after(async () => {
    await stack?.stop();
    await Promise.all([site?.close(), small?.close()]);
    await removeStreams(SHARED_NATS_URL, prefix);
  });

  describe('POST /v1/broken-links (one page)', () => {
    it('checks every link of the page and grades it as docs/grading.md says', async () => {
      const res = await stack.api('/v1/broken-links', post({ url: site.entryUrl, checkFragments: true }));
      const body = await json(res);
      expect(res.status, JSON.stringify(body.error)).to.equal(200);
      creditsHeader(res);
      const data = body.data;
      expect(Object.keys(data).sort()).to.deep.equal(
        [
          'checkedLinks',
          'grade',
          'healthScore',
          'links',
          'scannedAt',
          'statusBreakdown',
          'summary',
          'totalLinks',
          'truncated',
          'url',
        ].sort(),
      );
      expect(data.url).to.equal(site.entryUrl);
      expect(Date.parse(data.scannedAt)).to.be.a('number').and.not.NaN;
      expect(data).to.include({ truncated: false });
      expect(data.checkedLinks).to.equal(data.totalLinks).and.equal(data.links.length);
      for (const link of data.links) expectLinkRecord(link, false);
      expectScoreCard(data);
      expectHomeVerdicts(byUrl(data.links), site.expected, true);
      expect(data.summary.broken).to.be.above(0);
      expect(data.healthScore).to.be.below(100);
    });

    it('counts a URL once whatever its fragments, and verifies none unless asked', async () => {
      const missingPath = new URL(site.expected.fragmentedMissing).pathname;
      const asked = () => site.main.requests.filter((q) => q.path === missingPath);
      const before = asked().length;
      const res = await stack.api('/v1/broken-links', post({ url: site.entryUrl }));
      const data = (await json(res)).data;
      expect(res.status).to.equal(200);
      expectHomeVerdicts(byUrl(data.links), site.expected, false);
      expect(data.totalLinks).to.equal(data.links.length);
      // One check of the URL: HEAD, and a GET to confirm the error (docs/grading.md), not one per fragment.
      expect(
        asked()
          .slice(before)
          .map((q) => q.method),
      ).to.deep.equal(['HEAD', 'GET']);
      expect(data.summary.broken).to.equal(data.links.filter((l: any) => l.severity === 'broken').length);
    });

    it('answers 400 naming checkFragments when it is not a boolean, and spends nothing', async () => {
      const before = creditsHeader(await stack.api('/v1/quota'));
      for (const path of ['/v1/broken-links', '/v1/broken-links/crawl']) {
        const failure = await expectFailure(
          await stack.api(path, post({ url: site.entryUrl, checkFragments: 'yes' })),
          400,
          'invalid_request',
        );
        expect(failure.error?.message).to.equal('checkFragments must be true or false');
      }
      expect(creditsHeader(await stack.api('/v1/quota'))).to.equal(before);
    });

    it('answers 400 without a url', async () => {
      for (const path of ['/v1/broken-links', '/v1/broken-links/crawl', '/v1/link-extract/crawl']) {
        const failure = await expectFailure(await stack.api(path, post({})), 400, 'invalid_request');
        expect(failure.error?.message).to.equal('url is required');
      }
    });
  });

  describe('crawl jobs', () => {
    it('spends 2 credits per check or broken-link crawl, 1 per extract crawl, none per poll', async () => {
      let before = creditsHeader(await stack.api('/v1/quota'));
      const spent = async (res: Response) => {
        await res.arrayBuffer();
        const after = creditsHeader(res);
        const cost = before - after;
        before = after;
        return cost;
      };
      expect(await spent(await stack.api('/v1/broken-links', post({ url: small.entryUrl })))).to.equal(2);
      const started = await stack.api('/v1/broken-links/crawl', post({ url: small.entryUrl }));
      const jobId = (await json(started.clone())).data.jobId as string;
      expect(await spent(started)).to.equal(2);
      expect(await spent(await stack.api(`/v1/broken-links/crawl/${jobId}`))).to.equal(0);
      const extract = await stack.api('/v1/link-extract/crawl', post({ url: small.entryUrl }));
      const extractId = (await json(extract.clone())).data.jobId as string;
      expect(await spent(extract)).to.equal(1);
      expect(await spent(await stack.api(`/v1/link-extract/crawl/${extractId}`))).to.equal(0);
      await Promise.all([pollJob(stack, 'broken-links', jobId), pollJob(stack, 'link-extract', extractId)]);
    });

    it('answers 404 for unknown, malformed and other-kind job ids', async () => {
      const id = await startCrawl(stack, 'link-extract', small.entryUrl);
      for (const path of [
        '/v1/broken-links/crawl/0b6d9a4e-3f1c-4d2a-9e1b-7c5a2f0d8e11',
        '/v1/link-extract/crawl/not-a-job',
        `/v1/broken-links/crawl/${id}`,
      ]) {
        await expectFailure(await stack.api(path), 404, 'job_not_found');
      }
      expect((await pollJob(stack, 'link-extract', id)).job.status).to.equal('done');
    });

    it('crawls a site past the caps: 250 pages, 1,500 checked links, done with both truncation flags', async () => {
      site.external.requests.length = 0;
      const jobId = await startCrawl(stack, 'broken-links', site.entryUrl, { checkFragments: true });
      const { job, progress } = await pollJob(stack, 'broken-links', jobId, 90_000);
      expect(job.status, JSON.stringify(job.error)).to.equal('done');
      expect(Object.keys(job).sort()).to.deep.equal(['jobId', 'progress', 'result', 'status']);
      expect(job.jobId).to.equal(jobId);

      // Progress: the spec's broken-link shape, moving forward.
      const keys = [
        'phase',
        'message',
        'sitemapFound',
        'sitemapUrlCount',
        'pagesCrawled',
        'pagesDiscovered',
        'pagesCap',
        'linksFound',
        'linksChecked',
        'linksTotal',
      ];
      for (const p of [...progress, job.progress]) expect(Object.keys(p).sort()).to.deep.equal([...keys].sort());
      expect(job.progress).to.include({
        phase: 'done',
        sitemapFound: true,
        pagesCrawled: 250,
        pagesCap: 250,
        linksChecked: job.result.links.length,
        linksTotal: job.result.links.length,
      });
      // The message says in words what the counts say.
      const n = (x: number) => x.toLocaleString('en-US');
      const of = (x: number, what: string) => `${n(x)} ${what}${x === 1 ? '' : 's'}`;
      for (const p of progress.filter((p) => p.phase === 'crawling' || p.phase === 'checking')) {
        const checked = `hecked ${n(p.linksChecked)} of ${of(p.linksTotal, 'link')}`;
        expect(p.message).to.satisfy(
          (m: string) =>
            m.startsWith(`C${checked} on ${of(p.pagesCrawled, 'page')}`) ||
            m === `All ${of(p.pagesCrawled, 'page')} read; c${checked}`,
          p.message,
        );
      }
      expect(job.progress.message).to.equal(`Done: checked ${n(job.result.links.length)} links on 250 pages`);
      expect(progress.some((p) => / more pages to read$/.test(p.message))).to.equal(true);
      const crawled = progress.map((p) => p.pagesCrawled);
      expect(crawled).to.deep.equal([...crawled].sort((a, b) => a - b));

      const r = job.result;
      expect(r).to.include({ pagesCrawled: 250, truncatedPages: true, truncatedLinks: true });
      expect(r.pagesDiscovered).to.be.above(250);
      expect(r.totalUniqueLinks).to.be.above(1500);
      // In-page anchors cost no request, so they do not count against the 1,500 checks.
      const anchors = r.links.filter((l: any) => l.type === 'anchor').length;
      expect(anchors).to.equal(2);
      expect(r.links).to.have.length(1500 + anchors);
      // Every page fetched, and the one robots.txt disallows listed without being fetched.
      expect(r.pages.filter((p: any) => p.reason === undefined)).to.have.length(250);
      expect(r.pages.filter((p: any) => p.reason === 'disallowed by robots.txt')).to.have.length(1);
      for (const link of r.links) expectLinkRecord(link, true);
      expectScoreCard(r);

      // Pages: BFS depths from the entry, sitemap-only pages found through the gzipped child.
      const pages = byUrl<any>(r.pages);
      expect(pages.get(site.entryUrl)).to.include({ depth: 0, statusCode: 200, severity: 'ok' });
      for (const page of r.pages) {
        // `reason` only on a page that was not fetched.
        expect(
          Object.keys(page)
            .filter((k) => k !== 'reason' || page.statusCode !== null)
            .sort(),
        ).to.deep.equal(['depth', 'fromSitemap', 'linksOnPage', 'severity', 'statusCode', 'statusText', 'url']);
      }
      for (const hidden of site.expected.hiddenPages)
        expect(pages.get(hidden), hidden).to.include({ fromSitemap: true, depth: 1, statusCode: 200 });
      expect(pages.get(`${site.main.origin}/section/0/`)).to.include({ depth: 1, fromSitemap: false });
      expect(Math.max(...r.pages.map((p: any) => p.depth))).to.be.at.least(2);
      // Non-HTML answers are links, not pages: checked, never parsed.
      expect(pages.has(site.expected.download)).to.equal(false);
      expect(site.main.requests.filter((q) => q.path === '/files/report.pdf').map((q) => q.method)).to.not.include(
        'GET',
      );

      // Each unique link checked once (HEAD; a GET only to confirm an error).
      const asked = site.external.requests
        .filter((q) => q.method === 'HEAD' && q.path.startsWith('/ext/'))
        .map((q) => q.path);
      expect(new Set(asked).size).to.equal(asked.length);
      const links = byUrl<any>(r.links);
      // Every doc, section, hidden and open private page links home: sourceCount counts each, sources keeps 25.
      const linkingHome = r.pages.filter(
        (p: any) => p.statusCode === 200 && /\/(docs|section|hidden|private)\//.test(p.url),
      ).length;
      expect(links.get(site.entryUrl)).to.include({ sourceCount: linkingHome });
      expect(links.get(site.entryUrl).sources).to.have.length(25);
      expect(links.get(site.expected.relative).sources).to.include(site.entryUrl);
      expectHomeVerdicts(links, site.expected, true);
      const brokenExternal = site.expected.brokenExternal.filter((u) => links.has(u));
      expect(brokenExternal).to.not.be.empty;
      for (const url of brokenExternal)
        expect(links.get(url)).to.include({ severity: 'broken', statusCode: 404, type: 'external' });
    });

    it('extract-crawls a site: every link with its sources, 3,000 reported at most', async () => {
      const jobId = await startCrawl(stack, 'link-extract', site.entryUrl);
      const { job, progress } = await pollJob(stack, 'link-extract', jobId, 90_000);
      expect(job.status, JSON.stringify(job.error)).to.equal('done');
      const keys = [
        'phase',
        'message',
        'sitemapFound',
        'sitemapUrlCount',
        'pagesScanned',
        'pagesDiscovered',
        'pagesCap',
        'linksFound',
      ];
      for (const p of [...progress, job.progress]) expect(Object.keys(p).sort()).to.deep.equal([...keys].sort());
      expect(job.progress).to.include({ phase: 'done', pagesScanned: 250, sitemapFound: true });
      const r = job.result;
      expect(Object.keys(r).sort()).to.deep.equal(['counts', 'links', 'scannedAt', 'totalLinks', 'truncated', 'url']);
      expect(r.truncated).to.equal(true);
      expect(r.links).to.have.length(3000);
      expect(job.progress.linksFound).to.be.above(3000);
      expect(r.totalLinks).to.equal(r.counts.total);
      const counted = r.links.filter((l: any) => ['internal', 'external', 'mailto', 'tel'].includes(l.type)).length;
      expect(r.counts.total).to.equal(counted);
      for (const link of r.links) {
        expect(Object.keys(link).sort()).to.deep.equal([
          'originalHref',
          'rel',
          'scheme',
          'sourceCount',
          'sources',
          'text',
          'type',
          'url',
        ]);
        expect(link.sources.length).to.be.within(1, 25);
      }
      const links = byUrl<any>(r.links);
      expect(links.get(site.expected.mailto)).to.include({
        type: 'mailto',
        scheme: 'mailto',
        url: 'mailto:team@fixture.test',
      });
      expect(links.get(`${site.external.origin}/ext/0`)).to.include({
        type: 'external',
        rel: 'nofollow',
        scheme: 'http',
      });
    });

    it('fetches no page robots.txt disallows, and lists it as an info page row', async () => {
      const secret = new URL(small.expected.robotsDisallowed).pathname;
      const open = new URL(small.expected.robotsAllowed).pathname;
      small.main.requests.length = 0;
      const jobId = await startCrawl(stack, 'broken-links', small.entryUrl);
      const { job } = await pollJob(stack, 'broken-links', jobId);
      expect(job.status, JSON.stringify(job.error)).to.equal('done');
      const pages = byUrl<any>(job.result.pages);
      expect(pages.get(small.expected.robotsDisallowed)).to.deep.equal({
        url: small.expected.robotsDisallowed,
        statusCode: null,
        statusText: 'Disallowed',
        severity: 'info',
        linksOnPage: 0,
        depth: 1,
        fromSitemap: false,
        reason: 'disallowed by robots.txt',
      });
      // Never fetched as a page (a GET); the link to it is still checked, which is not crawling.
      const asked = small.main.requests.filter((q) => q.path === secret).map((q) => q.method);
      expect(asked).to.not.include('GET');
      expect(byUrl<any>(job.result.links).get(small.expected.robotsDisallowed)).to.include({ statusCode: 200 });
      // The longer Allow rule wins: the open page under the same folder is crawled.
      expect(pages.get(small.expected.robotsAllowed)).to.include({ statusCode: 200, severity: 'ok' });
      expect(small.main.requests.filter((q) => q.path === open).map((q) => q.method)).to.include('GET');
      expect(small.main.requests.filter((q) => q.path === '/robots.txt')).to.have.length(1);
    });

    it('contains a calendar trap and finishes a small site under the caps', async () => {
      const jobId = await startCrawl(stack, 'broken-links', small.entryUrl);
      const { job } = await pollJob(stack, 'broken-links', jobId);
      expect(job.status).to.equal('done');
      const r = job.result;
      expect(r).to.include({ truncatedPages: false, truncatedLinks: false });
      const calendar = r.pages.filter((p: any) => p.url.includes('/calendar'));
      expect(calendar.length).to.be.within(2, 2 * 8 + 1);
      expect(r.pagesCrawled).to.be.below(250);
      expect(byUrl<any>(r.pages).get(small.expected.baseResolved)).to.include({ statusCode: 200 });
      expect(byUrl<any>(r.links).get(small.expected.baseResolved)?.sources).to.include(`${small.main.origin}/base/`);
    });

    it('runs ten crawls at once to the end', async () => {
      const ids = await Promise.all(
        Array.from({ length: 10 }, () => startCrawl(stack, 'broken-links', small.entryUrl)),
      );
      expect(new Set(ids).size).to.equal(10);
      const jobs = await Promise.all(ids.map((id) => pollJob(stack, 'broken-links', id, 90_000)));
      const shapes = jobs.map(({ job }) => `${job.status} ${job.result?.pagesCrawled} ${job.result?.links.length}`);
      expect(new Set(shapes).size, shapes.join(', ')).to.equal(1);
      expect(shapes[0]).to.match(/^done \d+ \d+$/);
    });

    it('finishes a crawl whose service was killed mid-crawl, on the restarted service', async () => {
      const slow = await startCrawlSite({ pages: 80, latencyMs: 120, silentHost: false, rateLimited: false });
      try {
        const jobId = await startCrawl(stack, 'broken-links', slow.entryUrl);
        let seen: any;
        for (;;) {
          const body = await json(await stack.api(`/v1/broken-links/crawl/${jobId}`));
          seen = body.data;
          if (seen.status !== 'crawling' || seen.progress.pagesCrawled > 0) break;
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        expect(seen.status, 'the crawl ended before the kill').to.equal('crawling');
        await stack.kill('crawl');
        await stack.start('crawl');
        const { job } = await pollJob(stack, 'broken-links', jobId, 90_000);
        expect(job.status, JSON.stringify(job.error)).to.equal('done');
        expect(job.result.pagesCrawled).to.be.above(80);
        // The second try ran on the restarted service, handed over by JetStream.
        expect((await crawlEnds(stack, jobId)).some((line) => line.includes('"attempt":2'))).to.equal(true);
      } finally {
        await slow.close();
      }
    });
  });
});
