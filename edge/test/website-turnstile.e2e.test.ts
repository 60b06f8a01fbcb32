import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import type { Browser } from 'puppeteer-core';
import { launchChromium } from './browser-helpers.js';

// The page's globals in the callbacks puppeteer runs there.
declare const document: any;

/**
 * Cloudflare's widget script, as far as the page uses it: it renders into the container and hands
 * the page a token. The real script cannot be fetched here; Cloudflare's side is the fake, the page
 * and billing's verification are real.
 */
const FAKE_WIDGET = `window.turnstile = {
  render(container, options) {
    const box = document.createElement('p');
    box.textContent = 'turnstile widget for ' + options.sitekey;
    container.append(box);
    setTimeout(() => options.callback('good-token-from-widget'), 50);
    return 'widget-1';
  },
  remove() {},
};`;

/** Issue 15: with Turnstile configured, the page shows Cloudflare's widget instead of the proof of work. */
describe('website: Turnstile challenge in the page', function () {
  this.timeout(90_000);
  let site: FixtureSite;
  let stack: TestStack;
  let browser: Browser;
  let verifier: http.Server;
  const verified: string[] = [];

  before(async () => {
    site = await startFixtureSite();
    verifier = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        const form = new URLSearchParams(body);
        verified.push(form.get('response') ?? '');
        const ok = form.get('secret') === 'turnstile-secret' && form.get('response')?.startsWith('good-');
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(ok ? { success: true } : { success: false, 'error-codes': ['invalid-input-response'] }));
      });
    });
    await new Promise<void>((resolve) => verifier.listen(0, '127.0.0.1', resolve));
    const { port } = verifier.address() as AddressInfo;
    const turnstile = { TURNSTILE_SECRET: 'turnstile-secret', TURNSTILE_SITE_KEY: 'site-key-1' };
    stack = await startTestStack({
      allowTargets: '127.0.0.0/8',
      envFor: {
        edge: { TURNSTILE_SITE_KEY: turnstile.TURNSTILE_SITE_KEY },
        billing: { ...turnstile, TURNSTILE_VERIFY_URL: `http://127.0.0.1:${port}/siteverify` },
      },
    });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await stack?.stop();
    await site?.close();
    verifier?.close();
  });

  it('allows only Cloudflare’s widget in the CSP, renders it, and runs the call with its token', async () => {
    const csp = (await fetch(`${stack.edgeUrl}/play/link-extract`)).headers.get('content-security-policy') ?? '';
    expect(csp).to.include("script-src 'self' https://challenges.cloudflare.com");
    expect(csp).to.include("frame-src 'self' https://challenges.cloudflare.com");
    expect(csp).to.not.include('unsafe-inline');

    const page = await browser.newPage();
    await page.setRequestInterception(true);
    const widgetLoads: string[] = [];
    page.on('request', (request) => {
      if (request.url().startsWith('https://challenges.cloudflare.com/')) {
        widgetLoads.push(request.url());
        void request.respond({ status: 200, contentType: 'text/javascript', body: FAKE_WIDGET });
      } else void request.continue();
    });
    await page.goto(`${stack.edgeUrl}/play/link-extract`);
    await page.waitForFunction(() => document.getElementById('main')?.dataset.ready === '/play/link-extract');
    await page.$eval(
      '#field-url',
      (el: any, value: string) => {
        el.value = value;
      },
      site.url('/links?n=3'),
    );
    await page.click('form.play button[type=submit]');
    await page.waitForSelector('.result table', { timeout: 30_000 });
    expect(widgetLoads).to.deep.equal(['https://challenges.cloudflare.com/turnstile/v0/api.js?render=explicit']);
    expect(await page.$eval('#challenge-widget', (el: any) => el.textContent)).to.include('site-key-1');
    expect(verified).to.include('good-token-from-widget');
    expect((await page.browserContext().cookies()).map((c) => c.name)).to.include('wu_clearance');
    expect(await page.$eval('.result', (el: any) => el.textContent)).to.include(site.url('/page/0'));
    await page.close();
  });
});
