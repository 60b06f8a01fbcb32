/**
 * Issue 35 benchmark: a second caller's latency beside a flood, against its latency on the idle
 * service, in one run (docs/decisions/0261-fair-shares.md, 0262-fair-crawl-workers.md).
 *  1. renders (default pool, 2 browsers x 2 pages, queue 16): a Starter key's screenshot of a
 *     simple page, p50 of BENCH_ROUNDS on the idle service, then p50 of BENCH_ROUNDS one after the
 *     other while an Enterprise key keeps 24 screenshots of never-loading pages going (each holds a
 *     page for RENDER_TIMEOUT_MS, 5 s here); with "one flood render" beside it, as the target is
 *     "under 2 x idle + one render";
 *  2. crawl workers (2 at once): a Starter account's 2-page crawl and its 10-link bookmark check,
 *     idle and then beside an Enterprise account's 16 crawls that hold a worker for 5 s each.
 * Ratios: beside / idle. First in, first out, the render beside the flood waited 3 rounds and was
 * refused 503 after 15 s; the crawl waited for 8 rounds (40 s).
 */

import { addRenderPages } from '../src/fixture-pages.js';
import { startFixtureSite } from '../src/fixture-site.js';
import { startTestStack } from '../src/test-stack.js';
import { fmt } from './load.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const RENDER_BUDGET_MS = 5_000;
const CRAWL_BUDGET_MS = 5_000;

const site = await startFixtureSite();
addRenderPages(site);
site.route('/two', (_req, res) => {
  res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body><a href="/ok">the other page</a></body></html>');
});
const stack = await startTestStack({
  allowTargets: '127.0.0.0/8',
  envFor: {
    render: { RENDER_TIMEOUT_MS: String(RENDER_BUDGET_MS) },
    crawl: { CRAWL_CONCURRENCY: '2', CRAWL_TIME_BUDGET_MS: String(CRAWL_BUDGET_MS) },
  },
});
let unique = 0;
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

async function newKey(plan: string): Promise<string> {
  const created = await stack.admin(
    'create-account',
    '--email',
    `bench-fair-${++unique}-${Date.now()}@example.test`,
    '--plan',
    plan,
    '--top-up',
    '10000',
    '--rate-limit',
    '100000',
    '--mint-key',
    'bench',
  );
  return created.apiKey as string;
}

