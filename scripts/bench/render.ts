/**
 * Issue 9 benchmark: screenshots and PDFs through the edge against a bare puppeteer-core script
 * running the naive pipeline on the same Chromium, in one run, on two fixture pages: a simple one
 * and a tall one with a dozen lazy images.
 *  1. warm latency, p50 and p95 over BENCH_ROUNDS renders each (unique URLs, so no cache hit), and
 *     the ratio naive / ours; every lazy image the naive capture shows must be in ours too (the
 *     run exits with status 1 when one is missing);
 *  2. cache-hit latency (the same request again);
 *  3. throughput (renders per second) at concurrency 1, 2 and 4, ours and naive, in three
 *     alternating repetitions (medians), with the peak RSS of each side's processes at concurrency 4
 *     (the render service and its Chromium; the naive script's Chromium);
 *  4. memory: PSS of the render service and every Chromium process under it, after warm-up and
 *     after 200 more renders (screenshots and PDFs of the simple, lazy and 200,000 px pages);
 *  5. the default screenshot (no option) before and after issue 23's options, p50 of alternating
 *     renders: "before" is a second stack whose render service is built from the commit before the
 *     options (scripts/bench/render-before.sh; BENCH_RENDER_BEFORE names a built entry, or off).
 * The naive pipeline: a new context and page per render, goto with networkidle0 (500 ms without requests), a
 * scroll through the page with a 100 ms pause per screen, a fixed 500 ms settle, then capture.
 * BENCH_POOL_SIZING=1 adds a run per pool shape (browsers x pages per browser) at concurrency 4.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import puppeteer, { type Browser } from 'puppeteer-core';
import sharp from 'sharp';
import { addRenderPages, LAZY_COLOUR, LAZY_IMAGE } from '../src/fixture-pages.js';
import { startFixtureSite } from '../src/fixture-site.js';
import { startTestStack, type TestStack } from '../src/test-stack.js';
import { fmt } from './load.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const LAZY_IMAGES = 12;
const THROUGHPUT_RENDERS = 16;
const THROUGHPUT_REPS = 3;
const MEMORY_RENDERS = 200;

type Kind = 'screenshot' | 'pdf';
let unique = 0;

const site = await startFixtureSite();
addRenderPages(site);
const pages = { simple: site.url('/page/simple'), lazy: site.url(`/page/lazy?n=${LAZY_IMAGES}`) };
/** Memory only: a page clipped at the capture cap, the largest bitmap a render makes. */
const clippedPage = site.url('/page/tall?px=200000');
const fresh = (url: string) => `${url}${url.includes('?') ? '&' : '?'}r=${++unique}`;

async function ours(stack: TestStack, kind: Kind, url: string): Promise<{ ms: number; file: string }> {
  const started = performance.now();
  const res = await stack.api(kind === 'pdf' ? '/v1/url-to-pdf' : '/v1/screenshot', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ url }),
  });
  const body = (await res.json()) as any;
  const ms = performance.now() - started;
  if (res.status !== 200) throw new Error(`${kind} ${url}: ${res.status} ${JSON.stringify(body.error)}`);
  return { ms, file: body.filename };
}

async function download(stack: TestStack, filename: string): Promise<Buffer> {
  const res = await stack.api(`/api/uploads/${filename}`);
  if (res.status !== 200) throw new Error(`download ${filename}: ${res.status}`);
  return Buffer.from(await res.arrayBuffer());
}

async function naive(browser: Browser, kind: Kind, url: string): Promise<{ ms: number; bytes: Uint8Array }> {
  const started = performance.now();
  // A context per render: tabs of one context stall each other's captures (a background tab's
  // screenshot waited out puppeteer's 180 s protocol time-out here).
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  try {
    await page.setViewport({ width: 1280, height: 800 });
    await page.goto(url, { waitUntil: 'networkidle0', timeout: 30_000 });
    // Sent as source: this file is compiled without the DOM's types.
    await page.evaluate(`(async () => {
      for (let y = 0; y < document.documentElement.scrollHeight; y += window.innerHeight) {
        window.scrollTo(0, y);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      window.scrollTo(0, 0);
    })()`);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const bytes =
      kind === 'pdf'
        ? await page.pdf({ format: 'a4', printBackground: true })
        : await page.screenshot({ type: 'png', fullPage: true });
    return { ms: performance.now() - started, bytes };
  } finally {
    await context.close();
  }
}

