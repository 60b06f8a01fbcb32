/**
 * Chromium CPU per step of a render (issue 23, docs/decisions/0193): each step repeated on one
 * browser launched with the render service's flags, and on one without the features it turns off
 * for unused renderers, in turn; the CPU of the browser and every process under it (exited
 * renderers included, through their reaper's counts) read from /proc around each step.
 * BENCH_STEP_WHOLE=1 measures only the whole render. Run alone:
 * `node --import tsx services/render/bench/render-steps.ts`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { AddressPolicy } from '@webutil/kit';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { chromiumArgs, UNUSED_RENDERER_FEATURES } from '../src/browser-pool.js';
import { EgressProxy } from '../src/egress-proxy.js';

const REPS = Number(process.env.BENCH_STEP_REPS ?? 12);
const fmt = (n: number, digits = 1) => n.toFixed(digits);
// The benchmarks' simple page (scripts/src/fixture-pages.ts), served here: this package reaches no other's files.
const site = http.createServer((_req, res) => {
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
  res.end(
    '<!doctype html><html><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">' +
      '<style>html,body{margin:0;padding:0;background:#fff;font:16px sans-serif}</style></head>' +
      '<body><h1>Simple page</h1><p>One screen of text.</p></body></html>',
  );
});
await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
let unique = 0;
const fresh = () => `http://127.0.0.1:${(site.address() as AddressInfo).port}/page/simple?r=${++unique}`;

/** CPU seconds of a process tree: its processes' own and their exited children's, by kind. */
function treeCpu(root: number): Record<string, number> {
  const children = new Map<number, number[]>();
  const ticks = new Map<number, number>();
  const kinds = new Map<number, string>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      children.set(Number(f[1]), [...(children.get(Number(f[1])) ?? []), Number(entry)]);
      ticks.set(Number(entry), Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]));
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split(/[\0 ]/);
      const type = cmd.find((a) => a.startsWith('--type='))?.slice(7);
      if (type) kinds.set(Number(entry), type === 'zygote' || type === 'renderer' ? 'renderers' : type);
    } catch {
      // gone
    }
  }
  const sum: Record<string, number> = { all: 0 };
  const visit = (pid: number, kind: string) => {
    const k = kinds.get(pid) ?? kind;
    const s = (ticks.get(pid) ?? 0) / 100;
    sum[k] = (sum[k] ?? 0) + s;
    sum.all = (sum.all ?? 0) + s;
    for (const c of children.get(pid) ?? []) visit(c, k);
  };
  visit(root, 'browser');
  return sum;
}

/** The service's flags, or (unused: true) the same without the unused renderers' features turned off. */
const launch = (unused: boolean): Promise<Browser> =>
  puppeteer.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    pipe: true,
    args: chromiumArgs(process.getuid?.() !== 0).map((a) =>
      unused && a.startsWith('--disable-features=') ? a.replace(`,${UNUSED_RENDERER_FEATURES.join(',')}`, '') : a,
    ),
    defaultViewport: null,
  });
let browser: Browser;
let pid = 0;
const policy = new AddressPolicy(['127.0.0.1/32']);

async function measure<S>(
  name: string,
  setup: () => Promise<S>,
  step: (s: S) => Promise<unknown>,
  teardown?: (s: S) => Promise<unknown>,
) {
  const cpu: Record<string, number> = {};
  let wall = 0;
  for (let i = 0; i < REPS; i++) {
    const s = await setup();
    const c0 = treeCpu(pid);
    const t0 = performance.now();
    await step(s);
    wall += performance.now() - t0;
    for (const [k, v] of Object.entries(treeCpu(pid))) cpu[k] = (cpu[k] ?? 0) + v - (c0[k] ?? 0);
    await teardown?.(s);
  }
  const parts = Object.entries(cpu)
    .filter(([k]) => k !== 'all')
    .map(([k, v]) => `${k} ${fmt((v / REPS) * 1000, 0)}`)
    .join(', ');
  console.log(
    `${name.padEnd(58)} Chromium CPU ${fmt(((cpu.all ?? 0) / REPS) * 1000, 0).padStart(5)} ms (${parts}), ` +
      `wall ${fmt(wall / REPS, 0)} ms`,
  );
}

