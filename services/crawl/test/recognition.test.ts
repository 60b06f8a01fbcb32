import { expect } from 'chai';
import { botWallVendor } from '../src/checking/bot-wall.js';
import { fingerprint, probePath, sameNotFoundPage } from '../src/checking/soft-404.js';
import { checkableFragment, MAX_TARGETS_PER_PAGE, TargetCollector } from '../src/page/fragments.js';

const page = (title: string, body: string) =>
  `<html><head><title>${title}</title><script>var x = "noise";</script></head><body>${body}</body></html>`;

describe('soft 404 fingerprints', () => {
  const notFound = (path: string) =>
    page(
      `Not found: ${path}`,
      `<nav>Home Shop About</nav><h1>Sorry</h1><p>We could not find ${path}. Try the search.</p>`,
    );

  it('match the same not-found page however the requested path is echoed', () => {
    const probe = fingerprint(notFound('/webutil-probe-123'), 'https://a.test/webutil-probe-123', undefined);
    const link = fingerprint(notFound('/old/product-7'), 'https://a.test/old/product-7', undefined);
    expect(sameNotFoundPage(link, probe)).to.equal(true);
  });

  it('tell a real page from the not-found page', () => {
    const probe = fingerprint(notFound('/webutil-probe-123'), 'https://a.test/webutil-probe-123', undefined);
    const real = fingerprint(
      page('Anvil 3000', '<nav>Home Shop About</nav><h1>Anvil 3000</h1><p>Heavy, reliable, ships in two days.</p>'),
      'https://a.test/anvil',
      undefined,
    );
    expect(sameNotFoundPage(real, probe)).to.equal(false);
  });

  it('match redirects to where unknown paths are sent, but not that page itself', () => {
    const probe = fingerprint(page('Home', 'welcome'), 'https://a.test/x', 'https://a.test/');
    expect(
      sameNotFoundPage(fingerprint(page('Home', 'welcome'), 'https://a.test/gone', 'https://a.test/'), probe),
    ).to.equal(true);
    expect(sameNotFoundPage(fingerprint(page('Home', 'welcome'), 'https://a.test/', undefined), probe)).to.equal(false);
  });

  it('keep a fixed-size digest of a large page and still tell the same page from another', () => {
    const words = (from: number, n: number) => Array.from({ length: n }, (_, i) => `word${toLetters(from + i)}`);
    const big = (list: string[]) => page('Catalogue', `<p>${list.join(' ')}</p>`);
    const probe = fingerprint(big(words(0, 20_000)), 'https://a.test/webutil-probe-1', undefined);
    expect(probe.words.hashes).to.have.length(256);
    expect(probe.title.hashes).to.have.length(1);
    // 2% of the words differ: the same page; half of them differ: another page.
    const same = fingerprint(big(words(400, 20_000)), 'https://a.test/old', undefined);
    const other = fingerprint(big(words(10_000, 20_000)), 'https://a.test/new', undefined);
    expect(sameNotFoundPage(same, probe)).to.equal(true);
    expect(sameNotFoundPage(other, probe)).to.equal(false);
  });

  it('probe paths differ every time', () => {
    expect(probePath()).to.match(/^\/webutil-probe-\d+$/);
    expect(probePath()).to.not.equal(probePath());
  });
});

describe('bot walls', () => {
  it('recognise a Cloudflare challenge by header or by page', () => {
    expect(botWallVendor(403, { 'cf-mitigated': 'challenge' }, '')).to.equal('Cloudflare');
    expect(botWallVendor(503, { server: 'cloudflare' }, '<title>Just a moment...</title>')).to.equal('Cloudflare');
  });

  it('recognise other vendors', () => {
    expect(botWallVendor(403, { 'x-datadome': 'protected' }, '')).to.equal('DataDome');
    expect(botWallVendor(403, { server: 'AkamaiGHost' }, '<h1>Access Denied</h1>')).to.equal('Akamai');
  });

  it('leave ordinary errors and successes alone', () => {
    expect(botWallVendor(403, { server: 'nginx' }, '<h1>Forbidden</h1>')).to.equal(undefined);
    expect(botWallVendor(404, { 'cf-mitigated': 'challenge' }, '')).to.equal(undefined);
    expect(botWallVendor(200, { server: 'cloudflare' }, 'Just a moment')).to.equal(undefined);
  });
});

describe('fragment targets', () => {
  it('are ids of any element and names of anchors', () => {
    const collector = new TargetCollector();
    collector.write('<h2 id="intro">Intro</h2><a name="legacy">x</a><div na');
    collector.write('me="not-a-target" id="sec-2"></div>');
    collector.end();
    for (const name of ['intro', 'legacy', 'sec-2']) expect(collector.targets.has(name), name).to.equal(true);
    expect(collector.targets.has('not-a-target')).to.equal(false);
    expect(collector.targets.size).to.equal(3);
  });

  it('keep at most MAX_TARGETS_PER_PAGE per page; past it a name not kept is unknown, not missing', () => {
    const collector = new TargetCollector();
    for (let i = 0; i <= MAX_TARGETS_PER_PAGE; i++) collector.write(`<p id="id-${i}"></p>`);
    collector.end();
    expect(collector.targets.size).to.equal(MAX_TARGETS_PER_PAGE);
    expect(collector.targets.has('id-0')).to.equal(true);
    expect(collector.targets.has(`id-${MAX_TARGETS_PER_PAGE}`)).to.equal(undefined);
  });

  it('worth checking: decoded, not empty, not #top, not a text fragment', () => {
    expect(checkableFragment('https://a.test/p#caf%C3%A9')).to.equal('café');
    expect(checkableFragment('https://a.test/p')).to.equal(undefined);
    expect(checkableFragment('https://a.test/p#')).to.equal(undefined);
    expect(checkableFragment('https://a.test/p#top')).to.equal(undefined);
    expect(checkableFragment('https://a.test/p#:~:text=hello')).to.equal(undefined);
  });
});

/** Digits as letters (words keep letters only). */
function toLetters(n: number): string {
  return [...String(n)].map((d) => String.fromCharCode(97 + Number(d))).join('');
}
