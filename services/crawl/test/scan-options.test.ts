import { ServiceError } from '@webutil/kit';
import type { LinkOptions } from '@webutil/proto/webutil/crawl/v1/crawl';
import { LinkOptions as contract } from '@webutil/proto/webutil/crawl/v1/crawl.fields';
import { expect } from 'chai';
import { gradeLink } from '../src/checking/grade.js';
import type { FoundLink } from '../src/model.js';
import { LinkCollector, srcsetUrls } from '../src/page/links.js';
import { compilePattern, compileScan, inScan, scanOptionsOf } from '../src/scan-options.js';

const page = new URL('https://www.example.com/dir/page.html');

function collect(html: string, resources = true): LinkCollector {
  const collector = new LinkCollector(page, 5000, true, resources);
  for (let i = 0; i < html.length; i += 11) collector.write(html.slice(i, i + 11));
  collector.end();
  return collector;
}

const message = (fields: Partial<LinkOptions>): LinkOptions => ({
  include: [],
  exclude: [],
  acceptStatus: [],
  headers: {},
  skipFragments: [],
  ...fields,
});

function refused(fields: Partial<LinkOptions>): string {
  try {
    scanOptionsOf(message(fields));
  } catch (err) {
    expect(err).to.be.instanceOf(ServiceError);
    return (err as Error).message;
  }
  throw new Error(`accepted ${JSON.stringify(fields)}`);
}

describe('resources on a page', () => {
  const html = `<head>
    <link rel="stylesheet" href="/css/site.css"><link rel="icon" href="/favicon.ico">
    <link rel="preload" href="/font.woff2" as="font"><link rel="manifest" href="/app.webmanifest">
    <link rel="alternate" href="/feed.xml"><link rel="canonical" href="/canonical">
    <meta property="og:image" content="https://cdn.test/og.png"><meta name="description" content="x">
    <script src="/js/app.js"></script><script>var s = '<img src="/in-script.png">';</script>
  </head><body>
    <img src="/img/a.png" alt="A" srcset="/img/a-2x.png 2x, /img/a,3x.png 3x">
    <picture><source srcset="/img/b.webp 1x, /img/b@2.webp 2x" type="image/webp"><img src="/img/b.png"></picture>
    <video src="/media/v.mp4"><source src="/media/v.webm"></video><audio src="/media/a.mp3"></audio>
    <iframe src="https://player.test/embed/1" title="Player"></iframe><object data="/doc.pdf"></object>
    <img src="data:image/png;base64,AAAA"><img src="#"><template><img src="/in-template.png"></template>
    <a href="/img/a.png">the image again</a><img src="/page.html#x">
  </body>`;

  it('collects each resource once, naming its element, skipping inline data and templates', () => {
    const c = collect(html);
    expect(c.links.map((l) => [new URL(l.url).pathname, l.element])).to.deep.equal([
      ['/css/site.css', 'link'],
      ['/favicon.ico', 'link'],
      ['/font.woff2', 'link'],
      ['/app.webmanifest', 'link'],
      // Head links that name other forms of the page are checked too (decision 0302).
      ['/feed.xml', 'link'],
      ['/canonical', 'link'],
      ['/og.png', 'meta'],
      ['/js/app.js', 'script'],
      ['/img/a.png', 'img'],
      ['/img/a-2x.png', 'img'],
      ['/img/a,3x.png', 'img'],
      ['/img/b.webp', 'source'],
      ['/img/b@2.webp', 'source'],
      ['/img/b.png', 'img'],
      ['/media/v.mp4', 'video'],
      ['/media/v.webm', 'source'],
      ['/media/a.mp3', 'audio'],
      ['/embed/1', 'iframe'],
      ['/doc.pdf', 'object'],
      ['/page.html', 'img'],
    ]);
    const byPath = new Map(c.links.map((l) => [new URL(l.url).pathname, l]));
    // One record per URL: the anchor to the image merges into the img record, which it makes followable.
    expect(byPath.get('/img/a.png')).to.include({ element: 'img', text: 'A', viaAnchor: true });
    expect(byPath.get('/css/site.css')).to.include({ rel: 'stylesheet' });
    expect(byPath.get('/css/site.css')?.viaAnchor).to.equal(undefined);
    expect(byPath.get('/embed/1')).to.include({ type: 'external', text: 'Player' });
    // A resource with a fragment is its URL without it, like any link checked.
    expect(byPath.get('/page.html')?.fragments).to.deep.equal(['x']);
  });

  it('collects anchors only unless asked (link extraction keeps the spec counts)', () => {
    const c = collect(html, false);
    expect(c.links.map((l) => [new URL(l.url).pathname, l.element])).to.deep.equal([['/img/a.png', 'a']]);
  });

  it('splits srcset as the HTML standard does', () => {
    expect(srcsetUrls('a.png 1x, b.png 2x')).to.deep.equal(['a.png', 'b.png']);
    // A comma inside a URL is part of it; one that ends it (or stands apart) separates candidates.
    expect(srcsetUrls(' a.png,b.png , c.png 100w')).to.deep.equal(['a.png,b.png', 'c.png']);
    expect(srcsetUrls('a.png, b.png,c.png')).to.deep.equal(['a.png', 'b.png,c.png']);
    expect(srcsetUrls('a,1.png 1x, b.png (max-width: 1px, 2px) 2x, c.png')).to.deep.equal([
      'a,1.png',
      'b.png',
      'c.png',
    ]);
    expect(srcsetUrls('data:image/png;base64,AA== 1x')).to.deep.equal(['data:image/png;base64,AA==']);
    expect(srcsetUrls(' , ,')).to.deep.equal([]);
  });
});

