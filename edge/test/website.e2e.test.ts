/**
 * The website in Debian's Chromium: one browser for the file, a fresh context per visitor.
 * Screenshots of the main pages (desktop and 360 px, light and dark) are kept in
 * test-artifacts/website/ (gitignored).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { REPO_ROOT } from '@webutil/scripts/local-stack';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { bookmark, folder, xbelOf } from '@webutil/scripts/xbel-fixtures';
import type { AxeResults } from 'axe-core';
import { expect } from 'chai';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { eventually } from './billing-helpers.js';

// The page's globals in the callbacks puppeteer runs there (the tests' program has no DOM types).
declare const document: any;
declare const window: any;

const ARTIFACTS = path.join(REPO_ROOT, 'test-artifacts/website');
const PASSWORD = 'a long enough password';
const PAGES = [
  '/',
  '/play/link-extract',
  '/play/screenshot',
  '/play/broken-links-crawl',
  '/sign-in',
  '/sign-up',
  '/docs',
];
const AXE = readFileSync(path.join(REPO_ROOT, 'node_modules/axe-core/axe.min.js'), 'utf8');

/** axe-core's serious and critical violations on the page as it stands. */
async function seriousViolations(page: Page): Promise<string[]> {
  // Injected through CDP, not as a page <script>, so the CSP stays strict.
  await page.evaluate(AXE);
  return page.evaluate(async () => {
    const result: AxeResults = await window.axe.run();
    return result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  });
}

