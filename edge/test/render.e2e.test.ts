import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  addRenderPages,
  FEATURE_OFF,
  FEATURE_ON,
  LAZY_COLOUR,
  LAZY_IMAGE,
  type RenderPages,
} from '@webutil/scripts/fixture-pages';
import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { freePort } from '@webutil/scripts/local-stack';
import { expect } from 'chai';
import { KnownDevices } from 'puppeteer-core';
import sharp from 'sharp';
import { creditsHeader, expectFailure } from './billing-helpers.js';
import {
  expectNoOpenPages,
  expectRenderFailure,
  metric,
  pdfPageColour,
  pixel,
  type RenderStack,
  readPdf,
  render,
  rendered,
  serverTiming,
  startRenderStack,
} from './render-helpers.js';

/** Every file under a directory, recursively. */
const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(path.join(dir, entry.name)) : [path.join(dir, entry.name)],
  );

const hex = (colour: string) => [1, 3, 5].map((i) => Number.parseInt(colour.slice(i, i + 2), 16));

/** A cache hit's Server-Timing: the spec's stages, in its order, all 0 (no browser), then total. */
function expectCachedTiming(res: Response, last: 'encode' | 'render'): void {
  const timing = serverTiming(res);
  expect(Object.keys(timing).join(' ')).to.equal(`queue page nav net scroll settle ${last} total`);
  expect(Object.entries(timing).filter(([stage, ms]) => stage !== 'total' && ms !== 0)).to.deep.equal([]);
  expect(timing.total).to.be.a('number').and.at.least(0);
}
const near = (a: number[], b: number[]) => a.every((v, i) => Math.abs(v - (b[i] ?? 0)) <= 8);

/**
 * Rendering through the REST edge, against fixture pages on 127.0.0.1. Only 127.0.0.1 is allowed,
 * so 127.0.0.2 stands for the internal network; a fixture DNS server gives the render proxy names.
 */