/** Which lazy images (by index) a capture shows in their colour. */
async function lazyImagesShown(image: Uint8Array): Promise<Set<number>> {
  const shown = new Set<number>();
  const target = [1, 3, 5].map((i) => Number.parseInt(LAZY_COLOUR.slice(i, i + 2), 16));
  for (let i = 0; i < LAZY_IMAGES; i++) {
    const top = LAZY_IMAGE.top + LAZY_IMAGE.gap * i + LAZY_IMAGE.height / 2;
    const { data } = await sharp(image)
      .extract({ left: LAZY_IMAGE.width / 2, top, width: 1, height: 1 })
      .removeAlpha()
      .raw()
      .toBuffer({ resolveWithObject: true });
    if ([...data].every((v, c) => Math.abs(v - (target[c] ?? 0)) <= 8)) shown.add(i);
  }
  return shown;
}

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
};

/** Renders per second with `concurrency` renders in flight, `total` renders in all. */
async function throughput(
  render: (url: string) => Promise<unknown>,
  concurrency: number,
  total: number,
  page = pages.simple,
) {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < total) await render(fresh(page));
    }),
  );
  return (total / (performance.now() - started)) * 1000;
}

function childrenByParent(): Map<number, number[]> {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // the process ended meanwhile
    }
  }
  return children;
}

/** Resident set size (MB) of a process and all its descendants (shared pages counted in each). */
function treeRssMb(root: number): number {
  const children = childrenByParent();
  let pages = 0;
  const visit = (pid: number) => {
    try {
      pages += Number(readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1]);
    } catch {
      // the process ended meanwhile
    }
    for (const child of children.get(pid) ?? []) visit(child);
  };
  visit(root);
  return (pages * 4096) / 2 ** 20;
}

/** The highest treeRssMb(root) sampled every 50 ms while `work` runs. */
async function peakRssMb(root: number, work: () => Promise<number>): Promise<{ rate: number; peakMb: number }> {
  let peakMb = treeRssMb(root);
  const timer = setInterval(() => {
    peakMb = Math.max(peakMb, treeRssMb(root));
  }, 50);
  try {
    const rate = await work();
    return { rate, peakMb: Math.max(peakMb, treeRssMb(root)) };
  } finally {
    clearInterval(timer);
  }
}

/** Proportional set size (MB) of a process and all its descendants: shared pages counted once. */
function treePssMb(root: number): { mb: number; processes: number } {
  const children = childrenByParent();
  let kb = 0;
  let processes = 0;
  const visit = (pid: number) => {
    try {
      const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
      kb += Number(/^Pss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0);
      processes++;
    } catch {
      // the process ended meanwhile
    }
    for (const child of children.get(pid) ?? []) visit(child);
  };
  visit(root);
  return { mb: kb / 1024, processes };
}

async function startStack(env: Record<string, string> = {}, renderEntry?: string) {
  return startTestStack({
    allowTargets: '127.0.0.1/32',
    env: { LOG_LEVEL: 'warn' },
    envFor: { render: env },
    ...(renderEntry ? { processFor: { render: { entry: renderEntry } } } : {}),
  });
}

const load = () =>
  `load average ${os
    .loadavg()
    .map((l) => fmt(l, 2))
    .join(' / ')} (1 / 5 / 15 min)`;
console.log(`render bench: ${load()}; ${os.cpus().length} cores, other work on the machine moves the figures`);

