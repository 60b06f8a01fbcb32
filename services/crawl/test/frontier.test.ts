import { expect } from 'chai';
import { looksLikePage, normalizePageUrl, pageOf, SitePages } from '../src/page/page-url.js';
import { Frontier, type QueuedPage, urlShape } from '../src/site-crawl/frontier.js';

describe('frontier: URLs', () => {
  it('normalises: fragment and empty query dropped, default port and host case by WHATWG', () => {
    expect(normalizePageUrl('HTTP://Example.COM:80/a/../b?#frag')).to.equal('http://example.com/b');
    expect(normalizePageUrl('https://example.com:443/x?q=1#y')).to.equal('https://example.com/x?q=1');
    expect(normalizePageUrl('https://example.com')).to.equal('https://example.com/');
    expect(normalizePageUrl('https://example.com/x#')).to.equal('https://example.com/x');
    expect(normalizePageUrl('https://example.com/x?')).to.equal('https://example.com/x');
    expect(normalizePageUrl('https://example.com/x?#')).to.equal('https://example.com/x');
    expect(normalizePageUrl('https://example.com/x?a=%23#b')).to.equal('https://example.com/x?a=%23');
    expect(normalizePageUrl('https://example.com/a?b?')).to.equal('https://example.com/a?b?');
  });

  it('gives calendar pages one shape and different sections different shapes', () => {
    expect(urlShape(new URL('https://a.test/calendar?month=2024-01'))).to.equal(
      urlShape(new URL('https://a.test/calendar?month=1999-12')),
    );
    expect(urlShape(new URL('https://a.test/events/2024/03/'))).to.equal('/events/#/#/?');
    expect(urlShape(new URL('https://a.test/docs/1.html'))).to.not.equal(
      urlShape(new URL('https://a.test/section/1/')),
    );
  });

  it('fetches files by extension only as links', () => {
    expect(looksLikePage(new URL('https://a.test/report.PDF'))).to.equal(false);
    expect(looksLikePage(new URL('https://a.test/logo.svg'))).to.equal(false);
    expect(looksLikePage(new URL('https://a.test/docs/page.html'))).to.equal(true);
    expect(looksLikePage(new URL('https://a.test/download'))).to.equal(true);
  });

  it('takes a URL as a page of the site only when http(s), on the site (www. aside) and not a file', () => {
    const site = new URL('https://www.a.test/');
    expect(pageOf('https://a.test/docs/?#top', site)).to.equal('https://a.test/docs/');
    expect(pageOf('http://www.a.test/x', site)).to.equal('http://www.a.test/x');
    expect(pageOf('https://b.test/x', site)).to.equal(undefined);
    expect(pageOf('https://a.test/report.pdf', site)).to.equal(undefined);
    expect(pageOf('ftp://a.test/x', site)).to.equal(undefined);
    expect(pageOf('not a url', site)).to.equal(undefined);
  });

  it('remembers pageOf for a site: the same answers, asked again or past its memory', () => {
    const site = new URL('https://www.a.test/');
    const pages = new SitePages(site);
    const urls = ['https://a.test/docs/?#top', 'https://b.test/x', 'https://a.test/report.pdf', 'not a url'];
    for (let i = 0; i < 5_000; i += 1) urls.push(`https://a.test/p/${i}#x`);
    urls.push(`https://a.test/${'long/'.repeat(200)}`, `https://b.test/${'long/'.repeat(200)}`);
    for (const round of [1, 2])
      for (const url of urls) expect(pages.of(url), `${url}, round ${round}`).to.equal(pageOf(url, site));
    expect(pages.size).to.be.at.most(4_096);
    const kept = pages.size;
    for (let i = 0; i < 100; i += 1) pages.of(`https://a.test/${'x'.repeat(600)}/${i}`);
    expect(pages.size, 'long URLs are answered, not kept').to.equal(kept);
  });
});

