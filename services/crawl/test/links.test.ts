import { expect } from 'chai';
import {
  classifyHref,
  countLinks,
  LinkCollector,
  MAX_FRAGMENTS_PER_LINK,
  MAX_HREF,
  MAX_LINK_BYTES,
  refreshTarget,
  sameSite,
} from '../src/page/links.js';

const page = new URL('https://www.example.com/dir/page.html');

function collect(html: string, cap = 5000, chunkSize = 7): LinkCollector {
  const collector = new LinkCollector(page, cap);
  // Small chunks: tags and entities split across writes must still parse.
  for (let i = 0; i < html.length; i += chunkSize) collector.write(html.slice(i, i + chunkSize));
  collector.end();
  return collector;
}

describe('classifyHref', () => {
  const cases: [string, string, string, string][] = [
    ['/a', 'https://www.example.com/a', 'internal', 'https'],
    ['b?x=1', 'https://www.example.com/dir/b?x=1', 'internal', 'https'],
    ['https://example.com/c', 'https://example.com/c', 'internal', 'https'],
    ['http://other.test/', 'http://other.test/', 'external', 'http'],
    ['//cdn.test/x.js', 'https://cdn.test/x.js', 'external', 'https'],
    ['#top', 'https://www.example.com/dir/page.html#top', 'anchor', 'https'],
    ['mailto:a@b.test', 'mailto:a@b.test', 'mailto', 'mailto'],
    ['tel:+15551234', 'tel:+15551234', 'tel', 'tel'],
    ['javascript:void(0)', 'javascript:void(0)', 'other', 'javascript'],
    ['data:text/html,hi', 'data:text/html,hi', 'other', 'data'],
    ['ftp://files.test/x', 'ftp://files.test/x', 'other', 'ftp'],
    // Unparseable, with no scheme of their own: the page's (graded broken, "Invalid URL").
    ['//', '//', 'other', 'https'],
    ['//////', '//////', 'other', 'https'],
    ['http://', 'http://', 'other', 'http'],
  ];
  for (const [href, url, type, scheme] of cases) {
    it(`${href} -> ${type}`, () => {
      expect(classifyHref(href, page, page)).to.deep.equal({ url, type, scheme });
    });
  }
  it('skips an empty href', () => expect(classifyHref('   ', page, page)).to.equal(undefined));
  it('treats www and the bare host as one site', () =>
    expect(sameSite(new URL('https://example.com'), page)).to.equal(true));
});

