/**
 * Where a screenshot's time and CPU go at 4 concurrent renders, ours and the naive pipeline's
 * (scripts/bench/render.ts), for issue 23's "faster under load" (docs/decisions/0193):
 *  - CPU seconds per render of every process involved, read from /proc before and after a run
 *    (edge, billing, the render service, each kind of Chromium process, this process);
 *  - the render service's stage timings (Server-Timing) at concurrency 1 and 4, and the naive
 *    pipeline's phases at 4;
 *  - the render service's own CPU profile (node --cpu-prof, written when the stack stops), its
 *    functions by self time, grouped by where they live.
 * BENCH_PROFILE_RENDERS (default 24) renders per run; the stack's env takes RENDER_* overrides from
 * BENCH_RENDER_ENV (JSON), and BENCH_RENDER_ENTRY runs another build's render service (such as
 * scripts/bench/render-before.sh's), so a change can be profiled against what came before.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import puppeteer, { type Browser } from 'puppeteer-core';
import { addRenderPages } from '../src/fixture-pages.js';
import { startFixtureSite } from '../src/fixture-site.js';
import { startTestStack, type TestStack } from '../src/test-stack.js';
import { largest, readSelfTimes } from './cpu-profile.js';
import { fmt } from './load.js';

const RENDERS = Number(process.env.BENCH_PROFILE_RENDERS ?? 24);
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const TICK = 100; // clock ticks per second (USER_HZ)
let unique = 0;

const site = await startFixtureSite();
addRenderPages(site);
const simple = site.url('/page/simple');
const fresh = () => `${simple}?r=${++unique}`;

/** CPU seconds so far of every process, by a name for what it is. */
function cpuByKind(roots: Record<string, number>): Map<string, number> {
  const children = new Map<number, number[]>();
  const ticks = new Map<number, number>();
  const kindOf = new Map<number, string>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const pid = Number(entry);
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ppid = Number(fields[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), pid]);
      // Own time plus that of exited children it reaped (the zygote reaps each render's renderers).
      ticks.set(pid, Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]));
      // Chromium rewrites its child processes' command lines as one string of space-separated words.
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split(/[\0 ]/);
      const type = cmd.find((a) => a.startsWith('--type='))?.slice(7);
      const sub = cmd.find((a) => a.startsWith('--utility-sub-type='))?.slice(19);
      if (/chrom/.test(cmd[0] ?? '')) kindOf.set(pid, type ? (sub ? `${type}:${sub.split('.')[0]}` : type) : 'browser');
    } catch {
      // the process ended meanwhile
    }
  }
  const out = new Map<string, number>();
  // The stack's processes are children of this one: each is counted under the first root reaching it.
  const seen = new Set<number>();
  for (const [root, rootPid] of Object.entries(roots)) {
    const visit = (pid: number) => {
      if (seen.has(pid)) return;
      seen.add(pid);
      const kind = kindOf.has(pid) ? `${root} chromium ${kindOf.get(pid)}` : root;
      out.set(kind, (out.get(kind) ?? 0) + (ticks.get(pid) ?? 0) / TICK);
      for (const child of children.get(pid) ?? []) visit(child);
    };
    visit(rootPid);
  }
  return out;
}

const diff = (a: Map<string, number>, b: Map<string, number>) =>
  new Map([...b].map(([k, v]) => [k, v - (a.get(k) ?? 0)] as const).filter(([, v]) => v > 0));

function printCpu(title: string, used: Map<string, number>, renders: number, seconds: number) {
  const total = [...used.values()].reduce((a, b) => a + b, 0);
  console.log(
    `${title}: ${fmt(renders / seconds, 2)} renders/s, CPU ${fmt((total / renders) * 1000, 0)} ms per render ` +
      `(${fmt((total / seconds) * 100, 0)}% of one core)`,
  );
  for (const [kind, s] of [...used].sort((x, y) => y[1] - x[1])) {
    console.log(`  ${kind.padEnd(48)}${fmt((s / renders) * 1000, 1).padStart(8)} ms/render`);
  }
}

async function ours(stack: TestStack, url: string): Promise<Record<string, number>> {
  const res = await stack.api('/v1/screenshot', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ url }),
  });
  const body = (await res.json()) as { error?: unknown };
  if (res.status !== 200) throw new Error(`screenshot ${url}: ${res.status} ${JSON.stringify(body.error)}`);
  const stages: Record<string, number> = {};
  for (const part of (res.headers.get('server-timing') ?? '').split(',')) {
    const m = /^\s*(\w+);dur=([\d.]+)/.exec(part);
    if (m?.[1]) stages[m[1]] = Number(m[2]);
  }
  return stages;
}

