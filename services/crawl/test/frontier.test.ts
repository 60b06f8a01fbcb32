import { expect } from 'chai';
import { Frontier, looksLikePage, normalizePageUrl, type QueuedPage, urlShape } from '../src/site-crawl/frontier.js';

describe('frontier: URLs', () => {
  it('normalises: fragment and empty query dropped, default port and host case by WHATWG', () => {
    expect(normalizePageUrl('HTTP://Example.COM:80/a/../b?#frag')).to.equal('http://example.com/b');
    expect(normalizePageUrl('https://example.com:443/x?q=1#y')).to.equal('https://example.com/x?q=1');
    expect(normalizePageUrl('https://example.com')).to.equal('https://example.com/');
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
});

describe('frontier: breadth first', () => {
  const root = 'https://a.test/';

  it('hands out levels in discovery order with exact depths, each URL once', () => {
    const f = new Frontier({ maxShapeChain: 8, maxKnown: 1_000 });
    f.seed(root);
    const [entry] = f.nextLevel(10);
    expect(entry).to.include({ url: root, depth: 0 });
    expect(f.addLink('https://a.test/b', entry!)).to.equal(true);
    expect(f.addLink('https://a.test/c', entry!)).to.equal(true);
    expect(f.addLink('https://a.test/b', entry!)).to.equal(false);
    const level1 = f.nextLevel(10);
    expect(level1.map((p) => [p.url, p.depth])).to.deep.equal([
      ['https://a.test/b', 1],
      ['https://a.test/c', 1],
    ]);
    f.addLink('https://a.test/d', level1[1]!);
    expect(f.nextLevel(10).map((p) => p.depth)).to.deep.equal([2]);
    expect(f.discovered).to.equal(4);
  });

  it('treats sitemap URLs as linked from the entry page and marks every listed page', () => {
    const f = new Frontier({ maxShapeChain: 8, maxKnown: 1_000 });
    f.seed(root);
    const [entry] = f.nextLevel(1);
    f.addLink('https://a.test/linked', entry!);
    f.addFromSitemap(['https://a.test/linked', 'https://a.test/only-in-sitemap']);
    const level = f.nextLevel(10);
    expect(level.map((p) => [p.url, p.depth, p.fromSitemap])).to.deep.equal([
      ['https://a.test/linked', 1, true],
      ['https://a.test/only-in-sitemap', 1, true],
    ]);
  });

  it('caps a level and keeps the rest queued', () => {
    const f = new Frontier({ maxShapeChain: 8, maxKnown: 1_000 });
    f.seed(root);
    const [entry] = f.nextLevel(1);
    for (let i = 0; i < 5; i++) f.addLink(`https://a.test/p${i}`, entry!);
    expect(f.nextLevel(3)).to.have.length(3);
    expect(f.queued).to.equal(2);
  });

  it('stops following a chain of same-shape pages (a calendar trap) after maxShapeChain hops', () => {
    const f = new Frontier({ maxShapeChain: 3, maxKnown: 1_000 });
    f.seed(root);
    let [page] = f.nextLevel(1);
    let month = 0;
    let followed = 0;
    while (page && f.addLink(`https://a.test/calendar?month=${++month}`, page)) {
      followed++;
      [page] = f.nextLevel(1);
    }
    expect(followed).to.equal(4); // the first calendar page (another shape's child) and 3 more
    expect(f.trapped).to.equal(1);
  });

  it('knows where redirects landed without queuing them', () => {
    const f = new Frontier({ maxShapeChain: 8, maxKnown: 1_000 });
    f.seed(root);
    const [entry] = f.nextLevel(1);
    f.claim('https://a.test/landed');
    expect(f.has('https://a.test/landed')).to.equal(true);
    expect(f.addLink('https://a.test/landed', entry!)).to.equal(false);
    expect(f.queued).to.equal(0);
  });

  it('hands out a level of 130,000 queued pages (no spread of the whole queue) and keeps at most maxKnown', () => {
    const f = new Frontier({ maxShapeChain: 8, maxKnown: 140_000 });
    f.seed('https://a.test/');
    const [entry] = f.nextLevel(1);
    for (let i = 0; i < 150_000; i++) f.addLink(`https://a.test/p/${i}`, entry as QueuedPage);
    expect(f.discovered).to.equal(140_000);
    expect(f.overflowed).to.equal(10_001);
    const level = f.nextLevel(10);
    expect(level.map((p) => p.depth)).to.deep.equal(new Array(10).fill(1));
    expect(f.queued).to.equal(139_989);
  });
});
