/**
 * Issue 8 benchmark: a broken-link crawl of the hostile fixture site (sitemap bomb, nested tags,
 * regex-hostile bodies, huge id lists, 135,000 queued URLs) next to a crawl of a normal site, each
 * in a fresh process running the crawl service in process: wall time, peak RSS (the kernel's
 * high-water mark) and the longest event-loop block (monitorEventLoopDelay), with the hostile
 * crawl's ratios to the normal one. Then CRAWL_CONCURRENCY hostile crawls at once in one process:
 * the per-process worst case, next to base + CRAWL_CONCURRENCY x (one hostile crawl's peak - base).
 * A hostile-site block longer than BLOCK_LIMIT_MS is flagged.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { BENCH_SITE, startCrawlSite } from '../src/fixture-crawl-site.js';
import { startHostileSite } from '../src/fixture-hostile-site.js';
import { fmt } from './load.js';

interface CrawlRun {
  status: string;
  error?: { code: string; message: string };
  ms: number;
  pages: number;
  links: number;
  baseRssMb: number;
  peakRssMb: number;
  maxBlockMs: number;
}

const run = promisify(execFile);
/** Longest event-loop block of a hostile crawl that is still acceptable (requests wait no longer). */
const BLOCK_LIMIT_MS = 500;
/** Crawls one crawl process runs at once (CRAWL_CONCURRENCY's default). */
const CONCURRENCY = 4;
const here = path.dirname(fileURLToPath(import.meta.url));

async function crawlInFreshProcess(url: string, crawls = 1): Promise<CrawlRun> {
  const script = path.join(here, 'crawl-process.ts');
  const { stdout } = await run(process.execPath, ['--import', 'tsx', script, url, String(crawls)], {
    maxBuffer: 16 * 1024 * 1024,
  });
  const result = JSON.parse(stdout) as CrawlRun;
  if (result.status !== 'done')
    throw new Error(`crawl of ${url} ended ${result.status}: ${JSON.stringify(result.error)}`);
  return result;
}

const normalSite = await startCrawlSite(BENCH_SITE);
const hostileSite = await startHostileSite();
try {
  const normal = await crawlInFreshProcess(normalSite.entryUrl);
  const hostile = await crawlInFreshProcess(hostileSite.entryUrl);
  const concurrent = await crawlInFreshProcess(hostileSite.entryUrl, CONCURRENCY);
  const line = (label: string, r: CrawlRun) =>
    `${label} (${r.pages} pages, ${r.links} links checked): wall ${fmt(r.ms)} ms, peak RSS ${fmt(r.peakRssMb)} MB ` +
    `(${fmt(r.baseRssMb)} MB before), longest event-loop block ${fmt(r.maxBlockMs)} ms`;
  console.log('\n== hostile site benchmark (issue 8): one broken-link crawl each, crawl service in a fresh process ==');
  console.log(line('normal crawl', normal));
  console.log(line('hostile site', hostile));
  console.log(
    `  hostile / normal: wall ${fmt(hostile.ms / normal.ms, 2)}x, ` +
      `peak RSS ${fmt(hostile.peakRssMb / normal.peakRssMb, 2)}x, ` +
      `longest block ${fmt(hostile.maxBlockMs / normal.maxBlockMs, 2)}x`,
  );
  for (const [label, r] of [
    ['hostile site', hostile],
    [`${CONCURRENCY} hostile crawls`, concurrent],
  ] as const) {
    if (r.maxBlockMs > BLOCK_LIMIT_MS)
      console.log(`  FLAG: ${label}: longest event-loop block ${fmt(r.maxBlockMs)} ms is above ${BLOCK_LIMIT_MS} ms`);
  }
  const perCrawl = hostile.peakRssMb - hostile.baseRssMb;
  console.log(line(`${CONCURRENCY} hostile crawls at once`, concurrent));
  console.log(
    `  per-process worst case: base ${fmt(hostile.baseRssMb)} MB + ` +
      `${CONCURRENCY} x ${fmt(perCrawl)} MB per hostile crawl = ` +
      `${fmt(hostile.baseRssMb + CONCURRENCY * perCrawl)} MB; ` +
      `measured with ${CONCURRENCY} at once: ${fmt(concurrent.peakRssMb)} MB`,
  );
} finally {
  await normalSite.close();
  await hostileSite.close();
}