describe('rendering, through the REST edge', function () {
  this.timeout(60_000);
  let site: FixtureSite;
  let internal: FixtureSite;
  let pages: RenderPages;
  let stack: RenderStack;
  // The render service's home directory, where Chromium would put a download it let through.
  const home = mkdtempSync(path.join(os.tmpdir(), 'webutil-render-home-'));

  before(async () => {
    [site, internal] = await Promise.all([startFixtureSite(), startFixtureSite({ host: '127.0.0.2' })]);
    pages = addRenderPages(site);
    // The network wait bound shortened (3 s by default) so the never-idle page is quick to test.
    stack = await startRenderStack({
      allowTargets: '127.0.0.1/32',
      render: { RENDER_NET_MAX_MS: '1500', HOME: home, XDG_DOWNLOAD_DIR: path.join(home, 'Downloads') },
    });
  });
  after(async () => {
    await stack?.stop();
    await Promise.all([site?.close(), internal?.close()]);
    rmSync(home, { recursive: true, force: true });
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

    it('emulates a desktop by default and a phone on request: width, scale, touch and user agent', async () => {
      const [desktop, mobile] = await Promise.all([
        rendered(stack, 'screenshot', { url: site.url('/page/device?shot=desktop') }),
        rendered(stack, 'screenshot', { url: site.url('/page/device?shot=mobile'), device: 'mobile' }),
      ]);
      expect((await sharp(desktop.file).metadata()).width).to.equal(1280);
      // iPhone 15 Pro: 393 CSS px at scale 3.
      expect((await sharp(mobile.file).metadata()).width).to.equal(1179);
      // The page's stripes: a coarse pointer (y 0-100 CSS px), then touch points (100-200).
      const stripes = async (file: Buffer, scale: number) =>
        Promise.all([50, 150].map((y) => pixel(file, 10 * scale, y * scale)));
      expect(await stripes(desktop.file, 1)).to.deep.equal([hex(FEATURE_OFF), hex(FEATURE_OFF)]);
      expect(await stripes(mobile.file, 3)).to.deep.equal([hex(FEATURE_ON), hex(FEATURE_ON)]);
      const desktopAgent = pages.userAgents.get('/page/device?shot=desktop');
      expect(desktopAgent)
        .to.match(/Chrome\//)
        .and.not.match(/Headless|Mobile/);
      expect(pages.userAgents.get('/page/device?shot=mobile')).to.equal(KnownDevices['iPhone 15 Pro'].userAgent);
    });

    it('emulates prefers-color-scheme, light by default, with png as the default format', async () => {
      const [light, dark] = await Promise.all([
        rendered(stack, 'screenshot', { url: site.url('/page/scheme') }),
        rendered(stack, 'screenshot', { url: site.url('/page/scheme'), colorScheme: 'dark' }),
      ]);
      expect(light.body).to.include({ format: 'png', fileExtension: 'png' });
      expect(await sharp(light.file).metadata()).to.include({ format: 'png', width: 1280 });
      expect(await pixel(light.file, 640, 400)).to.deep.equal([255, 255, 255]);
      expect(await pixel(dark.file, 640, 400)).to.deep.equal([0, 0, 0]);
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
      expectCachedTiming(again.res, 'encode');
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
    // Paper sizes in points (1/72 in), as Chromium prints them; the layout width the page saw.
    const cases: [Record<string, string>, number, number, number][] = [
      // Nothing but the URL: A4 portrait, laid out on the desktop viewport.
      [{}, 595, 842, 1280],
      [{ pageFormat: 'letter', orientation: 'portrait' }, 612, 792, 1280],
      [{ pageFormat: 'legal' }, 612, 1008, 1280],
      [{ pageFormat: 'a4', orientation: 'landscape' }, 842, 595, 1280],
      [{ pageFormat: 'a0', orientation: 'portrait' }, 2384, 3370, 1280],
      [{ pageFormat: 'a6', orientation: 'landscape' }, 420, 298, 1280],
      // A phone's layout viewport (iPhone 15 Pro, 393 CSS px) before printing.
      [{ deviceType: 'mobile' }, 595, 842, 393],
    ];
    it('prints the page format, orientation and viewport asked for (A4 portrait, desktop by default)', async () => {
      const results = await Promise.all(
        cases.map(([options], i) =>
          rendered(stack, 'url-to-pdf', { url: site.url(`/page/device?pdf=${i}`), ...options }),
        ),
      );
      for (const [i, [options, width, height, layoutWidth]] of cases.entries()) {
        const { res, body, file } = results[i]!;
        const what = JSON.stringify(options);
        expect(body).to.have.all.keys('success', 'filename', 'sizeBytes', 'durationMs');
        expect(body.filename).to.match(/^[A-Za-z0-9_-]{32}\.pdf$/);
        expect(res.headers.get('x-pdf-cache')).to.equal('MISS');
        expect(Object.keys(serverTiming(res)).join(' ')).to.equal('queue page nav net scroll settle render total');
        const pdf = await readPdf(file);
        expect(Math.round(pdf.width), `${what} width`).to.be.closeTo(width, 2);
        expect(Math.round(pdf.height), `${what} height`).to.be.closeTo(height, 2);
        expect(pdf.text, what).to.contain(`layout width ${layoutWidth}`);
      }
      const phone = KnownDevices['iPhone 15 Pro'].userAgent;
      expect(pages.userAgents.get(`/page/device?pdf=${cases.length - 1}`)).to.equal(phone);
      expect(pages.userAgents.get('/page/device?pdf=0')).to.not.equal(phone);
    });

    it('prints backgrounds in the theme asked for; a repeat is a cache hit, any changed option a miss', async () => {
      const url = site.url('/page/scheme?pdf=1');
      const dark = await rendered(stack, 'url-to-pdf', { url, theme: 'dark' });
      expect(await pdfPageColour(dark.file)).to.deep.equal([0, 0, 0]);
      const again = await render(stack, 'url-to-pdf', { url, theme: 'dark' });
      expect(again.res.headers.get('x-pdf-cache')).to.equal('HIT');
      expect(again.body.filename).to.equal(dark.body.filename);
      expectCachedTiming(again.res, 'render');
      const changes = [
        { theme: 'light' },
        { pageFormat: 'a5' },
        { orientation: 'landscape' },
        { deviceType: 'mobile' },
      ];
      const misses = await Promise.all(
        changes.map((changed) => rendered(stack, 'url-to-pdf', { url, theme: 'dark', ...changed })),
      );
      for (const [i, miss] of misses.entries()) {
        expect(miss.res.headers.get('x-pdf-cache'), JSON.stringify(changes[i])).to.equal('MISS');
        expect(miss.body.filename).to.not.equal(dark.body.filename);
      }
      expect(await pdfPageColour(misses[0]!.file)).to.deep.equal([255, 255, 255]);
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

    it('refuses file:, chrome:, data: and other non-web URLs, in any case (Gotenberg CVE-2026-40280)', async () => {
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

    it('refuses a name that rebinds to a private address once checked (Gotenberg GHSA-2pmr-289p-44r3)', async () => {
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

    it('renders a page whose subresources, frames, fetches, websockets, workers aim inside, without them', async () => {
      const url = site.url(`/page/embeds?internal=${encodeURIComponent(internal.origin)}`);
      const { file } = await rendered(stack, 'url-to-pdf', { url });
      const pdf = await readPdf(file);
      expect(pdf.text).to.contain('page rendered');
      expect(pdf.text).to.not.match(/INTERNAL|root:x:0:0/);
      await rendered(stack, 'screenshot', { url });
    });

    it('answers a target it cannot reach with 400 target_unreachable, in the wording every route uses', async () => {
      // The service's own check; the proxy's connection; Chromium's own failure (plain HTTP in a TLS tunnel).
      const closedPort = await freePort();
      const failures: [string, string][] = [
        ['http://no-such-host.example.com/', 'the host name does not resolve (ENOTFOUND)'],
        [`http://127.0.0.1:${closedPort}/`, 'the connection was refused (ECONNREFUSED)'],
        [`https://127.0.0.1:${site.port}/`, 'TLS error: handshake failed (ERR_SSL_PROTOCOL_ERROR)'],
      ];
      const before = creditsHeader(await stack.api('/v1/quota'));
      for (const [url, message] of failures) {
        for (const route of ['screenshot', 'url-to-pdf'] as const) {
          expect(expectRenderFailure(await render(stack, route, { url }), 400, 'target_unreachable'), url).to.equal(
            message,
          );
        }
      }
      expect(creditsHeader(await stack.api('/v1/quota'))).to.equal(before);
    });
  });

  describe('pages that fight back', () => {
    it('dismisses dialogs, closes pop-ups and refuses downloads', async () => {
      const refused = await metric(stack, 'webutil_render_downloads_refused_total');
      const [shot] = await Promise.all([
        rendered(stack, 'screenshot', { url: site.url('/page/hostile') }),
        rendered(stack, 'url-to-pdf', { url: site.url('/page/hostile') }),
      ]);
      expect(shot.body.clipped).to.equal(false);
      // The page turns red when a pop-up it opened outlives its check (blue when none opened).
      expect(await pixel(shot.file, 640, 400)).to.deep.equal([255, 255, 255]);
      // One download per render, each refused by Chromium as it began; none written anywhere.
      expect(await metric(stack, 'webutil_render_downloads_refused_total')).to.equal(refused + 2);
      expect(filesUnder(home).filter((file) => /\.bin|crdownload/.test(file))).to.deep.equal([]);
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
