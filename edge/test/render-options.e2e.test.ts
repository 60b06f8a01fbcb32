import { addRenderPages, BOX, CONSENT_BANNER, FEATURE_OFF, FEATURE_ON } from '@webutil/scripts/fixture-pages';
import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { expect } from 'chai';
import sharp from 'sharp';
import { creditsHeader, expectFailure } from './billing-helpers.js';
import {
  download,
  expectNoOpenPages,
  expectRenderFailure,
  pdfPageColour,
  pixel,
  type RenderStack,
  readPdf,
  render,
  rendered,
  startRenderStack,
} from './render-helpers.js';

const hex = (colour: string) => [1, 3, 5].map((i) => Number.parseInt(colour.slice(i, i + 2), 16));
const near = (a: number[], b: number[]) => a.every((v, i) => Math.abs(v - (b[i] ?? 0)) <= 8);
const MM = 72 / 25.4;

/**
 * The optional render options (issue 23) through the REST edge, against fixture pages on
 * 127.0.0.1: each option's effect measured in the image's pixels or the PDF's text, each bad value
 * a 400 naming the field with nothing spent.
 */
/** The capture area this file's render service allows (device pixels; the default is 80 M). */
const MAX_AREA = 8_000_000;

describe('render options, through the REST edge', function () {
  this.timeout(90_000);
  let site: FixtureSite;
  let stack: RenderStack;

  before(async () => {
    site = await startFixtureSite();
    addRenderPages(site);
    stack = await startRenderStack({
      allowTargets: '127.0.0.1/32',
      render: { RENDER_SELECTOR_WAIT_MAX_MS: '2000', RENDER_MAX_CAPTURE_AREA: String(MAX_AREA) },
    });
  });
  after(async () => {
    await stack?.stop();
    await site?.close();
  });

  const spent = async <T>(work: () => Promise<T>): Promise<[T, number]> => {
    const before = creditsHeader(await stack.api('/v1/quota'));
    const result = await work();
    return [result, before - creditsHeader(await stack.api('/v1/quota'))];
  };

  describe('POST /v1/screenshot', () => {
    it('captures an element at its box × scale, a viewport, hidden selectors, CSS and a quality', async () => {
      const url = site.url('/page/box');
      const [element, viewportOnly, plain, cleaned, low, high] = await Promise.all([
        rendered(stack, 'screenshot', { url: `${url}?e=1`, selector: '#box', deviceScaleFactor: 2 }),
        rendered(stack, 'screenshot', { url: `${url}?e=2`, viewport: { width: 800, height: 600 }, fullPage: false }),
        rendered(stack, 'screenshot', { url: `${url}?e=3` }),
        rendered(stack, 'screenshot', {
          url: `${url}?e=4`,
          hideSelectors: ['#banner', '.absent'],
          css: 'html, body { background: #000 !important }',
        }),
        rendered(stack, 'screenshot', { url: `${url}?e=5`, format: 'jpeg', quality: 5 }),
        rendered(stack, 'screenshot', { url: `${url}?e=5`, format: 'jpeg', quality: 100 }),
      ]);
      expect(await sharp(element.file).metadata()).to.include({ width: BOX.width * 2, height: BOX.height * 2 });
      expect(await pixel(element.file, BOX.width, BOX.height)).to.deep.equal(hex(BOX.colour));
      expect(await sharp(viewportOnly.file).metadata()).to.include({ width: 800, height: 600 });
      // The default: the desktop's width, the banner over the top.
      expect(await sharp(plain.file).metadata()).to.include({ width: 1280 });
      expect(await pixel(plain.file, 1000, 40)).to.deep.equal(hex(FEATURE_OFF));
      expect(await pixel(cleaned.file, 1000, 40)).to.deep.equal([0, 0, 0]);
      expect(await pixel(cleaned.file, BOX.left + 10, BOX.top + 10)).to.deep.equal(hex(BOX.colour));
      expect(low.body.sizeBytes).to.be.below(high.body.sizeBytes);
    });

    it('bounds an element capture in device pixels: widest viewport, then area, saying clipped', async () => {
      const [wide, large] = await Promise.all([
        rendered(stack, 'screenshot', { url: site.url('/page/wide'), selector: '#wide' }),
        rendered(stack, 'screenshot', {
          url: site.url('/page/wide?w=4000&h=2000'),
          selector: '#wide',
          deviceScaleFactor: 2,
        }),
      ]);
      // 6000 × 200 CSS px: cut at the widest viewport's 3840.
      expect(await sharp(wide.file).metadata()).to.include({ width: 3840, height: 200 });
      expect(await pixel(wide.file, 3839, 199)).to.deep.equal(hex(BOX.colour));
      expect(wide.body.clipped).to.equal(true);
      expect(wide.res.headers.get('x-screenshot-clipped')).to.equal('true');
      // 4000 × 2000 at scale 2: 7680 device px wide, and as tall as the area leaves (in whole CSS px).
      const height = 2 * Math.floor(MAX_AREA / 7680 / 2);
      expect(await sharp(large.file).metadata()).to.include({ width: 7680, height });
      expect(large.body.clipped).to.equal(true);
    });

    it('waits for a late element or for a delay; no match is 400 selector_not_found, spending nothing', async () => {
      const url = site.url('/page/box?late=1');
      const [waited, delayed] = await Promise.all([
        rendered(stack, 'screenshot', { url, waitForSelector: '#late', selector: '#late' }),
        // The late block comes 1.5 s after load; the delay starts once the page settled, after load.
        rendered(stack, 'screenshot', { url: `${url}&d=1`, delay: 2_000, selector: '#late' }),
      ]);
      for (const { file } of [waited, delayed]) {
        expect(await sharp(file).metadata()).to.include({ width: 100, height: 100 });
        expect(near(await pixel(file, 50, 50), hex(FEATURE_ON))).to.equal(true);
      }
      const [failures, credits] = await spent(() =>
        Promise.all([
          render(stack, 'screenshot', { url: `${url}&n=1`, selector: '#nothing' }),
          render(stack, 'screenshot', { url: `${url}&n=2`, waitForSelector: '#never' }),
          render(stack, 'screenshot', { url: `${url}&n=3`, hideSelectors: ['#banner', 'div['] }),
        ]),
      );
      expect(expectRenderFailure(failures[0], 400, 'selector_not_found')).to.match(/^selector: /);
      expect(expectRenderFailure(failures[1], 400, 'selector_not_found')).to.match(/^waitForSelector: /);
      expect(expectRenderFailure(failures[2], 400, 'invalid_selector')).to.match(/^hideSelectors\[1\] /);
      expect(credits).to.equal(0);
      await expectNoOpenPages(stack);
    });

    it('answers from the cache unless cacheTtl is 0; the new options are part of the cache key', async () => {
      const url = site.url('/page/simple?ttl=1');
      const first = await rendered(stack, 'screenshot', { url, hideSelectors: ['p'] });
      const again = await render(stack, 'screenshot', { url, hideSelectors: ['p'] });
      expect(again.res.headers.get('x-screenshot-cache')).to.equal('HIT');
      const changes = [{ cacheTtl: 0 }, { hideSelectors: ['h1'] }, { css: 'p{color:red}' }, { fullPage: false }];
      for (const change of changes) {
        const miss = await render(stack, 'screenshot', { url, hideSelectors: ['p'], ...change });
        expect(miss.res.headers.get('x-screenshot-cache'), JSON.stringify(change)).to.equal('MISS');
        expect(miss.body.filename).to.not.equal(first.body.filename);
      }
    });
  });

  describe('blockAds and blockCookieBanners', () => {
    it('never requests an EasyList ad URL and removes a consent banner, each only when asked', async () => {
      const adRequests = (b: string) => site.requests.filter((r) => r.path === `/ads/banners/ad.gif?b=${b}`).length;
      const [plain, ads, banners, pdf] = await Promise.all([
        rendered(stack, 'screenshot', { url: site.url('/page/consent?b=0') }),
        rendered(stack, 'screenshot', { url: site.url('/page/consent?b=1'), blockAds: true }),
        rendered(stack, 'screenshot', { url: site.url('/page/consent?b=2'), blockCookieBanners: true }),
        rendered(stack, 'url-to-pdf', { url: site.url('/page/consent?b=3'), blockAds: true, blockCookieBanners: true }),
      ]);
      expect(
        [0, 1, 2, 3].map((b) => adRequests(String(b))),
        'ad requests of each render',
      ).to.deep.equal([1, 0, 1, 0]);
      expect(await pixel(plain.file, 1000, 50)).to.deep.equal(hex(CONSENT_BANNER));
      expect(await pixel(ads.file, 1000, 50)).to.deep.equal(hex(CONSENT_BANNER));
      expect(await pixel(banners.file, 1000, 50)).to.deep.equal([255, 255, 255]);
      const text = (await readPdf(pdf.file)).text;
      expect(text).to.contain('Consent').and.not.contain('We use cookies');
    });
  });

  describe('POST /v1/url-to-pdf', () => {
    it('prints margins, a legible header and footer, page ranges and an outline', async () => {
      const url = site.url('/page/long?n=3');
      const [plain, margins, numbered, ranged, outlined] = await Promise.all([
        rendered(stack, 'url-to-pdf', { url }),
        rendered(stack, 'url-to-pdf', { url, margin: { top: '20mm', left: '1in' } }),
        rendered(stack, 'url-to-pdf', { url, headerFooter: { header: 'title', footer: 'page-of-total' } }),
        rendered(stack, 'url-to-pdf', { url: site.url('/page/long?n=5'), pageRanges: '2-3' }),
        rendered(stack, 'url-to-pdf', { url, outline: true }),
      ]);
      const heading = async (file: Buffer) => {
        const pdf = await readPdf(file);
        const item = pdf.items.find((i) => i.str === 'Section 1');
        expect(item, 'the first heading').to.not.equal(undefined);
        return { pdf, x: item!.x, fromTop: pdf.height - item!.y };
      };
      // No margin by default: the heading starts at the paper's edge.
      const bare = await heading(plain.file);
      expect(bare.x).to.be.below(2);
      const inset = await heading(margins.file);
      expect(inset.x).to.be.closeTo(72, 1.5);
      expect(inset.fromTop - bare.fromTop).to.be.closeTo(20 * MM, 1.5);

      const pdf = await readPdf(numbered.file);
      expect(pdf.pages).to.equal(3);
      expect(pdf.text).to.contain('Long document');
      for (const page of [1, 2, 3]) {
        const items = pdf.items.filter((i) => i.page === page);
        expect(items.map((i) => i.str).join(' '), `page ${page}`).to.match(new RegExp(`\\b${page}\\s*of\\s*3\\b`));
        // Legible: the footer's type is 10 pt (Chromium's own default is far smaller).
        const footer = items.find((i) => /of/.test(i.str));
        expect(footer?.height, `page ${page}'s footer, in points`).to.be.at.least(9);
      }

      const two = await readPdf(ranged.file);
      expect(two.pages).to.equal(2);
      expect(two.text).to.contain('Section 2').and.contain('Section 3').and.not.contain('Section 1');
      expect((await readPdf(outlined.file)).outline).to.include.members(['Section 1', 'Section 2', 'Section 3']);
      expect((await readPdf(plain.file)).outline).to.deep.equal([]);
    });

    it('sanitizes templates, and prints background, media type, CSS and scale as asked', async () => {
      const scheme = site.url('/page/scheme?pdf=opts');
      const template =
        '<div style="font-size:10pt">Acme <span class="pageNumber"></span>' +
        `<img src="${site.url('/tracker.png')}"><script>document.write('EVIL')</script></div>`;
      const [templated, noBackground, print, screen, scaled, plain] = await Promise.all([
        rendered(stack, 'url-to-pdf', { url: site.url('/page/long?n=1&t=1'), footerTemplate: template }),
        rendered(stack, 'url-to-pdf', { url: scheme, theme: 'dark', printBackground: false }),
        rendered(stack, 'url-to-pdf', {
          url: scheme,
          mediaType: 'print',
          css: '@media print { html, body { background: #000 !important } }',
        }),
        rendered(stack, 'url-to-pdf', {
          url: scheme,
          css: '@media print { html, body { background: #000 !important } }',
        }),
        rendered(stack, 'url-to-pdf', { url: site.url('/page/long?n=1'), scale: 0.5 }),
        rendered(stack, 'url-to-pdf', { url: site.url('/page/long?n=1') }),
      ]);
      const text = (await readPdf(templated.file)).text;
      expect(text).to.contain('Acme').and.not.contain('EVIL');
      expect(site.requests.filter((r) => r.path.startsWith('/tracker.png'))).to.deep.equal([]);
      expect(await pdfPageColour(noBackground.file)).to.deep.equal([255, 255, 255]);
      expect(await pdfPageColour(print.file)).to.deep.equal([0, 0, 0]);
      expect(await pdfPageColour(screen.file)).to.deep.equal([255, 255, 255]);
      const size = async (file: Buffer) => (await readPdf(file)).items.find((i) => i.str === 'Section 1')!.height;
      expect((await size(scaled.file)) / (await size(plain.file))).to.be.closeTo(0.5, 0.05);
    });

    it('refuses page ranges past the document with 400, spending nothing', async () => {
      const [call, credits] = await spent(() =>
        render(stack, 'url-to-pdf', { url: site.url('/page/long?n=2'), pageRanges: '5-6' }),
      );
      expect(expectRenderFailure(call, 400, 'invalid_option')).to.match(/^pageRanges/);
      expect(credits).to.equal(0);
    });
  });

  describe('one round trip', () => {
    const asFile = (route: string, body: unknown, accept: string) =>
      stack.api(`/v1/${route}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept },
        body: JSON.stringify(body),
      });

    it('answers with the file itself when Accept names its type, the fields as headers; JSON otherwise', async () => {
      const [[shot, pdf], credits] = await spent(() =>
        Promise.all([
          asFile('screenshot', { url: site.url('/page/box?bin=1'), format: 'webp' }, 'image/webp'),
          asFile('url-to-pdf', { url: site.url('/page/long?n=2&bin=1') }, 'application/pdf'),
        ]),
      );
      expect(credits).to.equal(4);
      expect(shot.status).to.equal(200);
      expect(shot.headers.get('content-type')).to.equal('image/webp');
      const filename = shot.headers.get('x-filename') ?? '';
      expect(filename).to.match(/^[A-Za-z0-9_-]{32}\.webp$/);
      expect(shot.headers.get('content-disposition')).to.equal(`inline; filename="${filename}"`);
      expect({
        format: shot.headers.get('x-format'),
        extension: shot.headers.get('x-file-extension'),
        clipped: shot.headers.get('x-clipped'),
        cache: shot.headers.get('x-screenshot-cache'),
      }).to.deep.equal({ format: 'webp', extension: 'webp', clipped: 'false', cache: 'MISS' });
      expect(Number(shot.headers.get('x-duration-ms'))).to.be.above(0);
      expect(shot.headers.get('server-timing')).to.match(/^queue;dur=.*encode;dur=.*total;dur=/);
      const bytes = Buffer.from(await shot.arrayBuffer());
      expect(shot.headers.get('x-size-bytes')).to.equal(String(bytes.length));
      expect(bytes.equals(await download(stack, filename)), 'the answer is the stored file').to.equal(true);

      expect(pdf.status).to.equal(200);
      expect(pdf.headers.get('content-type')).to.equal('application/pdf');
      const pdfBytes = Buffer.from(await pdf.arrayBuffer());
      expect(pdf.headers.get('x-size-bytes')).to.equal(String(pdfBytes.length));
      expect(pdf.headers.get('x-pdf-cache')).to.equal('MISS');
      expect(pdfBytes.equals(await download(stack, pdf.headers.get('x-filename') ?? ''))).to.equal(true);
      expect((await readPdf(pdfBytes)).pages).to.equal(2);

      // A cache hit comes as the file too; an Accept naming another type, or a wildcard, gets the JSON.
      const hit = await asFile('screenshot', { url: site.url('/page/box?bin=1'), format: 'webp' }, 'image/webp');
      expect(hit.headers.get('x-screenshot-cache')).to.equal('HIT');
      expect(Buffer.from(await hit.arrayBuffer()).equals(bytes)).to.equal(true);
      for (const accept of ['image/png', '*/*', 'image/*', 'image/webp;q=0']) {
        const res = await asFile('screenshot', { url: site.url('/page/box?bin=1'), format: 'webp' }, accept);
        expect(res.headers.get('content-type'), accept).to.match(/^application\/json/);
        expect(await res.json(), accept).to.include({ success: true, filename, format: 'webp' });
      }
    });

    it('answers a failure in the envelope whatever the Accept header, spending nothing', async () => {
      const [res, credits] = await spent(() =>
        asFile('screenshot', { url: site.url('/page/box?bin=2'), selector: '#nothing' }, 'image/png'),
      );
      await expectFailure(res, 400, 'selector_not_found');
      expect(credits).to.equal(0);
    });
  });

  describe('bad values', () => {
    const url = 'https://example.com/';
    const invalid: [string, Record<string, unknown>, string][] = [
      ['screenshot', { viewport: { width: 319, height: 600 } }, 'viewport.width'],
      ['screenshot', { viewport: { width: 800, height: 2161 } }, 'viewport.height'],
      ['screenshot', { viewport: { width: 800 } }, 'viewport.height'],
      ['screenshot', { viewport: 800 }, 'viewport'],
      ['screenshot', { deviceScaleFactor: 3.5 }, 'deviceScaleFactor'],
      ['screenshot', { deviceScaleFactor: 0.5 }, 'deviceScaleFactor'],
      ['screenshot', { fullPage: 'no' }, 'fullPage'],
      ['screenshot', { selector: '' }, 'selector'],
      ['screenshot', { selector: 'x'.repeat(1001) }, 'selector'],
      ['screenshot', { hideSelectors: Array(21).fill('p') }, 'hideSelectors'],
      ['screenshot', { hideSelectors: 'p' }, 'hideSelectors'],
      ['screenshot', { css: 'a{}'.repeat(3414) }, 'css'],
      ['screenshot', { waitForSelector: 5 }, 'waitForSelector'],
      ['screenshot', { delay: 10_001 }, 'delay'],
      ['screenshot', { delay: -1 }, 'delay'],
      ['screenshot', { format: 'jpeg', quality: 0 }, 'quality'],
      ['screenshot', { format: 'webp', quality: 50.5 }, 'quality'],
      ['screenshot', { quality: 50 }, 'quality'],
      ['screenshot', { cacheTtl: 86_401 }, 'cacheTtl'],
      ['screenshot', { blockAds: 'yes' }, 'blockAds'],
      ['screenshot', { blockCookieBanners: 1 }, 'blockCookieBanners'],
      ['url-to-pdf', { margin: { top: '51mm' } }, 'margin.top'],
      ['url-to-pdf', { margin: { left: '2in' } }, 'margin.left'],
      ['url-to-pdf', { margin: { right: '10' } }, 'margin.right'],
      ['url-to-pdf', { margin: { bottom: '5em' } }, 'margin.bottom'],
      ['url-to-pdf', { margin: { middle: '5mm' } }, 'margin'],
      ['url-to-pdf', { headerFooter: { footer: 'page_numbers' } }, 'headerFooter.footer'],
      ['url-to-pdf', { headerFooter: { header: 'logo' } }, 'headerFooter.header'],
      ['url-to-pdf', { headerTemplate: 'x'.repeat(4097) }, 'headerTemplate'],
      ['url-to-pdf', { footerTemplate: 42 }, 'footerTemplate'],
      ['url-to-pdf', { printBackground: 'false' }, 'printBackground'],
      ['url-to-pdf', { scale: 2.5 }, 'scale'],
      ['url-to-pdf', { scale: 0.05 }, 'scale'],
      ['url-to-pdf', { pageRanges: '1-3;5' }, 'pageRanges'],
      ['url-to-pdf', { pageRanges: 'all' }, 'pageRanges'],
      ['url-to-pdf', { mediaType: 'tv' }, 'mediaType'],
      ['url-to-pdf', { preferCssPageSize: 'true' }, 'preferCssPageSize'],
      ['url-to-pdf', { outline: 1 }, 'outline'],
      ['url-to-pdf', { delay: 20_000 }, 'delay'],
      ['url-to-pdf', { cacheTtl: -5 }, 'cacheTtl'],
    ];
    it('answers each value outside its bounds with 400 naming the field, spending nothing', async () => {
      const [, credits] = await spent(async () => {
        for (const [route, options, field] of invalid) {
          const res = await stack.api(`/v1/${route}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ url, ...options }),
          });
          const failure = await expectFailure(res, 400, 'invalid_request');
          expect(failure.error?.message, JSON.stringify(options)).to.contain(field);
        }
      });
      expect(credits).to.equal(0);
    });
  });
});
