import { expect } from 'chai';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import sharp from 'sharp';
import { addRenderPages, LAZY_COLOUR, LAZY_IMAGE } from '../../scripts/src/fixture-pages.js';
import { type FixtureSite, startFixtureSite } from '../../scripts/src/fixture-site.js';
import { creditsHeader, expectFailure } from './billing-helpers.js';
import {
  expectNoOpenPages,
  expectRenderFailure,
  pixel,
  type RenderStack,
  render,
  rendered,
  serverTiming,
  startRenderStack,
} from './render-helpers.js';

async function readPdf(bytes: Buffer) {
  const doc = await getDocument({ data: new Uint8Array(bytes), verbosity: 0 }).promise;
  const first = await doc.getPage(1);
  const [, , width, height] = first.view as number[];
  let text = '';
  for (let i = 1; i <= doc.numPages; i++) {
    const content = await (await doc.getPage(i)).getTextContent();
    text += content.items.map((item) => ('str' in item ? item.str : '')).join(' ');
  }
  const pages = doc.numPages;
  await doc.destroy();
  return { pages, width: width!, height: height!, text };
}

const hex = (colour: string) => [1, 3, 5].map((i) => Number.parseInt(colour.slice(i, i + 2), 16));
const near = (a: number[], b: number[]) => a.every((v, i) => Math.abs(v - (b[i] ?? 0)) <= 8);

/**
 * Rendering through the REST edge, against fixture pages on 127.0.0.1. Only 127.0.0.1 is allowed,
 * so 127.0.0.2 stands for the internal network; a fixture DNS server gives the render proxy names.
 */
