/**
 * Issue 4 benchmark: link checking against linkinator 7.6 on one generated site, in one run.
 * The site: 260 doc pages and 17 others, ~2,100 unique links (7 external links per doc page,
 * spread over 4 external hosts), every answer delayed 15 ms, on 127.0.0.x.
 *  1. single-page check of a page linking to every doc page and external URL (~2,100 links):
 *     our POST /v1/broken-links against linkinator on that page;
 *  2. full crawl: our broken-link crawl (start, poll every 50 ms to done) against linkinator
 *     --recurse;
 * both with our caps lifted so both tools check the whole site. The first request the freshly
 * started stack gets is the full crawl, then a single-page check: these first runs are reported
 * on their own ("first run", the service's cold start; the site, which runs in this process, is
 * warmed before it with a HEAD and a GET of every URL, as linkinator always meets a site warmed
 * by the runs before it); then BENCH_ROUNDS rounds alternate the
 * tools, and medians are reported. linkinator runs in its own Node process per round, as its CLI
 * does, timed inside that process (Node start-up excluded); it then checks a second time in the
 * same process, which is reported too ("warm linkinator"). Our calls go through the edge as a
 * client's would (plain fetch: the e2e tests' contract validation is not in the timed path). The
 * broken-link sets are compared and each difference is explained from our record of that URL.
 *  3. peak RSS of the crawl service over a 250-page crawl with the spec's caps, fresh stack.
 */
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { request } from 'undici';
import { BENCH_SITE, startCrawlSite } from '../src/fixture-crawl-site.js';
import { removeStreams, uniquePrefix } from '../src/nats-under-test.js';
import { startTestStack, type TestStack } from '../src/test-stack.js';
import { fmt } from './load.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const run = promisify(execFile);

interface Measured {
  ms: number;
  broken: Set<string>;
  checked: number;
}

/**
 * linkinator with its defaults (concurrency 100), a 10 s time-out and CSS read (the site has CSS,
 * which we read by default), twice in one fresh process.
 */
const LINKINATOR = `
import { LinkChecker } from 'linkinator';
const [url, mode] = process.argv.slice(1);
const runs = [];
for (let i = 0; i < 2; i++) {
  const started = performance.now();
  const result = await new LinkChecker().check({
    path: url,
    recurse: mode === 'recurse',
    concurrency: 100,
    timeout: 10000,
    checkCss: true,
  });
  const ms = performance.now() - started;
  const urls = (state) => [...new Set(result.links.filter((l) => l.state === state).map((l) => l.url))];
  const checked = new Set(result.links.filter((l) => l.state !== 'SKIPPED').map((l) => l.url));
  runs.push({ ms, broken: urls('BROKEN'), checked: checked.size });
}
process.stdout.write(JSON.stringify(runs));
`;