const ready = async (page: Page) => {
  await page.setViewport({ width: 1280, height: 800 });
  await page.goto(fresh(), { waitUntil: 'domcontentloaded' });
  return page;
};
console.log(`uptime:${os.loadavg().map((l) => ` ${fmt(l, 2)}`)}; ${REPS} repetitions each`);
for (const [round, unused] of [false, true, false, true].entries()) {
  browser = await launch(unused);
  pid = browser.process()?.pid ?? 0;
  console.log(
    `round ${round + 1}: ${unused ? "Chromium's defaults (spare renderer, omnibox WebUI)" : "the service's flags"}`,
  );
  await measure(
    'whole render: context + proxy, page, load, 6 frames, capture, close',
    () => EgressProxy.open({ policy, lookup: undefined, connectTimeoutMs: 5000 }),
    async (proxy: EgressProxy) => {
      const c = await browser.createBrowserContext({ proxyServer: proxy.url, proxyBypassList: ['<-loopback>'] });
      const p = await ready(await c.newPage());
      await p.evaluate(
        `(async () => { for (let i = 0; i < 6; i++) await new Promise((r) => requestAnimationFrame(r)); })()`,
      );
      await p.screenshot({
        type: 'png',
        optimizeForSpeed: true,
        clip: { x: 0, y: 0, width: 1280, height: 800 },
        captureBeyondViewport: true,
      });
      await c.close();
    },
    (proxy: EgressProxy) => proxy.close(),
  );
  if (process.env.BENCH_STEP_WHOLE) continue;
  await measure(
    'context + page, opened and closed',
    async () => undefined,
    async () => {
      const c = await browser.createBrowserContext();
      await c.newPage();
      await c.close();
    },
  );
  await measure(
    'context with a proxy + page, opened and closed',
    () => EgressProxy.open({ policy, lookup: undefined, connectTimeoutMs: 5000 }),
    async (proxy: EgressProxy) => {
      const c = await browser.createBrowserContext({ proxyServer: proxy.url, proxyBypassList: ['<-loopback>'] });
      await c.newPage();
      await c.close();
    },
    (proxy: EgressProxy) => proxy.close(),
  );
  const proxy = await EgressProxy.open({ policy, lookup: undefined, connectTimeoutMs: 5000 });
  const shared = await browser.createBrowserContext({ proxyServer: proxy.url, proxyBypassList: ['<-loopback>'] });
  await measure(
    'page in a kept context, raw CDP create and close',
    async () => undefined,
    async () => {
      const control = await browser.target().createCDPSession();
      const { targetId } = await control.send('Target.createTarget', {
        url: 'about:blank',
        browserContextId: shared.id,
      });
      await control.send('Target.closeTarget', { targetId });
      await control.detach();
    },
  );
  await measure(
    'page in a kept context, opened and closed',
    async () => undefined,
    async () => {
      const p = await shared.newPage();
      await p.close();
    },
  );
  await measure(
    'navigation, direct (page kept)',
    async () => {
      const p = await shared.newPage();
      await p.setViewport({ width: 1280, height: 800 });
      return p;
    },
    (p: Page) => p.goto(fresh(), { waitUntil: 'domcontentloaded' }),
    (p: Page) => p.close(),
  );
  await measure(
    'screenshot png fast, viewport clip, captureBeyondViewport',
    () => shared.newPage().then(ready),
    (p: Page) =>
      p.screenshot({
        type: 'png',
        optimizeForSpeed: true,
        clip: { x: 0, y: 0, width: 1280, height: 800 },
        captureBeyondViewport: true,
      }),
    (p: Page) => p.close(),
  );
  await measure(
    'screenshot png fast, viewport clip, in viewport',
    () => shared.newPage().then(ready),
    (p: Page) =>
      p.screenshot({
        type: 'png',
        optimizeForSpeed: true,
        clip: { x: 0, y: 0, width: 1280, height: 800 },
        captureBeyondViewport: false,
      }),
    (p: Page) => p.close(),
  );
  await measure(
    'screenshot png default, fullPage (naive)',
    () => shared.newPage().then(ready),
    (p: Page) => p.screenshot({ type: 'png', fullPage: true }),
    (p: Page) => p.close(),
  );
  await measure(
    '6 animation frames (our scroll and settle)',
    () => shared.newPage().then(ready),
    (p: Page) =>
      p.evaluate(`(async () => { for (let i = 0; i < 6; i++) await new Promise((r) => requestAnimationFrame(r)); })()`),
    (p: Page) => p.close(),
  );
  await measure(
    'idle 1 s (page open)',
    () => shared.newPage().then(ready),
    () => new Promise((r) => setTimeout(r, 1000)),
    (p: Page) => p.close(),
  );
  await shared.close();
  await proxy.close();
  await browser.close();
}
site.close();