const browser = await puppeteer.launch({
  executablePath: CHROMIUM,
  headless: true,
  args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
});
const stack = await startStack();
try {
  // Warm both: the first render of each kind pays for code loading and font caches.
  for (const kind of ['screenshot', 'pdf'] as const) {
    for (const url of Object.values(pages)) {
      await ours(stack, kind, fresh(url));
      await naive(browser, kind, fresh(url));
    }
  }

  // 1. Latency, alternating ours and naive.
  console.log(`render latency, warm, ${ROUNDS} renders each (ms)`);
  console.log('case                  ours p50   p95   naive p50   p95   naive/ours (p50)');
  for (const kind of ['screenshot', 'pdf'] as const) {
    for (const [name, url] of Object.entries(pages)) {
      const mine: number[] = [];
      const theirs: number[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        mine.push((await ours(stack, kind, fresh(url))).ms);
        theirs.push((await naive(browser, kind, fresh(url))).ms);
      }
      const [p50, p95, n50, n95] = [
        quantile(mine, 0.5),
        quantile(mine, 0.95),
        quantile(theirs, 0.5),
        quantile(theirs, 0.95),
      ];
      console.log(
        `${kind} ${name}`.padEnd(22) +
          `${fmt(p50, 0).padStart(8)}${fmt(p95, 0).padStart(6)}` +
          `${fmt(n50, 0).padStart(12)}${fmt(n95, 0).padStart(6)}${fmt(n50 / p50, 2).padStart(12)}x`,
      );
    }
  }

  // Completeness: every lazy image the naive capture has must be in ours.
  const mine = await lazyImagesShown(await download(stack, (await ours(stack, 'screenshot', fresh(pages.lazy))).file));
  const theirs = await lazyImagesShown((await naive(browser, 'screenshot', fresh(pages.lazy))).bytes);
  const missing = [...theirs].filter((i) => !mine.has(i));
  console.log(
    `lazy images in the capture: ours ${mine.size}/${LAZY_IMAGES}, naive ${theirs.size}/${LAZY_IMAGES}` +
      `${missing.length ? `; MISSING from ours: ${missing.join(', ')}` : '; none of the naive ones missing'}`,
  );
  // A faster capture that misses content is no improvement: the run fails.
  if (missing.length > 0) process.exitCode = 1;

  // 2. Cache hits.
  const cached = fresh(pages.lazy);
  await ours(stack, 'screenshot', cached);
  const hits: number[] = [];
  for (let i = 0; i < ROUNDS * 3; i++) hits.push((await ours(stack, 'screenshot', cached)).ms);
  console.log(`cache hit: p50 ${fmt(quantile(hits, 0.5))} ms, p95 ${fmt(quantile(hits, 0.95))} ms`);

  // 3. Throughput, in alternating repetitions: the machine's load moves between them.
  console.log(
    `throughput, simple page screenshots (${THROUGHPUT_RENDERS} per level, renders/s, ` +
      `median of ${THROUGHPUT_REPS} alternating repetitions)`,
  );
  const renderPid = stack.pid('render') ?? 0;
  const naivePid = browser.process()?.pid ?? 0;
  for (const concurrency of [1, 2, 4]) {
    const mineRuns: { rate: number; peakMb: number }[] = [];
    const theirRuns: { rate: number; peakMb: number }[] = [];
    for (let rep = 0; rep < THROUGHPUT_REPS; rep++) {
      mineRuns.push(
        await peakRssMb(renderPid, () =>
          throughput((url) => ours(stack, 'screenshot', url), concurrency, THROUGHPUT_RENDERS),
        ),
      );
      theirRuns.push(
        await peakRssMb(naivePid, () =>
          throughput((url) => naive(browser, 'screenshot', url), concurrency, THROUGHPUT_RENDERS),
        ),
      );
    }
    const mineRate = quantile(
      mineRuns.map((r) => r.rate),
      0.5,
    );
    const theirRate = quantile(
      theirRuns.map((r) => r.rate),
      0.5,
    );
    const ratios = mineRuns.map((r, i) => fmt(r.rate / (theirRuns[i]?.rate ?? Number.NaN), 2)).join(' / ');
    console.log(
      `  concurrency ${concurrency}: ours ${fmt(mineRate, 2)}  naive ${fmt(theirRate, 2)}  ` +
        `ours/naive ${fmt(mineRate / theirRate, 2)}x (repetitions ${ratios}); peak RSS ` +
        `ours ${fmt(Math.max(...mineRuns.map((r) => r.peakMb)), 0)} MB (render service + Chromium), ` +
        `naive ${fmt(Math.max(...theirRuns.map((r) => r.peakMb)), 0)} MB (Chromium)`,
    );
  }
  console.log(`  ${load()}`);

  // 4. Memory after 200 renders.
  const pid = stack.pid('render');
  if (pid === undefined) throw new Error('no render process');
  const before = treePssMb(pid);
  // Every pairing of kind and page in turn: 2 kinds x 3 pages.
  const kinds: Kind[] = ['screenshot', 'pdf'];
  const mix = [pages.simple, pages.lazy, clippedPage];
  let turn = 0;
  await throughput(
    (url) => {
      const i = turn++;
      const page = mix[i % mix.length] ?? pages.simple;
      return ours(stack, kinds[i % kinds.length] ?? 'screenshot', page === pages.simple ? url : fresh(page));
    },
    4,
    MEMORY_RENDERS,
  );
  const after = treePssMb(pid);
  console.log(
    `render service + Chromium PSS: ${fmt(before.mb, 0)} MB (${before.processes} processes) after warm-up, ` +
      `${fmt(after.mb, 0)} MB (${after.processes}) after ${MEMORY_RENDERS} more renders: ` +
      `${fmt(after.mb / before.mb, 2)}x`,
  );
} finally {
  await stack.stop();
}

