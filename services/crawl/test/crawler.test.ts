import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AddressPolicy, SafeHttp } from '@webutil/kit';
import { type FixtureHandler, type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { expect } from 'chai';
import { HostThrottle } from '../src/checking/throttle.js';
import { type CrawlLimits, readConfig } from '../src/config.js';
import type { CrawlKind, CrawlResult } from '../src/model.js';
import { linkBytes } from '../src/page/links.js';
import { crawlSite, MAX_RESULT_BYTES } from '../src/site-crawl/crawler.js';

const html = (body: string) => `<!doctype html><html><body>${body}</body></html>`;
const links = (paths: string[]) => paths.map((p) => `<a href="${p}">${p}</a>`).join('\n');

describe('site crawl (against a real local site)', function () {
  this.timeout(60_000);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'crawler-'));
  const settings = readConfig({ DATA_DIR: dir, WEBUTIL_ALLOW_TARGETS: '127.0.0.0/8' });
  const http = new SafeHttp({ policy: new AddressPolicy(settings.WEBUTIL_ALLOW_TARGETS) });
  let site: FixtureSite;

  const crawl = (kind: CrawlKind, limits: Partial<CrawlLimits> = {}): Promise<CrawlResult> =>
    crawlSite(
      kind,
      new URL(site.url('/')),
      {
        http,
        throttle: new HostThrottle({
          globalLimit: 64,
          initialPerHost: 16,
          maxPerHost: 32,
          slowMs: 10_000,
          timeoutsToGiveUp: 3,
          downForMs: 60_000,
        }),
        ...settings.fetch,
        limits: { ...settings.crawl, ...limits },
      },
      () => undefined,
      new AbortController().signal,
    );

  beforeEach(async () => {
    site = await startFixtureSite();
  });
  afterEach(async () => {
    await site.close();
  });
  after(async () => {
    await http.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads deeper pages while a slow page is still read, and still reports breadth-first depths', async () => {
    const answered: string[] = [];
    const page =
      (body: string, delayMs = 0): FixtureHandler =>
      async (_req, res, url) => {
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        answered.push(url.pathname);
        res.writeHead(200, { 'content-type': 'text/html' }).end(html(body));
      };
    site.route('/', page(links(['/slow', '/fast'])));
    site.route('/slow', page(links(['/x']), 1_500));
    site.route('/fast', page(links(['/fast/child'])));
    site.route('/fast/child', page(links(['/x', '/fast/grandchild'])));
    site.route('/fast/grandchild', page(''));
    site.route('/x', page(''));
    const result = await crawl('broken-links');
    if (result.kind !== 'broken-links') throw new Error('not a broken-link crawl');
    // No level barrier: /fast/child (depth 2) was read before /slow (depth 1) answered...
    expect(answered.indexOf('/fast/child')).to.be.below(answered.indexOf('/slow'));
    // ...but /x waited for /slow, which links to it: its depth is 2, through /slow, not 3.
    expect(answered.indexOf('/x')).to.be.above(answered.indexOf('/slow'));
    const depth = new Map(result.result.pages.map((p) => [new URL(p.url).pathname, p.depth]));
    expect(Object.fromEntries(depth)).to.deep.equal({
      '/': 0,
      '/slow': 1,
      '/fast': 1,
      '/fast/child': 2,
      '/x': 2,
      '/fast/grandchild': 3,
    });
  });

  it('verifies every fragment a crawled page is linked with, from any page (checkFragments)', async () => {
    site.route('/', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end(html(links(['/doc#there', '/a'])));
    });
    site.route('/a', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end(html(links(['/doc#nowhere', '/'])));
    });
    site.route('/doc', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end(html(`<h2 id="there">There</h2>${links(['/a#x'])}`));
    });
    const result = await crawlSite(
      'broken-links',
      new URL(site.url('/')),
      {
        http,
        throttle: new HostThrottle({
          globalLimit: 64,
          initialPerHost: 16,
          maxPerHost: 32,
          slowMs: 10_000,
          timeoutsToGiveUp: 3,
          downForMs: 60_000,
        }),
        ...settings.fetch,
        limits: settings.crawl,
      },
      () => undefined,
      new AbortController().signal,
      { checkFragments: true },
    );
    if (result.kind !== 'broken-links') throw new Error('not a broken-link crawl');
    const doc = result.result.links.find((l) => new URL(l.url).pathname === '/doc');
    expect(doc?.fragments).to.deep.equal([
      { fragment: 'there', found: true },
      { fragment: 'nowhere', found: false },
    ]);
    const a = result.result.links.find((l) => new URL(l.url).pathname === '/a');
    expect(a?.fragments).to.deep.equal([{ fragment: 'x', found: false }]);
    expect(doc?.severity).to.equal('warning');
    expect(doc?.reason).to.include('nowhere');
  });

  it('sets truncatedLinks only at the link-check cap; the anchor cap is said in linksCutBy', async () => {
    const anchors = Array.from({ length: 8 }, (_, i) => `<h2 id="s${i}">${i}</h2><a href="#s${i}">s${i}</a>`);
    site.route('/', (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end(html(anchors.join('') + links(['/a', '/b', '/c'])));
    });
    for (const p of ['/a', '/b', '/c']) {
      site.route(p, (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' }).end(html(''));
      });
    }
    // More in-page anchors than their cap, fewer links than the check cap: not truncatedLinks.
    const anchorCut = await crawl('broken-links', { reportedLinks: 5 });
    if (anchorCut.kind !== 'broken-links') throw new Error('not a broken-link crawl');
    expect(anchorCut.result.links.filter((l) => l.type === 'anchor')).to.have.length(5);
    expect(anchorCut.result).to.include({ truncatedLinks: false });
    expect(anchorCut.result.linksCutBy).to.deep.equal(['anchor_cap']);
    // More links than the check cap: truncatedLinks, and no other cut.
    const checkCut = await crawl('broken-links', { checkedLinks: 2 });
    if (checkCut.kind !== 'broken-links') throw new Error('not a broken-link crawl');
    expect(checkCut.result.links.filter((l) => l.type !== 'anchor')).to.have.length(2);
    expect(checkCut.result).to.include({ truncatedLinks: true });
    expect(checkCut.result.linksCutBy).to.deep.equal([]);
  });

  it('crawls exactly the page cap, the breadth-first pages first', async () => {
    // Five pages at depth 1, 25 at depth 2, 125 at depth 3.
    site.route('*', (_req, res, url) => {
      const children = url.pathname.split('/').filter(Boolean).length < 3;
      const base = url.pathname === '/' ? '' : url.pathname;
      const body = children ? links(Array.from({ length: 5 }, (_, i) => `${base}/${i}`)) : '';
      res.writeHead(200, { 'content-type': 'text/html' }).end(html(body));
    });
    const result = await crawl('broken-links', { pages: 20 });
    if (result.kind !== 'broken-links') throw new Error('not a broken-link crawl');
    const byDepth = new Map<number, number>();
    for (const p of result.result.pages) byDepth.set(p.depth, (byDepth.get(p.depth) ?? 0) + 1);
    expect(Object.fromEntries(byDepth)).to.deep.equal({ 0: 1, 1: 5, 2: 14 });
    expect(result.result).to.include({ pagesCrawled: 20, truncatedPages: true });
  });

  it(
    `keeps a result's strings within ${MAX_RESULT_BYTES / 1024 / 1024} MiB; ` +
      'links past it are counted, not reported',
    async () => {
      // Four pages of 1,000 external links of 8,000 characters: 32 MB of URLs and hrefs.
      const long = (page: number, i: number) => `https://example.test/${page}/${String(i).padStart(8_000, '0')}`;
      site.route('/', (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' }).end(html(links(['/0', '/1', '/2', '/3'])));
      });
      site.route('*', (_req, res, url) => {
        const page = Number(url.pathname.slice(1));
        const body = Array.from({ length: 1_000 }, (_, i) => `<a href="${long(page, i)}">${i}</a>`).join('');
        res.writeHead(200, { 'content-type': 'text/html' }).end(html(body));
      });
      const result = await crawl('link-extract');
      if (result.kind !== 'link-extract') throw new Error('not an extract crawl');
      const r = result.result;
      const bytes = r.links.reduce(
        (sum, l) => sum + linkBytes(l) + l.sources.reduce((s, u) => s + Buffer.byteLength(u), 0),
        0,
      );
      expect(bytes).to.be.at.most(MAX_RESULT_BYTES);
      expect(r.links.length).to.be.within(500, 3_000);
      expect(r.truncated).to.equal(true);
      expect(r.totalLinks).to.equal(r.links.length);
    },
  );
});
