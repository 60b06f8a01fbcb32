/**
 * Issue 40's public side through the REST edge and in Chromium: a monitor's figures for its owner,
 * the account's status page (opt-in, public, no target shown) and its monitors' badges (SVG, no
 * credential, cacheable); every bad input refused with nothing saved (decision 0438).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '@webutil/scripts/local-stack';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import type { AxeResults } from 'axe-core';
import { expect } from 'chai';
import type { Browser } from 'puppeteer-core';
import { account, expectFailure, json } from './billing-helpers.js';
import { launchChromium } from './browser-helpers.js';

declare const document: any;
declare const window: any;

const AXE = readFileSync(path.join(REPO_ROOT, 'node_modules/axe-core/axe.min.js'), 'utf8');
const post = (body: unknown) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

describe('monitors: status pages and badges through the REST edge', function () {
  this.timeout(120_000);
  let stack: TestStack;
  let browser: Browser;
  let mine: string;
  let theirs: string;
  let monitorId: string;
  let otherMonitorId: string;

  const createMonitor = async (apiKey: string, name: string, target: string) => {
    const res = await stack.api('/v1/monitors', {
      ...post({ name, kind: 'down-check', input: { url: target }, intervalSeconds: 300 }),
      apiKey,
    });
    expect(res.status).to.equal(201);
    return (await json(res)).data.id as string;
  };

  before(async () => {
    stack = await startTestStack();
    mine = (await account(stack, 'STARTER')).apiKey;
    theirs = (await account(stack, 'STARTER')).apiKey;
    monitorId = await createMonitor(mine, 'Shop', 'https://shop.example.com/secret-path');
    otherMonitorId = await createMonitor(theirs, 'Theirs', 'https://other.example.com/');
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it('a monitor’s summary: four uptime windows, 90 daily bars, 48 response times; another’s id is 404', async () => {
    const res = await stack.api(`/v1/monitors/${monitorId}/summary`, { apiKey: mine });
    expect(res.status, await res.clone().text()).to.equal(200);
    const { data } = await json(res);
    expect(data).to.include({ id: monitorId, name: 'Shop', kind: 'down-check' });
    expect(data.uptime.map((w: any) => w.window)).to.deep.equal(['24h', '7d', '30d', '90d']);
    expect(data.uptime[0]).to.deep.equal({ window: '24h', percent: null, checks: 0, failures: 0 });
    expect(data.days).to.have.length(90);
    expect(data.responseTimes).to.have.length(48);
    await expectFailure(
      await stack.api(`/v1/monitors/${otherMonitorId}/summary`, { apiKey: mine }),
      404,
      'monitor_not_found',
    );
  });

  it('refuses bad settings with nothing saved, then serves the page and badges to anyone', async () => {
    await expectFailure(
      await stack.api('/v1/status-page', {
        ...post({ slug: 'A B', title: 'x', monitorIds: [], enabled: true }),
        apiKey: mine,
      }),
      400,
      'invalid_request',
    );
    await expectFailure(
      await stack.api('/v1/status-page', {
        ...post({ slug: 'acme', title: 'Acme', monitorIds: [otherMonitorId], enabled: true }),
        apiKey: mine,
      }),
      400,
      'unknown_monitor',
    );
    await expectFailure(await stack.api('/v1/status-page', { apiKey: mine }), 404, 'status_page_not_found');
    await expectFailure(await stack.api('/v1/status/acme'), 404, 'status_page_not_found');
    await expectFailure(await stack.api(`/v1/badges/${monitorId}/uptime`), 404, 'monitor_not_found');

    const saved = await stack.api('/v1/status-page', {
      ...post({ slug: 'acme', title: 'Acme status', monitorIds: [monitorId], enabled: true }),
      apiKey: mine,
    });
    expect(saved.status).to.equal(200);
    expect((await json(saved)).data).to.include({ slug: 'acme', title: 'Acme status', enabled: true });
    await expectFailure(
      await stack.api('/v1/status-page', {
        ...post({ slug: 'acme', title: 'Mine', monitorIds: [], enabled: true }),
        apiKey: theirs,
      }),
      409,
      'slug_taken',
    );

    // Public: no credential, the same answer for everyone, no target or account in it.
    const page = await fetch(`${stack.edgeUrl}/v1/status/acme`);
    expect(page.status).to.equal(200);
    expect(page.headers.get('cache-control')).to.equal('public, max-age=60');
    const text = await page.text();
    expect(text).to.not.include('secret-path').and.not.include('account:');
    const body = JSON.parse(text);
    expect(body.data).to.include({ slug: 'acme', title: 'Acme status', overall: 'unknown' });
    expect(body.data.monitors.map((m: any) => m.name)).to.deep.equal(['Shop']);

    const badge = await fetch(`${stack.edgeUrl}/v1/badges/${monitorId}/uptime?window=7d&style=flat-square`);
    expect(badge.status).to.equal(200);
    expect(badge.headers.get('content-type')).to.equal('image/svg+xml');
    expect(badge.headers.get('cache-control')).to.equal('public, max-age=300, stale-while-revalidate=600');
    const svg = await badge.text();
    expect(svg)
      .to.match(/^<svg /)
      .and.include('uptime 7d')
      .and.include('no data');
    await expectFailure(await fetch(`${stack.edgeUrl}/v1/badges/${monitorId}/ssl`), 400, 'badge_not_for_kind');
    await expectFailure(
      await fetch(`${stack.edgeUrl}/v1/badges/${monitorId}/uptime?window=2d`),
      400,
      'invalid_request',
    );
    await expectFailure(await fetch(`${stack.edgeUrl}/v1/badges/${otherMonitorId}/uptime`), 404, 'monitor_not_found');

    // Disabled: the page and its badges are gone.
    await stack.api('/v1/status-page', {
      ...post({ slug: 'acme', title: 'Acme status', monitorIds: [monitorId], enabled: false }),
      apiKey: mine,
    });
    await expectFailure(await fetch(`${stack.edgeUrl}/v1/status/acme`), 404, 'status_page_not_found');
    await expectFailure(await fetch(`${stack.edgeUrl}/v1/badges/${monitorId}/uptime`), 404, 'monitor_not_found');
    await stack.api('/v1/status-page', {
      ...post({ slug: 'acme', title: 'Acme status', monitorIds: [monitorId], enabled: true }),
      apiKey: mine,
    });
  });

  it('the status page and the monitors page in Chromium: axe 0 serious, fits 390 px', async () => {
    const context = await browser.createBrowserContext();
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (err) => problems.push((err as Error).message));
    page.on('console', (m) => /Refused to|Content Security Policy/i.test(m.text()) && problems.push(m.text()));
    for (const [pagePath, width] of [
      ['/status/acme', 1280],
      ['/status/acme', 390],
      ['/monitors', 390],
    ] as const) {
      await page.setViewport({ width, height: 800 });
      await page.goto(`${stack.edgeUrl}${pagePath}`);
      await page.waitForFunction((p: string) => document.getElementById('main')?.dataset.ready === p, {}, pagePath);
      if (pagePath.startsWith('/status/')) {
        expect(await page.$eval('h1', (h: any) => h.textContent)).to.equal('Acme status');
        expect(await page.$$eval('.uptime-bars rect', (r: any[]) => r.length)).to.equal(90);
        expect(await page.$eval('.uptime-bars', (s: any) => s.getAttribute('aria-label'))).to.include('no checks yet');
      }
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow, `${pagePath} wider than ${width} px`).to.be.at.most(0);
      if (!(await page.evaluate(() => !!window.axe))) await page.evaluate(AXE);
      const violations = await page.evaluate(async () => {
        const result: AxeResults = await window.axe.run();
        return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => v.id);
      });
      expect(violations, `axe on ${pagePath} at ${width} px`).to.deep.equal([]);
    }
    expect(problems).to.deep.equal([]);
    await context.close();
  });
});
