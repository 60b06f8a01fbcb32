import {
  addLinkPages,
  fragmentSeverities,
  type LinkPage,
  MALFORMED_HREFS,
  ROUTE_PATTERNS,
} from '@webutil/scripts/fixture-link-pages';
import { addMarkdownPages, MARKDOWN_ANCHORS, type MarkdownPages } from '@webutil/scripts/fixture-markdown-pages';
import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { json } from './billing-helpers.js';
import { pollJob, post, startCrawl } from './crawl-helpers.js';

/** The fields a test compares: where a URL came from and how it was graded. */
const shape = (l: any) => ({ url: l.url, element: l.element, rel: l.rel, severity: l.severity });
const byUrl = (a: { url: string }, b: { url: string }) => a.url.localeCompare(b.url);
const withoutFragment = (url: string) => url.split('#')[0] as string;

/**
 * Issue 37, items 2 to 5, through the REST edge: head and metadata links, JSON-LD URLs, embedded
 * resources and CSS URLs (style attributes, <style> blocks, the site's stylesheets and @imports) are
 * checked (each category page links every kind to a working and to a missing target) and listed by
 * link-extract; malformed hrefs are broken "Invalid URL"; data: images are not listed; Markdown
 * pages are read for their links, images and heading anchors.
 */
describe('link kinds through the REST edge', function () {
  this.timeout(180_000);
  let stack: TestStack;
  let site: FixtureSite;
  let pages: LinkPage[];
  let index: string;
  let malformed: string;
  let fragments: string;
  let markdown: MarkdownPages;

  before(async () => {
    site = await startFixtureSite();
    ({ pages, index, malformed, fragments } = addLinkPages(site));
    markdown = addMarkdownPages(site);
    stack = await startTestStack({ allowTargets: '127.0.0.0/8' });
  });
  after(async () => {
    await stack?.stop();
    await site?.close();
  });

  it('checks every kind of each category page, the working target ok and the missing one broken', async () => {
    for (const page of pages) {
      const res = await stack.api('/v1/broken-links', post({ url: site.url(page.path) }));
      const body = await json(res);
      expect(res.status, JSON.stringify(body).slice(0, 300)).to.equal(200);
      expect(body.data.links.map(shape).sort(byUrl), page.path).to.deep.equal([...page.expected].sort(byUrl));
      expect(body.data.summary.resources).to.equal(page.expected.length);
    }
  });

  it('lists them with link-extract when resources are asked for, and not otherwise', async () => {
    for (const page of pages) {
      const url = encodeURIComponent(site.url(page.path));
      const all = await json(await stack.api(`/v1/link-extract?url=${url}&includeResources=true`));
      const listed = all.data.links.map((l: any) => ({ url: withoutFragment(l.url), element: l.element }));
      expect(listed.sort(byUrl), page.path).to.deep.equal(
        page.expected.map(({ url, element }) => ({ url, element })).sort(byUrl),
      );
      const anchors = await json(await stack.api(`/v1/link-extract?url=${url}`));
      expect(anchors.data.links).to.deep.equal([]);
    }
  });

  it('grades //, ////// and http:// as broken "Invalid URL" and leaves data: images out', async () => {
    const res = await stack.api('/v1/broken-links', post({ url: site.url(malformed) }));
    const body = await json(res);
    expect(res.status).to.equal(200);
    const invalid = body.data.links.filter((l: any) => l.category === 'Invalid URL');
    expect(invalid.map((l: any) => l.originalHref).sort()).to.deep.equal([...MALFORMED_HREFS].sort());
    expect(invalid.map((l: any) => l.severity)).to.deep.equal(MALFORMED_HREFS.map(() => 'broken'));
    expect(body.data.links.filter((l: any) => l.url.startsWith('data:'))).to.deep.equal([]);
    const others = body.data.links.filter((l: any) => l.category !== 'Invalid URL').map(shape);
    expect(others.sort(byUrl)).to.deep.equal(
      [
        { url: site.url('/links/gone/anchor'), element: 'a', rel: null, severity: 'broken' },
        { url: site.url('/links/ok/anchor'), element: 'a', rel: null, severity: 'ok' },
      ].sort(byUrl),
    );
  });

  it('skips single-page-app routes and accepts GitHub’s user-content- ids only when asked', async () => {
    for (const [skipRoutes, githubAnchors] of [
      [false, false],
      [true, false],
      [false, true],
      [true, true],
    ] as const) {
      const options = {
        url: site.url(fragments),
        checkFragments: true,
        ...(skipRoutes ? { skipFragments: ROUTE_PATTERNS } : {}),
        ...(githubAnchors ? { githubAnchors } : {}),
      };
      const res = await stack.api('/v1/broken-links', post(options));
      const body = await json(res);
      expect(res.status, JSON.stringify(body).slice(0, 300)).to.equal(200);
      const severities = Object.fromEntries(body.data.links.map((l: any) => [l.originalHref, l.severity]));
      expect(severities, JSON.stringify(options)).to.deep.equal(fragmentSeverities(skipRoutes, githubAnchors));
    }
    const bad = await stack.api('/v1/broken-links', post({ url: site.url(fragments), skipFragments: [''] }));
    expect(bad.status).to.equal(400);
  });

  it('crawls the pages and reports every kind once, graded as on one page', async () => {
    const jobId = await startCrawl(stack, 'broken-links', site.url(index));
    const { job } = await pollJob(stack, 'broken-links', jobId, 120_000);
    expect(job.status, JSON.stringify(job.error ?? job.progress)).to.equal('done');
    const found = new Map(job.result.links.map((l: any) => [l.url, shape(l)]));
    for (const expected of pages.flatMap((p) => p.expected)) expect(found.get(expected.url)).to.deep.equal(expected);
  });

  it('reads the site’s stylesheet once per check (one GET, no HEAD), and other stylesheets not at all', async () => {
    const css = pages.find((p) => p.path === '/links/css') as LinkPage;
    const sheets = css.expected.filter((l) => l.element === 'link' && l.url.startsWith(site.url('/links/css/')));
    expect(sheets).to.have.length(1);
    const sheet = new URL((sheets[0] as { url: string }).url).pathname;
    const before = site.requests.length;
    const res = await stack.api('/v1/broken-links', post({ url: site.url(css.path) }));
    expect(res.status).to.equal(200);
    const asked = site.requests.slice(before).filter((r) => r.path === sheet);
    expect(asked).to.deep.equal([{ method: 'GET', path: sheet }]);
    const off = await stack.api('/v1/broken-links', post({ url: site.url(css.path), checkResources: false }));
    expect((await json(off)).data.links).to.deep.equal([]);
  });

  it('reads a text/markdown page: links, images, reference links, autolinks and raw HTML, both outcomes', async () => {
    const res = await stack.api('/v1/broken-links', post({ url: site.url(markdown.page) }));
    const body = await json(res);
    expect(res.status, JSON.stringify(body).slice(0, 300)).to.equal(200);
    const links = body.data.links.filter((l: any) => l.type !== 'anchor').map(shape);
    expect(links.sort(byUrl)).to.deep.equal([...markdown.expected].sort(byUrl));
    expect(body.data.links.some((l: any) => l.url.includes('/in-code'))).to.equal(false);
  });

  it('verifies fragments against Markdown headings, on the page and on a .md served as text/plain', async () => {
    const res = await stack.api('/v1/broken-links', post({ url: site.url(markdown.page), checkFragments: true }));
    const body = await json(res);
    expect(res.status).to.equal(200);
    const anchors = body.data.links.filter((l: any) => l.type === 'anchor');
    expect(Object.fromEntries(anchors.map((l: any) => [l.originalHref, l.severity]))).to.deep.equal(
      Object.fromEntries(MARKDOWN_ANCHORS.map((a) => [`#${a.fragment}`, a.present ? 'info' : 'warning'])),
    );
    const readme = body.data.links.find((l: any) => l.url === site.url(markdown.readme));
    expect(readme.fragments).to.deep.equal(markdown.readmeFragments);
    expect(readme.severity).to.equal(markdown.readmeFragments.every((f) => f.found) ? 'ok' : 'warning');
  });

  it('lists a Markdown page’s links with link-extract (images with includeResources), .md too', async () => {
    const url = encodeURIComponent(site.url(markdown.page));
    const anchors = await json(await stack.api(`/v1/link-extract?url=${url}`));
    // Link extraction lists each URL as written, fragments included: the readme is linked twice.
    const listed = (body: any) => [
      ...new Set<string>(
        body.data.links.filter((l: any) => l.type !== 'anchor').map((l: any) => withoutFragment(l.url)),
      ),
    ];
    const links = markdown.expected.filter((l) => l.element === 'a').map((l) => l.url);
    expect(listed(anchors).sort()).to.deep.equal([...links].sort());
    const all = await json(await stack.api(`/v1/link-extract?url=${url}&includeResources=true`));
    expect(listed(all).sort()).to.deep.equal(markdown.expected.map((l) => l.url).sort());
    const readme = await stack.api(`/v1/link-extract?url=${encodeURIComponent(site.url(markdown.readme))}`);
    expect(readme.status).to.equal(200);
    const text = await stack.api(`/v1/link-extract?url=${encodeURIComponent(site.url('/text'))}`);
    expect(text.status).to.equal(400);
  });

  it('crawls from a Markdown page, reading the .md page it links as a page', async () => {
    const jobId = await startCrawl(stack, 'broken-links', site.url(markdown.page));
    const { job } = await pollJob(stack, 'broken-links', jobId, 120_000);
    expect(job.status, JSON.stringify(job.error ?? job.progress)).to.equal('done');
    const found = new Map(job.result.links.map((l: any) => [l.url, shape(l)]));
    for (const expected of markdown.expected) expect(found.get(expected.url)).to.deep.equal(expected);
    expect(job.result.pages.map((p: any) => p.url)).to.include(site.url(markdown.readme));
  });
});
