import { expect } from 'chai';
import { cssUrls, MAX_CSS_CHARS, MAX_CSS_URLS } from '../src/page/css-links.js';
import { LinkCollector } from '../src/page/links.js';
import {
  isStylesheet,
  MAX_IMPORT_DEPTH,
  MAX_STYLESHEETS,
  StylesheetReader,
  stylesheetLinks,
} from '../src/page/stylesheets.js';

const page = new URL('https://example.com/dir/page.html');

function resourcesOf(html: string) {
  const collector = new LinkCollector(page, 5000, true, true);
  for (let i = 0; i < html.length; i += 5) collector.write(html.slice(i, i + 5));
  collector.end();
  return collector.links.map((l) => ({ url: l.url, element: l.element, rel: l.rel }));
}

describe('cssUrls', () => {
  it('reads url() values, image-set() strings and @import targets, naming the property or at-rule', () => {
    const css =
      '@import "a.css"; @import url(b.css) screen; @namespace svg url(http://www.w3.org/2000/svg);\n' +
      '@font-face { src: url("f.woff2") format("woff2"), url(f.woff); }\n' +
      '.x { background: url( \'bg.png\' ) no-repeat; background-image: image-set("i.png" 1x); }\n' +
      '/* url(comment.png) */ .y:hover { content: "url(no.png)"; cursor: URL(c\\2e cur), auto }\n' +
      '@media (min-width: 1px) { .z { mask: url(m.svg#mask) } }';
    expect(cssUrls(css)).to.deep.equal([
      { url: 'a.css', rel: '@import' },
      { url: 'b.css', rel: '@import' },
      { url: 'f.woff2', rel: 'src' },
      { url: 'f.woff', rel: 'src' },
      { url: 'bg.png', rel: 'background' },
      { url: 'i.png', rel: 'background-image' },
      { url: 'c.cur', rel: 'cursor' },
      { url: 'm.svg#mask', rel: 'mask' },
    ]);
  });

  it('reads a style attribute’s declarations and skips CSS that names no URL', () => {
    expect(cssUrls('color: red; background:url(x.png)')).to.deep.equal([{ url: 'x.png', rel: 'background' }]);
    expect(cssUrls('color: red')).to.deep.equal([]);
    expect(cssUrls('background: url()')).to.deep.equal([]);
  });

  it('bounds hostile CSS: URLs per piece and characters read', () => {
    const many = '.a{background:url(x.png)}'.repeat(MAX_CSS_URLS + 50);
    expect(cssUrls(many)).to.have.length(MAX_CSS_URLS);
    const late = `${' '.repeat(MAX_CSS_CHARS)}.b{background:url(late.png)}`;
    expect(cssUrls(late)).to.deep.equal([]);
    const deep = `.a${'{'.repeat(100_000)}background:url(d.png)`;
    expect(cssUrls(deep)).to.deep.equal([{ url: 'd.png', rel: 'background' }]);
  });
});

describe('CSS in a page', () => {
  it('takes style attributes and <style> blocks as style resources, resolved against the base', () => {
    const html =
      '<base href="/assets/"><div style="background-image: url(bg.png)">x</div>' +
      '<style>@import "theme.css"; .hero { background: url("/img/hero.jpg") } .i { background: url(data:,x) }</style>' +
      '<template><style>.t{background:url(t.png)}</style><p style="background:url(t2.png)"></p></template>';
    expect(resourcesOf(html)).to.deep.equal([
      { url: 'https://example.com/assets/bg.png', element: 'style', rel: 'background-image' },
      { url: 'https://example.com/assets/theme.css', element: 'style', rel: '@import' },
      { url: 'https://example.com/img/hero.jpg', element: 'style', rel: 'background' },
    ]);
  });

  it('leaves CSS out when resources are not collected', () => {
    const collector = new LinkCollector(page, 5000, true, false);
    collector.write('<style>.a{background:url(a.png)}</style><p style="background:url(b.png)">x</p>');
    collector.end();
    expect(collector.links).to.deep.equal([]);
  });

  it('resolves a stylesheet’s URLs against its own URL, the stylesheet as their text', () => {
    const sheet = new URL('https://example.com/css/site.css');
    const links = stylesheetLinks('@import "more.css"; .a { background: url(../img/a.png#x) }', sheet, 100, true);
    expect(links.map((l) => [l.url, l.element, l.rel, l.text, l.fragments])).to.deep.equal([
      ['https://example.com/css/more.css', 'css', '@import', sheet.href, undefined],
      ['https://example.com/img/a.png', 'css', 'background', sheet.href, ['x']],
    ]);
    expect(links.map(isStylesheet)).to.deep.equal([true, false]);
  });
});

describe('StylesheetReader', () => {
  /** A site whose stylesheet /s<n>.css imports /s<n+1>.css and names /img<n>.png. */
  const fetched: string[] = [];
  const site = async (url: string) => {
    fetched.push(url);
    const n = Number(/s(\d+)\.css$/.exec(url)?.[1]);
    return { css: `@import "s${n + 1}.css"; .a { background: url(img${n}.png) }`, url };
  };
  const linkTo = (path: string) => stylesheetLinks(`@import "${path}";`, page, 10, true);

  beforeEach(() => {
    fetched.length = 0;
  });

  it('follows @imports MAX_IMPORT_DEPTH levels below the page’s stylesheet, each read once per scan', async () => {
    const reader = new StylesheetReader(site, 100, true, new AbortController().signal);
    const links = await reader.linksOf(linkTo('/s0.css'));
    expect(fetched).to.have.length(MAX_IMPORT_DEPTH + 1);
    expect(links.filter((l) => l.rel === 'background').map((l) => l.url)).to.deep.equal(
      fetched.map((_, n) => `https://example.com/img${n}.png`),
    );
    expect(await reader.linksOf(linkTo('/s0.css'))).to.deep.equal([]);
    expect(fetched).to.have.length(MAX_IMPORT_DEPTH + 1);
  });

  it('reads MAX_STYLESHEETS per scan at most, and no other site’s', async () => {
    const reader = new StylesheetReader(site, 100, true, new AbortController().signal);
    const many = stylesheetLinks(
      Array.from({ length: MAX_STYLESHEETS + 10 }, (_, n) => `@import "/x/s${n * 100}.css";`).join('') +
        '@import "https://cdn.test/s1.css";',
      page,
      1000,
      true,
    );
    await reader.linksOf(many.slice(-1));
    expect(fetched).to.deep.equal([]);
    await reader.linksOf(many);
    expect(fetched).to.have.length(MAX_STYLESHEETS);
  });
});