describe('link options', () => {
  it('checks each option and names the field of a bad value', () => {
    expect(refused({ include: Array.from({ length: 51 }, () => '**') })).to.match(/^include has more than 50/);
    expect(refused({ exclude: ['**', '[z-a]'] })).to.match(/^exclude\[1\] is not a valid glob/);
    expect(refused({ exclude: [''] })).to.match(/^exclude\[0\] must be a glob/);
    expect(refused({ acceptStatus: ['200-299', '99'] })).to.match(/^acceptStatus\[1\]/);
    expect(refused({ acceptStatus: ['300-200'] })).to.match(/^acceptStatus\[0\]/);
    expect(refused({ acceptStatus: Array.from({ length: 21 }, () => '200') })).to.match(/^acceptStatus has more/);
    expect(refused({ maxPages: 0 })).to.match(/^maxPages/);
    expect(refused({ maxPages: 251 })).to.match(/^maxPages/);
    expect(refused({ maxDepth: 21 })).to.match(/^maxDepth/);
    expect(refused({ skipFragments: ['/**', ''] })).to.match(/^skipFragments\[1\] must be a glob/);
    expect(scanOptionsOf(message({ skipFragments: ['/**'], githubAnchors: true }))).to.deep.equal({
      skipFragments: ['/**'],
      githubAnchors: true,
    });
    for (const name of ['Host', 'connection', 'Transfer-Encoding', 'Upgrade', 'Proxy-Authorization', 'User-Agent'])
      expect(refused({ headers: { [name]: 'x' } })).to.equal(`headers may not set ${name}`);
    expect(refused({ headers: { 'Bad Name': 'x' } })).to.match(/^headers has an invalid header name/);
    expect(refused({ headers: { 'X-A': 'a\r\nX-B: b' } })).to.match(/^headers\.X-A must be/);
    expect(refused({ headers: { 'X-A': '1', 'x-a': '2' } })).to.equal('headers names x-a twice');
    const eleven = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`X-${i}`, 'v']));
    expect(refused({ headers: eleven })).to.match(/^headers has more than 10/);
    expect(scanOptionsOf(message({ headers: { Authorization: 'Basic eA==', Cookie: 'a=b' } }))).to.deep.equal({
      headers: { authorization: 'Basic eA==', cookie: 'a=b' },
    });
  });

  it('holds each bound crawl.proto declares: the bound passes, one step past it is refused', () => {
    const { fields } = contract;
    const accepted = (options: Partial<LinkOptions>) => expect(() => scanOptionsOf(message(options))).to.not.throw();
    for (const name of ['include', 'exclude', 'skipFragments'] as const) {
      const { maxItems, maxChars } = fields[name].bounds;
      accepted({ [name]: Array.from({ length: maxItems }, () => '**') });
      expect(refused({ [name]: Array.from({ length: maxItems + 1 }, () => '**') })).to.match(new RegExp(`^${name} `));
      accepted({ [name]: ['a'.repeat(maxChars)] });
      expect(refused({ [name]: ['a'.repeat(maxChars + 1)] })).to.match(new RegExp(`^${name}\\[0\\]`));
    }
    const statuses = fields.acceptStatus.bounds.maxItems;
    accepted({ acceptStatus: Array.from({ length: statuses }, () => '200') });
    expect(refused({ acceptStatus: Array.from({ length: statuses + 1 }, () => '200') })).to.match(/^acceptStatus /);
    for (const name of ['maxPages', 'maxDepth'] as const) {
      const { min, max } = fields[name].bounds;
      accepted({ [name]: min });
      accepted({ [name]: max });
      expect(refused({ [name]: min - 1 })).to.match(new RegExp(`^${name} `));
      expect(refused({ [name]: max + 1 })).to.match(new RegExp(`^${name} `));
    }
    const { maxItems, maxChars } = fields.headers.bounds;
    const headers = (n: number, value = 'v') =>
      Object.fromEntries(Array.from({ length: n }, (_, i) => [`X-${i}`, value]));
    accepted({ headers: headers(maxItems, 'v'.repeat(maxChars)) });
    expect(refused({ headers: headers(maxItems + 1) })).to.match(/^headers has more than/);
    expect(refused({ headers: headers(1, 'v'.repeat(maxChars + 1)) })).to.match(/^headers\.X-0 must be/);
  });

  it('matches URL globs: * within a segment, ** across, and leaves in-page anchors alone', () => {
    const rules = compileScan(
      { include: ['https://www.example.com/**', 'https://cdn.test/**'], exclude: ['**/private/**', '**/*.pdf'] },
      page,
      true,
    );
    const link = (url: string, type = 'internal') => inScan({ url, type }, rules);
    expect(link('https://www.example.com/docs/a.html')).to.equal(true);
    expect(link('https://www.example.com/private/a.html')).to.equal(false);
    expect(link('https://www.example.com/files/a.pdf')).to.equal(false);
    expect(link('https://other.test/', 'external')).to.equal(false);
    expect(link('https://cdn.test/x.png', 'external')).to.equal(true);
    expect(link('https://www.example.com/private/#x', 'anchor')).to.equal(true);
    expect(compilePattern('https://*.test/*').matches('https://cdn.test/a/b')).to.equal(false);
    const external = compileScan({ checkExternal: false }, page, true);
    expect(inScan({ url: 'https://cdn.test/x.png', type: 'external' }, external)).to.equal(false);
    expect(inScan({ url: 'https://www.example.com/x', type: 'internal' }, external)).to.equal(true);
  });

  it('matches a hostile pattern against a long URL in linear time', () => {
    const re = compilePattern(`**/${'*a'.repeat(40)}*b`);
    const started = performance.now();
    expect(re.matches(`https://example.com/${'a'.repeat(8_000)}`)).to.equal(false);
    // A backtracking engine takes hours here; a generous bound, so load never fails the test.
    expect(performance.now() - started).to.be.below(5_000);
  });

  it('grades accepted statuses ok, a redirect only when its first status is accepted', () => {
    const link: FoundLink = {
      url: 'https://www.example.com/x',
      originalHref: '/x',
      text: '',
      rel: undefined,
      type: 'internal',
      scheme: 'https',
      element: 'img',
    };
    const accepts = compileScan({ acceptStatus: ['403', '300-399'] }, page, true).accepts;
    const grade = (status: number, firstStatus = status, redirects = 0) =>
      gradeLink(
        link,
        { status, firstStatus, redirects, finalUrl: redirects ? 'https://x.test/' : undefined },
        [],
        accepts,
      ).record;
    expect(grade(403)).to.include({ severity: 'ok', statusCode: 403, element: 'img' });
    expect(grade(403).reason).to.contain('accepted by acceptStatus');
    expect(grade(404)).to.include({ severity: 'broken' });
    expect(grade(200, 301, 1)).to.include({ severity: 'ok', redirected: true });
    expect(grade(404, 301, 1)).to.include({ severity: 'broken' });
    const none = gradeLink(link, { status: 200, firstStatus: 301, redirects: 1, finalUrl: 'https://x.test/' }).record;
    expect(none).to.include({ severity: 'warning' });
  });
});