async function naive(browser: Browser, url: string): Promise<Record<string, number>> {
  const phases: Record<string, number> = {};
  let last = performance.now();
  const lap = (name: string) => {
    const now = performance.now();
    phases[name] = now - last;
    last = now;
  };
  const context = await browser.createBrowserContext();
  const page = await context.newPage();
  try {
    await page.setViewport({ width: 1280, height: 800 });
    lap('page');
    await page.goto(url, { waitUntil: 'networkidle0', timeout: 30_000 });
    lap('nav+idle');
    await page.evaluate(`(async () => {
      for (let y = 0; y < document.documentElement.scrollHeight; y += window.innerHeight) {
        window.scrollTo(0, y);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      window.scrollTo(0, 0);
    })()`);
    lap('scroll');
    await new Promise((resolve) => setTimeout(resolve, 500));
    lap('settle');
    await page.screenshot({ type: 'png', fullPage: true });
    lap('encode');
  } finally {
    await context.close();
    lap('close');
  }
  return phases;
}

/** `total` renders, `concurrency` at a time; the mean of each stage. */
async function run(render: () => Promise<Record<string, number>>, concurrency: number, total: number) {
  let next = 0;
  const sums: Record<string, number> = {};
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < total) {
        const t0 = performance.now();
        const stages = await render();
        stages.client = performance.now() - t0;
        for (const [k, v] of Object.entries(stages)) sums[k] = (sums[k] ?? 0) + v;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { seconds, mean: Object.fromEntries(Object.entries(sums).map(([k, v]) => [k, v / total])) };
}

const showStages = (mean: Record<string, number>) =>
  Object.entries(mean)
    .map(([k, v]) => `${k} ${fmt(v, 0)}`)
    .join(', ');

const profileDir = mkdtempSync(path.join(os.tmpdir(), 'render-prof-'));
const renderEnv = JSON.parse(process.env.BENCH_RENDER_ENV ?? '{}') as Record<string, string>;
const browser = await puppeteer.launch({
  executablePath: CHROMIUM,
  headless: true,
  args: process.getuid?.() === 0 ? ['--no-sandbox'] : [],
});
const stack = await startTestStack({
  allowTargets: '127.0.0.1/32',
  env: { LOG_LEVEL: 'warn' },
  envFor: { render: renderEnv },
  processFor: {
    render: {
      nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`],
      ...(process.env.BENCH_RENDER_ENTRY ? { entry: process.env.BENCH_RENDER_ENTRY } : {}),
    },
  },
});
console.log(`uptime:${os.loadavg().map((l) => ` ${fmt(l, 2)}`)} (load average 1/5/15 min); render env`, renderEnv);
try {
  const pids = () => ({
    edge: stack.pid('edge') ?? 0,
    billing: stack.pid('billing') ?? 0,
    render: stack.pid('render') ?? 0,
    'naive (bench process)': process.pid,
  });
  for (let i = 0; i < 4; i++) {
    await ours(stack, fresh());
    await naive(browser, fresh());
  }
  const c1 = await run(() => ours(stack, fresh()), 1, RENDERS / 2);
  console.log(`ours, concurrency 1, mean ms: ${showStages(c1.mean)}`);
  for (const round of [1, 2]) {
    let before = cpuByKind(pids());
    const mine = await run(() => ours(stack, fresh()), 4, RENDERS);
    const oursCpu = diff(before, cpuByKind(pids()));
    before = cpuByKind(pids());
    const theirs = await run(() => naive(browser, fresh()), 4, RENDERS);
    const naiveCpu = diff(before, cpuByKind(pids()));
    console.log(`\nround ${round}, concurrency 4, ${RENDERS} renders each`);
    printCpu('ours', oursCpu, RENDERS, mine.seconds);
    console.log(`  stages, mean ms: ${showStages(mine.mean)}`);
    printCpu('naive', naiveCpu, RENDERS, theirs.seconds);
    console.log(`  phases, mean ms: ${showStages(theirs.mean)}`);
    console.log(`ours/naive: ${fmt(theirs.seconds / mine.seconds, 2)}x`);
  }
} finally {
  await stack.stop();
  await browser.close();
  await site.close();
}

const { file, byFunction, byPlace } = readSelfTimes(profileDir);
const top = (times: Map<string, number>, n: number) =>
  largest(times, n)
    .map(([name, ms]) => `  ${fmt(ms, 0).padStart(7)} ms  ${name}`)
    .join('\n');
console.log(`\nrender service CPU profile (${file}), self time by place:\n${top(byPlace, 14)}`);
console.log(`by function:\n${top(byFunction, 20)}`);