describe('LinkCollector', () => {
  it('for link checking, keeps one link per URL without its fragment, gathering its distinct fragments', () => {
    const hrefs = [
      '/doc.html#a',
      '/doc.html',
      '/doc.html#b',
      '/doc.html#a',
      '/doc.html#top',
      ...Array.from({ length: 40 }, (_, k) => `/doc.html#part-${k}`),
      '#local',
      '#local2',
    ];
    const html = hrefs.map((href) => `<a href="${href}">x</a>`).join('');
    const collector = new LinkCollector(page, 5000, true);
    collector.write(html);
    collector.end();
    const [doc, ...anchors] = collector.links;
    expect(doc).to.include({ url: 'https://www.example.com/doc.html', originalHref: '/doc.html#a', type: 'internal' });
    expect(doc?.fragments).to.have.length(MAX_FRAGMENTS_PER_LINK);
    expect(doc?.fragments?.slice(0, 3)).to.deep.equal(['a', 'b', 'part-0']);
    // In-page anchors stay one record each.
    expect(anchors.map((l) => l.type)).to.deep.equal(['anchor', 'anchor']);
    // Link extraction keeps every URL as authored.
    expect(collect(html).links.filter((l) => l.type === 'internal')).to.have.length(44);
  });

  it(`drops links whose href or resolved URL is longer than ${MAX_HREF} characters, and says the list is cut`, () => {
    const long = `/${'x'.repeat(MAX_HREF)}`;
    const c = collect(`<a href="/a">a</a><a href="${long}">long</a><a href="/b">b</a>`, 5000, 4096);
    expect(c.links.map((l) => l.originalHref)).to.deep.equal(['/a', '/b']);
    expect(c.tooLong).to.equal(1);
    expect(c.truncated).to.equal(true);
    expect(c.done).to.equal(false); // the page was read to its end
    // A long <base href> makes short hrefs long URLs: dropped too.
    const based = collect(`<base href="/${'d'.repeat(MAX_HREF)}/"><a href="x">x</a><a href="/y">y</a>`, 5000, 4096);
    expect(based.links.map((l) => l.originalHref)).to.deep.equal(['/y']);
  });

  it('keeps at most 200 characters of rel and 500 of a label used as text', () => {
    const c = collect(
      `<a href="/x" rel="${'nofollow '.repeat(100)}" aria-label="${'label '.repeat(1000)}"></a>`,
      5000,
      997,
    );
    expect(c.links[0]?.rel?.length).to.equal(200);
    expect(c.links[0]?.text.length).to.equal(500);
  });

  it(`stops reading a page once its links weigh ${MAX_LINK_BYTES / 1024 / 1024} MiB`, () => {
    const href = (i: number) => `/${String(i).padStart(8_000, '0')}`;
    const total = 2_000; // 2,000 links of 16 KB (href and URL): 32 MB without the budget
    const c = new LinkCollector(page, 5_000);
    for (let i = 0; i < total && !c.done; i++) c.write(`<a href="${href(i)}">${i}</a>`);
    c.end();
    const bytes = c.links.reduce((sum, l) => sum + l.url.length + l.originalHref.length + l.text.length, 0);
    expect(bytes).to.be.at.most(MAX_LINK_BYTES);
    expect(c.links.length).to.be.within(400, total - 1);
    expect(c.done).to.equal(true);
    expect(c.truncated).to.equal(true);
  });

  it('reports text, rel (undefined when absent), image alt and labels', () => {
    const c = collect(
      `<a href="/x" rel="nofollow noopener">  Hello
      <b>world</b>&amp; co </a><a href="/y"><img src="i.png" alt="Logo"></a>` +
        '<a href="/z" aria-label="Zed"></a><a href="/w"></a>',
    );
    expect(c.links.map((l) => [l.text, l.rel])).to.deep.equal([
      ['Hello world& co', 'nofollow noopener'],
      ['Logo', undefined],
      ['Zed', undefined],
      ['', undefined],
    ]);
  });

  it('resolves against <base href> and keeps the page host for internal/external', () => {
    const c = collect(
      '<head><base href="https://static.test/assets/"></head>' +
        '<a href="one">1</a><a href="https://www.example.com/two">2</a>',
    );
    expect(c.links.map((l) => [l.url, l.type])).to.deep.equal([
      ['https://static.test/assets/one', 'external'],
      ['https://www.example.com/two', 'internal'],
    ]);
  });

  it('reports a repeated href once, with the first text', () => {
    const c = collect(`<a href="/a">first</a><a href="/a">second</a><a href="https://www.example.com/a">third</a>`);
    expect(c.links).to.have.length(1);
    expect(c.links[0]?.text).to.equal('first');
  });

  it('ignores anchors inside script and template, and reads <area>', () => {
    const c = collect(
      `<script>document.write('<a href="/no">x</a>')</script><template><a href="/no2">y</a></template>` +
        '<map><area href="/map" alt="Map"></map>',
    );
    expect(c.links.map((l) => [l.url, l.text])).to.deep.equal([['https://www.example.com/map', 'Map']]);
  });

  it('counts internal, external, mailto and tel, not anchors or other schemes', () => {
    const c = collect(
      '<a href="/i">i</a><a href="https://o.test/">o</a><a href="mailto:x@y.test">m</a><a href="tel:1">t</a>' +
        '<a href="#h">h</a><a href="javascript:x()">j</a>',
    );
    expect(countLinks(c.links)).to.deep.equal({ total: 4, internal: 1, external: 1, mailto: 1, tel: 1 });
    expect(c.links).to.have.length(6);
  });

  it('stops at the cap and says it is truncated', () => {
    const html = Array.from({ length: 20 }, (_, i) => `<a href="/p${i}">${i}</a>`).join('');
    const c = collect(html, 10);
    expect(c.links).to.have.length(10);
    expect(c.truncated).to.equal(true);
    const exact = collect(Array.from({ length: 10 }, (_, i) => `<a href="/p${i}">${i}</a>`).join(''), 10);
    expect(exact.truncated).to.equal(false);
  });
});

describe('head, metadata and embedded links (issue 37)', () => {
  const read = (html: string, resources = true) => {
    const collector = new LinkCollector(page, 5000, true, resources);
    for (let i = 0; i < html.length; i += 7) collector.write(html.slice(i, i + 7));
    collector.end();
    return collector.links.map((l) => `${l.element} ${l.rel ?? '-'} ${l.url}`);
  };

  it('reads a meta refresh target as browsers do', () => {
    expect(refreshTarget('5; url=/next')).to.equal('/next');
    expect(refreshTarget("0;URL='/quoted' ignored")).to.equal('/quoted');
    expect(refreshTarget('3, /comma')).to.equal('/comma');
    expect(refreshTarget('10')).to.equal(undefined);
  });

  it('takes the URL keys of JSON-LD blocks, naming an object by the key it sits under', () => {
    const block = JSON.stringify({
      '@type': 'Organization',
      url: 'https://www.example.com/',
      name: 'https://not-a-url-key.test/',
      logo: { '@type': 'ImageObject', url: '/logo.png', contentUrl: '//cdn.test/logo.png' },
      sameAs: ['https://social.test/a', 'not a url'],
      publisher: { image: 'https://img.test/p.png' },
    });
    expect(read(`<script type="application/ld+json">${block}</script>`)).to.deep.equal([
      'json-ld url https://www.example.com/',
      'json-ld logo https://cdn.test/logo.png',
      'json-ld sameAs https://social.test/a',
      'json-ld image https://img.test/p.png',
    ]);
  });

  it('skips JSON-LD that is not JSON, too large, or not asked for, and reads the page on', () => {
    const huge = JSON.stringify({ url: 'https://huge.test/', filler: 'x'.repeat(300 * 1024) });
    const html =
      '<script type="application/ld+json">{"url": "https://broken.test/"</script>' +
      `<script type="application/ld+json">${huge}</script>` +
      '<script type="application/ld+json">{"image": "https://kept.test/i.png"}</script><a href="/after">a</a>';
    expect(read(html)).to.deep.equal(['json-ld image https://kept.test/i.png', 'a - https://www.example.com/after']);
    expect(read(html, false)).to.deep.equal(['a - https://www.example.com/after']);
  });
});