/** The fresh-process run (as the CLI) and the second, warm run. */
async function linkinator(url: string, recurse: boolean): Promise<[Measured, Measured]> {
  const { stdout } = await run(
    process.execPath,
    ['--input-type=module', '-e', LINKINATOR, url, recurse ? 'recurse' : 'page'],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  const [cold, warm] = (JSON.parse(stdout) as { ms: number; broken: string[]; checked: number }[]).map((r) => ({
    ms: r.ms,
    broken: new Set(r.broken.map(withoutFragment)),
    checked: r.checked,
  }));
  return [cold as Measured, warm as Measured];
}

/** A call to the edge as a client makes it: the stack's API key, no contract validation. */
function call(stack: TestStack, path: string, init: RequestInit = {}): Promise<Response> {
  const headers = { ...(init.headers as Record<string, string>), authorization: `Bearer ${stack.apiKey}` };
  return fetch(`${stack.edgeUrl}${path}`, { ...init, headers });
}

async function postJson(stack: TestStack, path: string, body: unknown): Promise<any> {
  const res = await call(stack, path, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const json = (await res.json()) as any;
  if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(json.error)}`);
  return json.data;
}

async function crawl(stack: TestStack, url: string): Promise<any> {
  const { jobId } = await postJson(stack, '/v1/broken-links/crawl', { url });
  for (;;) {
    const { data } = (await (await call(stack, `/v1/broken-links/crawl/${jobId}`)).json()) as any;
    if (data.status !== 'crawling') return data;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const brokenOf = (links: any[]) =>
  new Set<string>(links.filter((l) => l.severity === 'broken').map((l) => withoutFragment(l.url)));

function withoutFragment(url: string): string {
  const hash = url.indexOf('#');
  return hash < 0 ? url : url.slice(0, hash);
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

/** Agreement of the broken sets, each difference named with our verdict on that URL. */
function compare(ours: Set<string>, theirs: Set<string>, records: Map<string, any>): string[] {
  const lines = [
    `broken links: ours ${ours.size}, linkinator ${theirs.size}, both ${[...ours].filter((u) => theirs.has(u)).length}`,
  ];
  const explain = (url: string) => {
    const r = records.get(url);
    return r ? `ours: ${r.severity}, ${r.category} (${r.reason})` : 'ours: not among our records';
  };
  for (const url of [...ours].filter((u) => !theirs.has(u))) lines.push(`  only ours: ${url}; ${explain(url)}`);
  for (const url of [...theirs].filter((u) => !ours.has(u))) lines.push(`  only linkinator: ${url}; ${explain(url)}`);
  return lines;
}

function rssOf(pid: number): { rssMb: number; peakMb: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 };
}

/**
 * A HEAD and a GET of every URL the site links from its all-links page, 32 at a time: the site's
 * own code gets compiled by V8 before the first timed run, as it is for every later one.
 */
async function warmSite(pageUrl: string): Promise<void> {
  const html = await (await fetch(pageUrl)).text();
  const urls = [...new Set([...html.matchAll(/href="([^"#]+)/g)].map((m) => new URL(m[1] as string, pageUrl).href))];
  let next = 0;
  const worker = async () => {
    while (next < urls.length) {
      const url = urls[next++] as string;
      for (const method of ['HEAD', 'GET'] as const) {
        const res = await request(url, { method, headersTimeout: 5_000 });
        await res.body.dump();
      }
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
}

const site = await startCrawlSite(BENCH_SITE);
await warmSite(site.expected.everything);
// Each stack has its own job store, so each gets its own NATS prefix (its own queue).
const prefixes = [uniquePrefix(), uniquePrefix()];
const env = (prefix: string) => ({ LOG_LEVEL: 'warn', NATS_URL, CRAWL_NATS_PREFIX: prefix });
const uncapped = await startTestStack({
  allowTargets: '127.0.0.0/8',
  env: { ...env(prefixes[0]!), CRAWL_MAX_PAGES: '100000', CRAWL_MAX_CHECKED_LINKS: '100000', PAGE_CHECK_CAP: '100000' },
});
interface Comparison {
  ours: Measured[];
  cold: Measured[];
  warm: Measured[];
  records: Map<string, any>;
}
const comparison = (): Comparison => ({ ours: [], cold: [], warm: [], records: new Map() });

try {
  const single = comparison();
  const full = comparison();
  let pagesCrawled = 0;
  const checkPage = async (): Promise<Measured> => {
    const started = performance.now();
    const page = await postJson(uncapped, '/v1/broken-links', { url: site.expected.everything });
    for (const l of page.links) single.records.set(withoutFragment(l.url), l);
    return { ms: performance.now() - started, broken: brokenOf(page.links), checked: page.checkedLinks };
  };
  const crawlSite = async (): Promise<Measured> => {
    const started = performance.now();
    const job = await crawl(uncapped, site.entryUrl);
    if (job.status !== 'done') throw new Error(`crawl ended ${job.status}: ${JSON.stringify(job.error)}`);
    pagesCrawled = job.result.pagesCrawled;
    for (const l of job.result.links) full.records.set(withoutFragment(l.url), l);
    return { ms: performance.now() - started, broken: brokenOf(job.result.links), checked: job.result.links.length };
  };
  const coldCrawl = await crawlSite();
  const coldSingle = await checkPage();
  process.stderr.write(
    `first run (fresh service): crawl ${fmt(coldCrawl.ms)} ms, then single page ${fmt(coldSingle.ms)} ms\n`,
  );
  for (let round = 0; round < ROUNDS; round++) {
    single.ours.push(await checkPage());
    const [pageCold, pageWarm] = await linkinator(site.expected.everything, false);
    single.cold.push(pageCold);
    single.warm.push(pageWarm);
    full.ours.push(await crawlSite());
    const [crawlCold, crawlWarm] = await linkinator(site.entryUrl, true);
    full.cold.push(crawlCold);
    full.warm.push(crawlWarm);
    process.stderr.write(
      `round ${round + 1}: single page ours ${fmt(single.ours.at(-1)!.ms)} ms, ` +
        `linkinator ${fmt(pageCold.ms)}/${fmt(pageWarm.ms)} ms; ` +
        `crawl ours ${fmt(full.ours.at(-1)!.ms)} ms, linkinator ${fmt(crawlCold.ms)}/${fmt(crawlWarm.ms)} ms\n`,
    );
  }

  // Peak RSS over one crawl with the spec's caps (250 pages, 1,500 checked links), fresh service.
  const capped = await startTestStack({ allowTargets: '127.0.0.0/8', env: env(prefixes[1]!) });
  let memory: { before: number; peak: number; pages: number; links: number; ms: number };
  try {
    const pid = capped.pid('crawl');
    if (pid === undefined) throw new Error('no crawl process');
    const before = rssOf(pid).rssMb;
    const started = performance.now();
    const job = await crawl(capped, site.entryUrl);
    memory = {
      before,
      peak: rssOf(pid).peakMb,
      pages: job.result.pagesCrawled,
      links: job.result.links.length,
      ms: performance.now() - started,
    };
  } finally {
    await capped.stop();
  }

  const ms = (list: Measured[]) => median(list.map((m) => m.ms));
  const report = (label: string, m: Comparison, cold: Measured, first: string) => {
    const [ours, fresh, warm] = [ms(m.ours), ms(m.cold), ms(m.warm)];
    console.log(
      `${label} (medians of ${ROUNDS}): ours ${fmt(ours)} ms; ` +
        `linkinator ${fmt(fresh)} ms fresh process, ${fmt(warm)} ms warm`,
    );
    console.log(
      `  ours is ${fmt(fresh / ours, 2)}x faster than linkinator as its CLI runs, ` +
        `${fmt(warm / ours, 2)}x faster than linkinator warm`,
    );
    console.log(
      `  ${first}: ${fmt(cold.ms)} ms (${fmt(cold.ms / ours, 2)}x our median): ` +
        `${fmt(fresh / cold.ms, 2)}x faster than linkinator's CLI, ${fmt(warm / cold.ms, 2)}x than linkinator warm`,
    );
    console.log(`  URLs checked: ours ${m.ours[0]!.checked}, linkinator ${m.cold[0]!.checked}`);
    for (const line of compare(m.ours.at(-1)!.broken, m.cold.at(-1)!.broken, m.records)) console.log(`  ${line}`);
  };
  console.log('\n== crawl benchmark (issue 4): linkinator 7.6.1 on Node', process.version, '==');
  console.log(
    `site: ${site.expected.pages} doc pages + 17 others, ` +
      `~${site.expected.pages * 8 + 40} unique links over 6 hosts, 15 ms per answer`,
  );
  report(`single page (${site.expected.everything})`, single, coldSingle, 'our first check (after the first crawl)');
  report(`full crawl (${pagesCrawled} pages)`, full, coldCrawl, "our first crawl, the fresh service's first request");
  console.log(
    `peak RSS of the crawl service over a ${memory.pages}-page crawl ` +
      `(${memory.links} links checked, ${fmt(memory.ms)} ms): ` +
      `${fmt(memory.peak)} MB (${fmt(memory.before)} MB before it)`,
  );
} finally {
  await uncapped.stop();
  await site.close();
  for (const prefix of prefixes) await removeStreams(NATS_URL, prefix);
}