async function call(
  apiKey: string,
  path: string,
  init: RequestInit,
): Promise<{ status: number; body: any; ms: number }> {
  const started = performance.now();
  const res = await stack.api(path, { ...init, apiKey });
  const body = (await res.json()) as any;
  return { status: res.status, body, ms: performance.now() - started };
}
const json = (body: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

async function screenshot(apiKey: string, url: string): Promise<number> {
  const { status, body, ms } = await call(apiKey, '/v1/screenshot', json({ url: `${url}&r=${++unique}` }));
  if (status !== 200) throw new Error(`screenshot beside: ${status} ${JSON.stringify(body.error)}`);
  return ms;
}

/** A job's time from its start to its end (polled every 100 ms); it must end done. */
async function job(apiKey: string, start: () => Promise<{ status: number; body: any }>, poll: string): Promise<number> {
  const started = performance.now();
  const { status, body } = await start();
  if (status !== 202) throw new Error(`start: ${status} ${JSON.stringify(body.error)}`);
  for (;;) {
    const { status: polledStatus, body: polled } = await call(apiKey, `${poll}/${body.data.jobId}`, {});
    // Polls are free reads with a bound of their own per client: past it, wait and poll again.
    if (polledStatus === 429) {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      continue;
    }
    if (polledStatus !== 200) throw new Error(`poll: ${polledStatus} ${JSON.stringify(polled.error)}`);
    if (polled.data.status !== 'crawling') {
      if (polled.data.status !== 'done') throw new Error(`job ended ${JSON.stringify(polled.data)}`);
      return performance.now() - started;
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
const crawl = (apiKey: string) =>
  job(apiKey, () => call(apiKey, '/v1/broken-links/crawl', json({ url: site.url('/two') })), '/v1/broken-links/crawl');
const bookmarkCheck = (apiKey: string) =>
  job(
    apiKey,
    () => {
      const links = Array.from(
        { length: 10 },
        (_, i) => `<bookmark href="${site.url(`/ok?b=${i}&amp;r=${++unique}`)}"><title>b${i}</title></bookmark>`,
      );
      const form = new FormData();
      form.set('file', new Blob([`<?xml version="1.0"?><xbel version="1.0">${links.join('')}</xbel>`]), 'b.xbel');
      return call(apiKey, '/v1/bookmarks/check', { method: 'POST', body: form });
    },
    '/v1/bookmarks/check',
  );

function report(name: string, idle: number[], beside: number[], extra = ''): void {
  const ratio = median(beside) / median(idle);
  console.log(
    `${name.padEnd(28)} idle p50 ${fmt(median(idle), 0).padStart(6)} ms   beside the flood p50 ` +
      `${fmt(median(beside), 0).padStart(6)} ms   ratio ${fmt(ratio, 2)}x${extra}`,
  );
}

try {
  const other = await newKey('STARTER');
  const flooder = await newKey('ENTERPRISE');
  const simple = site.url('/page/simple?bench=1');
  await screenshot(other, simple); // Chromium warm
  const idleRenders: number[] = [];
  for (let i = 0; i < ROUNDS; i++) idleRenders.push(await screenshot(other, simple));

  // The render flood: 24 at a time, each started again as it ends, until the measurements are done.
  let flooding = true;
  const floodTimes: number[] = [];
  const floodOne = async (i: number): Promise<void> => {
    while (flooding) {
      const { status, ms } = await call(flooder, '/v1/screenshot', json({ url: site.url(`/hang?f=${i}-${++unique}`) }));
      if (status === 408) floodTimes.push(ms);
      if (status === 429) await new Promise((resolve) => setTimeout(resolve, 500));
    }
  };
  const renderFlood = Array.from({ length: 24 }, (_, i) => floodOne(i));
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const besideRenders: number[] = [];
  for (let i = 0; i < ROUNDS; i++) besideRenders.push(await screenshot(other, simple));
  flooding = false;
  await Promise.all(renderFlood);
  const oneRender = median(floodTimes);
  report('screenshot (Starter key)', idleRenders, besideRenders, `   one flood render ${fmt(oneRender, 0)} ms`);
  const target = 2 * median(idleRenders) + oneRender;
  console.log(
    `  target: beside < 2 x idle + one render = ${fmt(target, 0)} ms: ` +
      (median(besideRenders) < target ? 'met' : 'MISSED'),
  );

  const idleCrawls: number[] = [];
  const idleChecks: number[] = [];
  for (let i = 0; i < ROUNDS; i++) idleCrawls.push(await crawl(other));
  for (let i = 0; i < ROUNDS; i++) idleChecks.push(await bookmarkCheck(other));
  // The crawl flood: the Enterprise bound of 16 slow crawls, kept full until the measurements are done.
  flooding = true;
  // Starts only (no polls, which would use up the client's free reads): past the bound, 429 and again.
  const crawlFloodOne = async (i: number): Promise<void> => {
    while (flooding) {
      await call(flooder, '/v1/broken-links/crawl', json({ url: site.url(`/hang?c=${i}-${++unique}`) }));
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  };
  const crawlFlood = Array.from({ length: 16 }, (_, i) => crawlFloodOne(i));
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const besideCrawls: number[] = [];
  const besideChecks: number[] = [];
  for (let i = 0; i < ROUNDS; i++) besideCrawls.push(await crawl(other));
  for (let i = 0; i < ROUNDS; i++) besideChecks.push(await bookmarkCheck(other));
  flooding = false;
  report('2-page crawl (Starter)', idleCrawls, besideCrawls, `   one flood crawl ${CRAWL_BUDGET_MS} ms`);
  report('10-link bookmark check', idleChecks, besideChecks);
  console.log(
    '  target: each beside the flood < 30000 ms:',
    Math.max(...besideCrawls, ...besideChecks) < 30_000 ? 'met' : 'MISSED',
  );
  await Promise.all(crawlFlood);
} finally {
  await stack.stop();
  await site.close();
}