describe('frontier: breadth first', () => {
  const root = 'https://a.test/';
  const frontier = (maxShapeChain = 8, maxKnown = 1_000) => new Frontier({ maxShapeChain, maxKnown });
  /** A frontier whose entry page is handed out (being read) and has linked to `children`. */
  const entryWith = (...children: string[]) => {
    const f = frontier();
    f.seed(root);
    const entry = f.take() as QueuedPage;
    for (const child of children) f.addLink(`https://a.test/${child}`, entry);
    return { f, entry };
  };
  /** Takes every page that may start now, as a crawler with free slots would. */
  const takeAll = (f: Frontier) => {
    const pages: QueuedPage[] = [];
    for (let page = f.take(); page; page = f.take()) pages.push(page);
    return pages;
  };

  it('hands out pages lowest depth first, in discovery order, each URL once', () => {
    const f = frontier();
    f.seed(root);
    const entry = f.take();
    expect(entry).to.include({ url: root, depth: 0 });
    expect(f.addLink('https://a.test/b', entry!)).to.equal(true);
    expect(f.addLink('https://a.test/c', entry!)).to.equal(true);
    expect(f.addLink('https://a.test/b', entry!)).to.equal(false);
    f.finishReading(0);
    const level1 = takeAll(f);
    expect(level1.map((p) => [p.url, p.depth])).to.deep.equal([
      ['https://a.test/b', 1],
      ['https://a.test/c', 1],
    ]);
    f.addLink('https://a.test/d', level1[1]!);
    expect(takeAll(f).map((p) => [p.url, p.depth])).to.deep.equal([['https://a.test/d', 2]]);
    expect(f.discovered).to.equal(4);
  });

  it('starts a page of depth d while pages of depth d - 1 are read, not while one of depth d - 2 is', () => {
    const { f } = entryWith('a', 'b');
    // The entry page is still being read: depth 1 may start, depth 2 may not.
    const [a, b] = takeAll(f);
    f.addLink('https://a.test/a/1', a!);
    expect(f.take()).to.equal(undefined);
    f.finishReading(0);
    // a and b (depth 1) are still read: depth 2 starts.
    expect(f.take()).to.include({ url: 'https://a.test/a/1', depth: 2 });
    f.addLink('https://a.test/b/1', b!);
    const b1 = f.take()!;
    f.addLink('https://a.test/deep', b1);
    // Depth 3 waits for a and b, which could still find depth-2 pages.
    expect(f.take()).to.equal(undefined);
    f.finishReading(1);
    expect(f.take()).to.equal(undefined);
    f.finishReading(1);
    expect(f.take()).to.include({ url: 'https://a.test/deep', depth: 3 });
  });

  it('moves a queued page up when a shallower page links to it (its true breadth-first depth)', () => {
    const { f } = entryWith('fast', 'slow');
    f.finishReading(0);
    const [fast, slow] = takeAll(f);
    // The fast depth-1 page is read first and finds x (depth 2), which stays queued...
    f.addLink('https://a.test/fast/child', fast!);
    f.finishReading(1);
    const child = f.take()!;
    f.addLink('https://a.test/x', child);
    expect(f.take()).to.equal(undefined); // depth 3 waits: slow (depth 1) is still read
    // ...then the slow one links to x too: x is depth 2, handed out once.
    expect(f.addLink('https://a.test/x', slow!)).to.equal(false);
    expect(takeAll(f).map((p) => [p.url, p.depth])).to.deep.equal([['https://a.test/x', 2]]);
    f.finishReading(1);
    f.finishReading(2);
    f.finishReading(2);
    expect(f.take()).to.equal(undefined);
    expect(f.queued).to.equal(0);
  });

  it('treats sitemap URLs as linked from the entry page and marks every listed page', () => {
    const f = frontier();
    f.seed(root);
    f.startReading(0); // the sitemap, read beside the entry page
    const entry = f.take()!;
    f.addLink('https://a.test/linked', entry);
    f.finishReading(0);
    const [linked] = takeAll(f);
    f.addLink('https://a.test/deeper', linked!);
    f.finishReading(1);
    expect(f.take()).to.equal(undefined); // the sitemap could still list it at depth 1
    f.addFromSitemap(['https://a.test/linked', 'https://a.test/only-in-sitemap', 'https://a.test/deeper']);
    f.finishReading(0);
    expect(linked).to.include({ depth: 1, fromSitemap: true });
    expect(takeAll(f).map((p) => [p.url, p.depth, p.fromSitemap])).to.deep.equal([
      ['https://a.test/only-in-sitemap', 1, true],
      ['https://a.test/deeper', 1, true],
    ]);
  });

  it('stops following a chain of same-shape pages (a calendar trap) after maxShapeChain hops', () => {
    const f = frontier(3);
    f.seed(root);
    let page = f.take();
    let month = 0;
    let followed = 0;
    while (page && f.addLink(`https://a.test/calendar?month=${++month}`, page)) {
      followed++;
      f.finishReading(page.depth);
      page = f.take();
    }
    expect(followed).to.equal(4); // the first calendar page (another shape's child) and 3 more
    expect(f.trapped).to.equal(1);
  });

  it('knows where redirects landed without queuing them', () => {
    const f = frontier();
    f.seed(root);
    const entry = f.take();
    f.claim('https://a.test/landed');
    expect(f.has('https://a.test/landed')).to.equal(true);
    expect(f.addLink('https://a.test/landed', entry!)).to.equal(false);
    expect(f.queued).to.equal(0);
  });

  it('hands out pages from 130,000 queued ones (no spread of the whole queue) and keeps at most maxKnown', () => {
    const f = frontier(8, 140_000);
    f.seed('https://a.test/');
    const entry = f.take();
    for (let i = 0; i < 150_000; i++) f.addLink(`https://a.test/p/${i}`, entry as QueuedPage);
    expect(f.discovered).to.equal(140_000);
    expect(f.overflowed).to.equal(10_001);
    const some = Array.from({ length: 10 }, () => f.take());
    expect(some.map((p) => p?.depth)).to.deep.equal(new Array(10).fill(1));
    expect(f.queued).to.equal(139_989);
  });
});