// 5. The default screenshot before and after issue 23's options, each stack warmed, in alternation.
const beforeEntry =
  process.env.BENCH_RENDER_BEFORE ??
  execFileSync('bash', [new URL('render-before.sh', import.meta.url).pathname], { encoding: 'utf8' }).trim();
if (beforeEntry !== 'off') {
  const [after, before] = [await startStack(), await startStack({}, beforeEntry)];
  try {
    for (const side of [after, before]) for (let i = 0; i < 3; i++) await ours(side, 'screenshot', fresh(pages.simple));
    const times: Record<'before' | 'after', number[]> = { before: [], after: [] };
    for (let i = 0; i < ROUNDS * 2; i++) {
      // Each pair in the other order half the time, so neither side always runs second.
      const order = i % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const);
      for (const side of order) {
        times[side].push((await ours(side === 'before' ? before : after, 'screenshot', fresh(pages.simple))).ms);
      }
    }
    const [b50, a50] = [quantile(times.before, 0.5), quantile(times.after, 0.5)];
    console.log(
      `default screenshot, simple page, ${ROUNDS * 2} alternating renders each: p50 before the options ` +
        `${fmt(b50, 0)} ms, after ${fmt(a50, 0)} ms: after/before ${fmt(a50 / b50, 2)}x ` +
        `(p95 ${fmt(quantile(times.before, 0.95), 0)} / ${fmt(quantile(times.after, 0.95), 0)} ms); ${load()}`,
    );
  } finally {
    await Promise.all([after.stop(), before.stop()]);
  }
}

if (process.env.BENCH_POOL_SIZING === '1') {
  // A 16,000 px capture takes seconds and puppeteer runs one capture at a time per browser.
  const tall = site.url('/page/tall?px=16000');
  console.log('pool sizing, renders/s: simple page at concurrency 4 and 8, 16,000 px page at 4');
  for (const [browsers, perBrowser] of [
    [1, 2],
    [1, 4],
    [2, 1],
    [2, 2],
    [4, 1],
  ] as const) {
    const sized = await startStack({ RENDER_BROWSERS: String(browsers), RENDER_PAGES_PER_BROWSER: String(perBrowser) });
    try {
      await ours(sized, 'screenshot', fresh(pages.simple));
      const rates = [];
      for (const concurrency of [4, 8]) {
        rates.push(await throughput((url) => ours(sized, 'screenshot', url), concurrency, THROUGHPUT_RENDERS * 2));
      }
      rates.push(await throughput((url) => ours(sized, 'screenshot', url), 4, THROUGHPUT_RENDERS / 2, tall));
      const pss = treePssMb(sized.pid('render') ?? 0).mb;
      console.log(
        `  ${browsers} browser(s) x ${perBrowser}: ${rates.map((r) => fmt(r, 2)).join(' / ')}, PSS ${fmt(pss, 0)} MB`,
      );
    } finally {
      await sized.stop();
    }
  }
}
await browser.close();
await site.close();
