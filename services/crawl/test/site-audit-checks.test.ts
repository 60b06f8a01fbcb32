import { createHash } from 'node:crypto';
import { expect } from 'chai';
import { LinkCollector } from '../src/page/links.js';
import { type AuditedPage, checkPage, validHreflang } from '../src/site-audit/page-checks.js';
import { PageFactsReader } from '../src/site-audit/page-facts.js';
import { issuesOf, scores } from '../src/site-audit/report.js';
import { checkSite } from '../src/site-audit/site-checks.js';

/** A page's facts as the audit reads them, fed in small chunks (tags split across writes). */
async function factsOf(html: string, url = 'https://example.com/page', headers: Record<string, string> = {}) {
  const links = new LinkCollector(new URL(url), 5000, true, true);
  const reader = new PageFactsReader(links, { url, headers, timeToHeadersMs: 12.4 });
  for (let i = 0; i < html.length; i += 5) reader.write(html.slice(i, i + 5));
  await reader.end();
  return { facts: reader.facts, links };
}

const page = (url: string, facts: AuditedPage['facts'], more: Partial<AuditedPage> = {}): AuditedPage => ({
  url,
  depth: 1,
  fromSitemap: false,
  status: 200,
  redirects: 0,
  refused: false,
  facts,
  links: [],
  ...more,
});

describe('site audit checks', () => {
  it('reads a page’s facts in the same pass as its links', async () => {
    const { facts, links } = await factsOf(
      '<html lang="de"><head><title> A  title </title><meta name="description" content="Words">' +
        '<link rel="canonical" href="/canonical"><link rel="alternate" hreflang="en-GB" href="/en">' +
        '<script type="application/ld+json">{"a": </script><script src="http://cdn.example.com/x.js"></script>' +
        '</head><body><h1>One</h1><h1>Two</h1><img src="/a.png"><img src="/b.png" alt="">' +
        '<a href="/next">next</a><script>var hidden = 1;</script></body></html>',
    );
    expect(facts).to.include({ title: 'A title', description: 'Words', lang: 'de', h1Count: 2, ttfbMs: 12 });
    expect(facts.canonical).to.equal('https://example.com/canonical');
    expect(facts.hreflang).to.deep.equal([{ lang: 'en-GB', url: 'https://example.com/en' }]);
    expect(facts.jsonLdInvalid).to.equal(1);
    expect(facts.imagesWithoutAlt).to.equal(1);
    expect(facts.mixedContent).to.deep.equal(['http://cdn.example.com/x.js']);
    expect(facts.noindex).to.equal(false);
    expect(links.links.map((l) => l.url)).to.include('https://example.com/next');
  });

  it('hashes the visible text only, and reads noindex from the header', async () => {
    const a = await factsOf('<body><p>Same  text</p><script>one()</script></body>');
    const b = await factsOf('<body><p>Same text</p><style>p{}</style></body>', 'https://example.com/b', {
      'x-robots-tag': 'noindex',
    });
    expect(a.facts.bodyHash).to.be.a('string').and.equal(b.facts.bodyHash);
    expect(b.facts.noindex).to.equal(true);
    expect(a.facts.mixedContent, 'http: resources on an http page are not mixed').to.deep.equal([]);
  });

  it('hashes the text as its words joined by single spaces, however the page is split', async () => {
    const { facts } = await factsOf('<body><p>  One\n two</p>\t<p>three   <b>four</b></p></body>');
    const expected = createHash('sha1').update('One two three four').digest('hex').slice(0, 20);
    expect(facts.bodyHash).to.equal(expected);
    expect((await factsOf('<body><p>One two three five</p></body>')).facts.bodyHash).to.not.equal(expected);
  });

  it('reads the facts past the link cap: the links and the facts share one parse', async () => {
    const url = 'https://example.com/page';
    const links = new LinkCollector(new URL(url), 2, true, true);
    const reader = new PageFactsReader(links, { url, headers: {}, timeToHeadersMs: 1 });
    const anchors = ['a', 'b', 'c', 'd'].map((p) => `<a href="/${p}">${p}</a>`).join('');
    const html = `<html lang="fr"><body>${anchors}<h1>Late</h1><img src="/late.png"></body></html>`;
    for (let i = 0; i < html.length; i += 7) reader.write(html.slice(i, i + 7));
    await reader.end();
    expect(links.links.map((l) => l.url)).to.deep.equal(['https://example.com/a', 'https://example.com/b']);
    expect(links.truncated).to.equal(true);
    expect(reader.facts).to.include({ lang: 'fr', h1Count: 1, imagesWithoutAlt: 1 });
  });

  it('knows hreflang codes', () => {
    for (const code of ['en', 'en-GB', 'de-AT', 'zh-Hant-TW', 'x-default', 'es-419'])
      expect(validHreflang(code), code).to.equal(true);
    for (const code of ['en-UK', 'english', 'xx', 'en_GB', 'e', '']) expect(validHreflang(code), code).to.equal(false);
  });

  it('finds a page’s own issues and the site’s, and scores pages without errors', async () => {
    const { facts } = await factsOf(
      '<html><head><title>Mixed</title></head><body><img src="http://example.com/i.png" alt="i"></body></html>',
    );
    const a = page('https://example.com/', facts, { depth: 0, links: ['https://example.com/b'] });
    const b = page('https://example.com/b', { ...facts, title: 'Fine title here', h1Count: 1 });
    const orphan = page('https://example.com/o', { ...facts, title: 'Another fine title' }, { fromSitemap: true });
    const found = [a, b, orphan].flatMap(checkPage);
    expect(found.filter((f) => f.id === 'mixed_content').map((f) => f.url)).to.have.length(3);
    expect(found.filter((f) => f.id === 'title_too_short').map((f) => f.url)).to.deep.equal([a.url]);
    const site = checkSite({
      entry: a.url,
      pages: [a, b, orphan],
      links: [],
      sitemapFound: true,
      sitemap: [orphan.url],
    });
    expect(site.findings.filter((f) => f.id === 'orphan_page').map((f) => f.url)).to.deep.equal([orphan.url]);
    expect(site.depths.get(b.url)).to.equal(1);
    const all = [...found, ...site.findings];
    const issues = issuesOf(all);
    expect(issues[0]?.priority).to.equal('error');
    const { healthScore, categories } = scores(all, new Set([a.url, b.url, orphan.url]), issues);
    expect(healthScore).to.equal(0); // mixed content is an error on every page
    expect(categories.find((c) => c.id === 'international')?.score).to.equal(100);
  });
});