describe('rendering, through the REST edge', function () {
  this.timeout(60_000);
  let site: FixtureSite;
  let internal: FixtureSite;
  let stack: RenderStack;

  before(async () => {
    [site, internal] = await Promise.all([startFixtureSite(), startFixtureSite({ host: '127.0.0.2' })]);
    addRenderPages(site);
    // The network wait bound shortened (3 s by default) so the never-idle page is quick to test.
    stack = await startRenderStack({ allowTargets: '127.0.0.1/32', render: { RENDER_NET_MAX_MS: '1500' } });
  });
  after(async () => {
    await stack?.stop();
    await Promise.all([site?.close(), internal?.close()]);
  });
  afterEach(() => {
    expect(internal.connections, 'connections that reached the internal address').to.equal(0);
  });

  describe('POST /v1/screenshot', () => {
    it('encodes each format as that format, with the spec fields, headers and 2 credits', async () => {
      const results = await Promise.all(
        (['png', 'jpeg', 'webp'] as const).map((format) =>
          rendered(stack, 'screenshot', { url: site.url(`/page/simple?f=${format}`), format }),
        ),
      );
      for (const [i, format] of (['png', 'jpeg', 'webp'] as const).entries()) {
        const { res, body, file } = results[i]!;
        expect(body).to.have.all.keys(
          'success',
          'filename',
          'sizeBytes',
          'format',
          'fileExtension',
          'clipped',
          'durationMs',
        );
        expect(body).to.include({
          success: true,
          format,
          fileExtension: format === 'jpeg' ? 'jpg' : format,
          clipped: false,
        });
        expect(body.filename).to.match(new RegExp(`^[A-Za-z0-9_-]{32}\\.${body.fileExtension}$`));
        expect(body.durationMs).to.be.a('number').above(0);
        expect((await sharp(file).metadata()).format).to.equal(format);
        expect(res.headers.get('x-screenshot-cache')).to.equal('MISS');
        expect(res.headers.get('x-screenshot-clipped')).to.equal('false');
        const timing = serverTiming(res);
        expect(Object.keys(timing).join(' ')).to.equal('queue page nav net scroll settle encode total');
        expect(timing.total).to.be.at.least(timing.encode! + timing.nav!);
      }
    });

    it('emulates desktop and mobile devices: viewport width times the device scale factor', async () => {
      const [desktop, mobile] = await Promise.all(
        ['desktop', 'mobile'].map((device) =>
          rendered(stack, 'screenshot', { url: site.url('/page/simple?d=1'), device }),
        ),
      );
      expect((await sharp(desktop!.file).metadata()).width).to.equal(1280);
      // iPhone 15 Pro: 393 CSS px at scale 3.
      expect((await sharp(mobile!.file).metadata()).width).to.equal(1179);
    });

    it('emulates prefers-color-scheme', async () => {
      const [light, dark] = await Promise.all(
        ['light', 'dark'].map((colorScheme) =>
          rendered(stack, 'screenshot', { url: site.url('/page/scheme'), colorScheme }),
        ),
      );
      expect(await pixel(light!.file, 640, 400)).to.deep.equal([255, 255, 255]);
      expect(await pixel(dark!.file, 640, 400)).to.deep.equal([0, 0, 0]);
    });

    it('scrolls the page so lazy images (native and IntersectionObserver) are in the capture', async () => {
      const n = 12;
      const { file } = await rendered(stack, 'screenshot', { url: site.url(`/page/lazy?n=${n}`) });
      for (let i = 0; i < n; i++) {
        const y = LAZY_IMAGE.top + LAZY_IMAGE.gap * i + LAZY_IMAGE.height / 2;
        expect(near(await pixel(file, LAZY_IMAGE.width / 2, y), hex(LAZY_COLOUR)), `lazy image ${i}`).to.equal(true);
      }
    });

    it('clips a 200,000 px page at the height cap and says so', async () => {
      const { res, body, file } = await rendered(stack, 'screenshot', {
        url: site.url('/page/tall?px=200000'),
        format: 'jpeg',
      });
      expect(body.clipped).to.equal(true);
      expect(res.headers.get('x-screenshot-clipped')).to.equal('true');
      expect(await sharp(file).metadata()).to.include({ width: 1280, height: 16_000 });
    });

    it('serves a repeat from the cache without the browser, and renders again when any option changes', async () => {
      const url = site.url('/page/simple?cache=1');
      const first = await rendered(stack, 'screenshot', { url, format: 'webp' });
      const seen = site.requests.length;
      const again = await render(stack, 'screenshot', { url, format: 'webp' });
      expect(again.res.headers.get('x-screenshot-cache')).to.equal('HIT');
      expect(again.body.filename).to.equal(first.body.filename);
      expect(again.credits).to.equal(first.credits - 2);
      expect(site.requests.length, 'requests to the site for a cached result').to.equal(seen);
      const changes = [{ format: 'png' }, { device: 'mobile' }, { colorScheme: 'dark' }, { url: `${url}&v=2` }];
      const misses = await Promise.all(
        changes.map((changed) => render(stack, 'screenshot', { url, format: 'webp', ...changed })),
      );
      for (const [i, miss] of misses.entries()) {
        expect(miss.res.headers.get('x-screenshot-cache'), JSON.stringify(changes[i])).to.equal('MISS');
        expect(miss.body.filename).to.not.equal(first.body.filename);
      }
    });
  });

  describe('POST /v1/url-to-pdf', () => {
    // Paper sizes in points (1/72 in), as Chromium prints them.
    const sizes: [string, string, number, number][] = [
      ['letter', 'portrait', 612, 792],
      ['legal', 'portrait', 612, 1008],
      ['a4', 'portrait', 595, 842],
      ['a4', 'landscape', 842, 595],
      ['a0', 'portrait', 2384, 3370],
      ['a6', 'landscape', 420, 298],
    ];
    it('prints the page format and orientation asked for', async () => {
      const results = await Promise.all(
        sizes.map(([pageFormat, orientation]) =>
          rendered(stack, 'url-to-pdf', { url: site.url('/page/simple?pdf=1'), pageFormat, orientation }),
        ),
      );
      for (const [i, [pageFormat, orientation, width, height]] of sizes.entries()) {
        const { res, body, file } = results[i]!;
        expect(body).to.have.all.keys('success', 'filename', 'sizeBytes', 'durationMs');
        expect(body.filename).to.match(/^[A-Za-z0-9_-]{32}\.pdf$/);
        expect(res.headers.get('x-pdf-cache')).to.equal('MISS');
        expect(Object.keys(serverTiming(res)).join(' ')).to.equal('queue page nav net scroll settle render total');
        const pdf = await readPdf(file);
        expect(Math.round(pdf.width), `${pageFormat} ${orientation} width`).to.be.closeTo(width, 2);
        expect(Math.round(pdf.height), `${pageFormat} ${orientation} height`).to.be.closeTo(height, 2);
        expect(pdf.text).to.contain('Simple page');
      }
    });

    it('prints backgrounds in the theme asked for, and answers a repeat from the cache', async () => {
      const url = site.url('/page/scheme?pdf=1');
      const dark = await rendered(stack, 'url-to-pdf', { url, theme: 'dark' });
      const again = await render(stack, 'url-to-pdf', { url, theme: 'dark' });
      expect(again.res.headers.get('x-pdf-cache')).to.equal('HIT');
      expect(again.body.filename).to.equal(dark.body.filename);
      const light = await render(stack, 'url-to-pdf', { url, theme: 'light' });
      expect(light.res.headers.get('x-pdf-cache')).to.equal('MISS');
      expect(light.body.filename).to.not.equal(dark.body.filename);
    });
  });

  describe('bad input', () => {
    const invalid: [string, Record<string, unknown>][] = [
      ['screenshot', {}],
      ['screenshot', { url: '' }],
      ['screenshot', { url: 42 }],
      ['screenshot', { url: 'https://example.com', format: 'gif' }],
      ['screenshot', { url: 'https://example.com', format: 'PNG' }],
      ['screenshot', { url: 'https://example.com', format: 'jpg' }],
      ['screenshot', { url: 'https://example.com', device: 'tablet' }],
      ['screenshot', { url: 'https://example.com', colorScheme: 'sepia' }],
      ['screenshot', { url: 'https://example.com', colorScheme: 1 }],
      ['url-to-pdf', {}],
      ['url-to-pdf', { url: 'https://example.com', deviceType: 'tablet' }],
      ['url-to-pdf', { url: 'https://example.com', pageFormat: 'tabloid' }],
      ['url-to-pdf', { url: 'https://example.com', pageFormat: 'A4' }],
      ['url-to-pdf', { url: 'https://example.com', orientation: 'sideways' }],
      ['url-to-pdf', { url: 'https://example.com', theme: 'sepia' }],
    ];
    it('answers every missing url and every value outside its allowed set with 400, spending nothing', async () => {
      const before = creditsHeader(await stack.api('/v1/quota'));
      for (const [route, body] of invalid) {
        const res = await stack.api(`/v1/${route}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        const failure = await expectFailure(res, 400, 'invalid_request');
        const field = Object.keys(body).find((k) => k !== 'url') ?? 'url';
        expect(failure.error?.message, JSON.stringify(body)).to.contain(field);
      }
      expect(creditsHeader(await stack.api('/v1/quota'))).to.equal(before);
    });

    it('refuses file:, chrome:, data: and other non-web URLs, whatever their case (Gotenberg CVE-2026-40280)', async () => {
      const before = creditsHeader(await stack.api('/v1/quota'));
      for (const url of [
        'file:///etc/passwd',
        'FILE:///etc/passwd',
        'File://localhost/etc/passwd',
        'chrome://settings',
        'chrome-error://chromewebdata/',
        'data:text/html,<h1>hi</h1>',
        'javascript:alert(1)',
        'view-source:http://127.0.0.1/',
        'about:blank',
        'blob:http://127.0.0.1/x',
      ]) {
        for (const route of ['screenshot', 'url-to-pdf'] as const) {
          const message = expectRenderFailure(await render(stack, route, { url }), 400, 'invalid_url');
          expect(message, url).to.match(/only http and https/);
        }
      }
      expect(creditsHeader(await stack.api('/v1/quota'))).to.equal(before);
    });
  });

  describe('targets that must not be reached', () => {
    const blocked = async (route: 'screenshot' | 'url-to-pdf', url: string, reason = /private or reserved/) => {
      const before = creditsHeader(await stack.api('/v1/quota'));
      const call = await render(stack, route, { url });
      expect(expectRenderFailure(call, 400, 'target_blocked'), url).to.match(reason);
      expect(call.credits).to.equal(before);
    };

    it('refuses private addresses however they are written (upper-case scheme, IPv4-mapped IPv6)', async () => {
      for (const url of [
        `http://127.0.0.2:${internal.port}/`,
        `HTTP://127.0.0.2:${internal.port}/`,
        `http://[::ffff:127.0.0.2]:${internal.port}/`,
        `http://[::ffff:7f00:2]:${internal.port}/`,
        `127.0.0.2:${internal.port}`,
        'http://169.254.169.254/latest/meta-data/',
        'http://[::1]/',
        'http://0.0.0.0/',
      ]) {
        await blocked('screenshot', url);
      }
      await blocked('url-to-pdf', `http://127.0.0.2:${internal.port}/`);
    });

    it('refuses a public-looking name that resolves to a private address', async () => {
      stack.dns.set('intranet.example.com', ['127.0.0.2']);
      await blocked('screenshot', `http://intranet.example.com:${internal.port}/`);
      await blocked('url-to-pdf', `http://intranet.example.com:${internal.port}/`);
    });

    it('refuses a name that rebinds to a private address after the first check (Gotenberg GHSA-2pmr-289p-44r3)', async () => {
      // The service's check sees 127.0.0.1; the browser's connection would get 127.0.0.2.
      stack.dns.set('rebind.example.com', (asked) => (asked === 0 ? ['127.0.0.1'] : ['127.0.0.2']));
      await blocked('screenshot', `http://rebind.example.com:${internal.port}/secret`);
    });

    it('refuses a redirect into 169.254.169.254 (Gotenberg GHSA-chwh-f6gm-r836)', async () => {
      for (const target of ['http://169.254.169.254/latest/meta-data/', `http://127.0.0.2:${internal.port}/secret`]) {
        const url = site.url(`/redirect-to?url=${encodeURIComponent(target)}`);
        await blocked('screenshot', url);
        await blocked('url-to-pdf', url);
      }
    });

    it('refuses a JavaScript redirect to 169.254.169.254', async () => {
      const url = site.url(`/page/js-redirect?to=${encodeURIComponent('http://169.254.169.254/latest/meta-data/')}`);
      await blocked('screenshot', url);
      await blocked('url-to-pdf', `${url}&pdf=1`);
    });

    it('renders a page whose subresources, frames, fetches, websockets and workers aim inside, without them', async () => {
      const url = site.url(`/page/embeds?internal=${encodeURIComponent(internal.origin)}`);
      const { file } = await rendered(stack, 'url-to-pdf', { url });
      const pdf = await readPdf(file);
      expect(pdf.text).to.contain('page rendered');
      expect(pdf.text).to.not.match(/INTERNAL|root:x:0:0/);
      await rendered(stack, 'screenshot', { url });
    });

    it('answers a name that does not resolve with 400 target_unreachable', async () => {
      const call = await render(stack, 'screenshot', { url: 'http://no-such-host.example.com/' });
      expect(expectRenderFailure(call, 400, 'target_unreachable')).to.match(/does not resolve/);
    });
  });

  describe('pages that fight back', () => {
    it('dismisses dialogs, closes pop-ups and refuses downloads', async () => {
      const { body } = await rendered(stack, 'screenshot', { url: site.url('/page/hostile') });
      expect(body.clipped).to.equal(false);
      await rendered(stack, 'url-to-pdf', { url: site.url('/page/hostile') });
    });

    it('stops an infinite scroll at the height cap', async () => {
      const { body } = await rendered(stack, 'screenshot', { url: site.url('/page/infinite') });
      expect(body.clipped).to.equal(true);
    });

    it('captures a page that never goes idle after the network wait bound', async () => {
      const { res } = await rendered(stack, 'screenshot', { url: site.url('/page/never-idle') });
      // RENDER_NET_MAX_MS (1.5 s here) ended the wait; well inside the 30 s render budget.
      expect(serverTiming(res).net).to.be.at.least(1_450);
    });

    it('answers a URL that is a download, not a page, with 400 not_renderable', async () => {
      expectRenderFailure(await render(stack, 'screenshot', { url: site.url('/attachment') }), 400, 'not_renderable');
    });

    it('leaves no page or browser context open', async () => {
      await expectNoOpenPages(stack);
    });
  });
});