describe('website: pages in a real browser', function () {
  this.timeout(120_000);
  let site: FixtureSite;
  let stack: TestStack;
  let browser: Browser;

  let visitors = 0;
  /**
   * A fresh visitor: its own cookies, storage and client address (the stack trusts 127.0.0.1 as a
   * proxy), so each has its own anonymous daily allowance.
   */
  async function visitor(): Promise<Page> {
    const context = await browser.createBrowserContext();
    const page = await context.newPage();
    await page.setExtraHTTPHeaders({ 'x-forwarded-for': `198.51.100.${++visitors}` });
    page.on('dialog', (dialog) => void dialog.accept());
    return page;
  }

  async function open(page: Page, pagePath: string): Promise<void> {
    await page.goto(`${stack.edgeUrl}${pagePath}`);
    await page.waitForFunction((p) => document.getElementById('main')?.dataset.ready === p, {}, pagePath);
  }

  async function run(page: Page, url: string): Promise<void> {
    await page.$eval(
      '#field-url',
      (el, value) => {
        el.value = value;
      },
      url,
    );
    await page.click('form.play button[type=submit]');
  }

  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    site = await startFixtureSite();
    site.route('/links', (_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end('<a href="/ok">fine</a> <a href="/missing-page">gone</a> <a href="/links">self</a>');
    });
    stack = await startTestStack({
      allowTargets: '127.0.0.0/8',
      env: { CHALLENGE_MAX_NUMBER: '5000' },
      envFor: { edge: { TRUSTED_PROXIES: '127.0.0.1/32' } },
    });
    browser = await puppeteer.launch({
      executablePath: '/usr/bin/chromium',
      headless: true,
      args: ['--no-sandbox', '--disable-dev-shm-usage'],
    });
  });
  after(async () => {
    await browser?.close();
    await stack?.stop();
    await site?.close();
  });

  it('serves pages and hashed assets with strict security headers, gzip, and under 200 KB of JavaScript', async () => {
    const res = await fetch(`${stack.edgeUrl}/play/link-extract`, { headers: { 'x-forwarded-proto': 'https' } });
    expect(res.status).to.equal(200);
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).to.include("frame-ancestors 'none'").and.include("script-src 'self'").and.include("style-src 'self'");
    expect(csp).to.not.include('unsafe-inline');
    expect(res.headers.get('x-content-type-options')).to.equal('nosniff');
    expect(res.headers.get('referrer-policy')).to.equal('same-origin');
    expect(res.headers.get('strict-transport-security')).to.match(/max-age=\d+/);
    expect((await fetch(`${stack.edgeUrl}/`)).headers.get('strict-transport-security')).to.equal(null);
    const html = await res.text();
    expect(html).to.not.match(/<script>|<style|style="/);
    const scripts = [...html.matchAll(/src="(\/assets\/[^"]+\.js)"/g)].map((m) => m[1]!);
    expect(scripts).to.have.length.above(0);
    let gzipped = 0;
    for (const script of scripts) {
      const asset = await fetch(`${stack.edgeUrl}${script}`, { headers: { 'accept-encoding': 'gzip' } });
      expect(asset.headers.get('cache-control')).to.equal('public, max-age=31536000, immutable');
      expect(asset.headers.get('content-type')).to.match(/javascript/);
      gzipped += gzipSync(Buffer.from(await asset.arrayBuffer()), { level: 9 }).length;
    }
    console.log(`      playground first load: ${(gzipped / 1024).toFixed(1)} KB of gzipped JavaScript`);
    expect(gzipped).to.be.below(200 * 1024);
  });

  it('an anonymous visitor solves the challenge and runs link-extract against a site, by keyboard alone', async () => {
    const page = await visitor();
    await open(page, '/play/link-extract');
    // Tab from the top of the page to the form's field, type, and submit with Enter.
    let tabs = 0;
    while ((await page.evaluate(() => document.activeElement?.id)) !== 'field-url') {
      expect(++tabs, 'the URL field is reachable with Tab').to.be.below(15);
      await page.keyboard.press('Tab');
    }
    await page.keyboard.type(site.url('/links'));
    await page.keyboard.press('Enter');
    await page.waitForSelector('.result table', { timeout: 30_000 });
    const text = await page.$eval('.result', (el) => el.textContent ?? '');
    expect(text).to.include(site.url('/ok')).and.include(site.url('/missing-page'));
    const cookies = await page.browserContext().cookies();
    expect(cookies.map((c) => c.name)).to.include('wu_clearance');
    expect(Number(await page.$eval('#credits', (el) => el.textContent)))
      .to.be.a('number')
      .and.above(0);
    await page.browserContext().close();
  });

  it('a visitor signs up, gets a plan, creates a key that works from plain fetch, and revoking it gives 401', async () => {
    const page = await visitor();
    const email = `web-${Date.now()}@example.test`;
    await open(page, '/sign-up');
    await page.type('#f-email', email);
    await page.type('#f-password', PASSWORD);
    await page.click('form.auth button[type=submit]');
    await page.waitForFunction(() => document.getElementById('main')?.dataset.ready === '/account', {
      timeout: 30_000,
    });
    expect(await page.$eval('#plan', (el) => el.textContent)).to.equal('FREE');
    await stack.admin('set-plan', '--email', email, '--plan', 'STARTER');
    await stack.admin('add-top-up', '--email', email, '--credits', '500');
    await open(page, '/account');
    expect(await page.$eval('#plan', (el) => el.textContent)).to.equal('STARTER');
    expect(await page.$eval('#top-ups', (el) => el.textContent)).to.equal('500');
    expect(await page.$eval('#renews', (el) => el.textContent)).to.not.equal('never');
    expect(await page.$eval('#credits-left', (el) => el.textContent)).to.match(/^3500 /);
    await page.type('#key-name', 'from the browser');
    await page.click('form.inline-form button[type=submit]');
    await page.waitForSelector('#new-key');
    const key = await page.$eval('#new-key', (el) => el.value);
    expect(key).to.match(/^wu_live_/);
    await page.waitForSelector('#keys');
    expect(await seriousViolations(page), 'axe on the dashboard').to.deep.equal([]);
    await page.screenshot({ path: path.join(ARTIFACTS, 'account-desktop-light.png'), fullPage: true });
    const downCheck = `${stack.edgeUrl}/v1/down-check?url=${encodeURIComponent(site.url('/ok'))}`;
    const used = await fetch(downCheck, { headers: { authorization: `Bearer ${key}` } });
    expect(used.status).to.equal(200);
    // The key's call shows in the recent usage once its settlement reached billing (just after the answer).
    await eventually(async () => {
      await open(page, '/account');
      expect(await page.$eval('#usage', (el) => el.textContent)).to.include('down-check');
    });

    await page.click('#keys button.danger'); // the confirmation dialog is accepted
    await page.waitForFunction(() => document.querySelector('#keys')?.textContent?.includes('revoked'));
    const refused = await fetch(downCheck, { headers: { authorization: `Bearer ${key}` } });
    expect(refused.status).to.equal(401);

    await page.click('button.secondary'); // sign out
    await page.waitForFunction(
      () => document.getElementById('main')?.dataset.ready === '/' || document.querySelector('[role=alert]'),
    );
    expect(await page.$$eval('[role=alert]', (alerts) => alerts.map((a) => a.textContent))).to.deep.equal([]);
    expect((await page.browserContext().cookies()).map((c) => c.name)).to.not.include('wu_session');
    await page.browserContext().close();
  });

  it('a crawl shows its progress until done, the screenshot playground shows the image, the meta audit groups its checks, the PDF is previewed', async () => {
    const [crawl, shot, meta, pdf] = [await visitor(), await visitor(), await visitor(), await visitor()];
    await open(pdf, '/play/url-to-pdf');
    await run(pdf, site.url('/links'));
    await open(meta, '/play/meta-scan');
    await run(meta, site.url('/links'));
    await open(crawl, '/play/broken-links-crawl');
    await run(crawl, site.url('/links'));
    await open(shot, '/play/screenshot');
    await run(shot, site.url('/links'));
    await crawl.waitForFunction(() => document.querySelector('.phase')?.textContent === 'Phase: done', {
      timeout: 60_000,
    });
    await crawl.waitForSelector('.result tr.sev-broken');
    await shot.waitForFunction(() => (document.querySelector('img.shot')?.naturalWidth ?? 0) > 0, { timeout: 60_000 });
    expect(await shot.$eval('img.shot', (img) => img.naturalWidth)).to.be.above(100);
    await meta.waitForSelector('.result section.group, .result [role=alert]', { timeout: 60_000 });
    expect(await meta.$$eval('.result [role=alert]', (alerts) => alerts.map((a) => a.textContent))).to.deep.equal([]);
    const groups = await meta.$$eval('.result section.group h3', (hs) => hs.map((x) => x.textContent));
    expect(groups).to.include.members(['basic', 'technical', 'social', 'images']);
    expect(await meta.$eval('.result .grade', (el) => el.textContent)).to.match(/^(A\+|[A-DF])$/);
    await pdf.waitForSelector('.result iframe.pdf, .result [role=alert]', { timeout: 60_000 });
    const preview = await pdf.$eval('.result iframe.pdf', (frame) => frame.src);
    const file = await fetch(preview);
    expect(file.headers.get('content-type')).to.equal('application/pdf');
    expect(
      Buffer.from(await file.arrayBuffer())
        .subarray(0, 5)
        .toString(),
    ).to.equal('%PDF-');
    for (const page of [crawl, shot, meta, pdf]) await page.browserContext().close();
  });

  it('an XBEL upload gives a download link to the bookmark HTML', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'website-xbel-'));
    const file = path.join(dir, 'bookmarks.xbel');
    writeFileSync(file, xbelOf([folder('Work', [bookmark('https://example.com/', 'Example')])]));
    const page = await visitor();
    try {
      await open(page, '/play/xbel-to-html');
      const input = await page.$('#field-file');
      await input!.uploadFile(file);
      await page.click('form.play button[type=submit]');
      await page.waitForSelector('.result a[href*="/xbel-to-html/download/"], .result [role=alert]', {
        timeout: 30_000,
      });
      expect(await page.$$eval('.result [role=alert]', (alerts) => alerts.map((a) => a.textContent))).to.deep.equal([]);
      const href = await page.$eval('.result a[href*="/xbel-to-html/download/"]', (a) => a.href);
      const download = await fetch(href);
      expect(download.status).to.equal(200);
      expect(await download.text()).to.include('https://example.com/');
    } finally {
      await page.browserContext().close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the API docs list every route of the OpenAPI document, each with a curl example', async () => {
    const contract = (await (await fetch(`${stack.edgeUrl}/v1/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const expected = Object.entries(contract.paths)
      .filter(([p]) => !p.startsWith('/api/v1/'))
      .flatMap(([p, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${p}`));
    const page = await visitor();
    await open(page, '/docs');
    const shown = await page.$$eval('section.route', (sections) =>
      sections.map((el) => [el.querySelector('h2')?.textContent, el.querySelector('pre.curl')?.textContent]),
    );
    expect(shown.map(([route]) => route)).to.have.members(expected);
    for (const [route, example] of shown) expect(example, route).to.match(/^curl .*"http:\/\/127\.0\.0\.1:\d+\//);
    const keyRoute = shown.find(([route]) => route === 'GET /v1/down-check')![1];
    expect(keyRoute).to.include('Authorization: Bearer');
    expect(shown.find(([route]) => route === 'POST /v1/keys')![1])
      .to.include('wu_session')
      .and.include('X-CSRF-Token');
    await page.browserContext().close();
  });

  it('every page passes axe-core (no serious or critical violations); screenshots at desktop and 360 px, light and dark', async () => {
    const page = await visitor();
    const failures: string[] = [];
    for (const pagePath of PAGES) {
      for (const scheme of ['light', 'dark'] as const) {
        await page.emulateMediaFeatures([{ name: 'prefers-color-scheme', value: scheme }]);
        for (const [label, width] of [
          ['desktop', 1280],
          ['phone', 360],
        ] as const) {
          await page.setViewport({ width, height: 800 });
          await open(page, pagePath);
          const name = `${pagePath === '/' ? 'home' : pagePath.slice(1).replace(/\//g, '-')}-${label}-${scheme}.png`;
          await page.screenshot({ path: path.join(ARTIFACTS, name), fullPage: true });
          // Nothing may overflow the phone width.
          if (label === 'phone') {
            const wide = await page.evaluate(() =>
              [...document.querySelectorAll('body *')]
                .filter((el) => el.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
                .map((el) => `${el.tagName.toLowerCase()}.${el.className} "${el.textContent?.slice(0, 40)}"`),
            );
            if (wide.length) failures.push(`${pagePath} ${scheme}: wider than 360 px: ${wide.slice(0, 3).join(', ')}`);
          }
        }
        failures.push(...(await seriousViolations(page)).map((v) => `${pagePath} (${scheme}): ${v}`));
      }
    }
    expect(failures).to.deep.equal([]);
    await page.browserContext().close();
  });
});
