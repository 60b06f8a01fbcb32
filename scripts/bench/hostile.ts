/**
 * Issue 8 benchmark: a broken-link crawl of the hostile fixture site (sitemap bomb, nested tags,
 * regex-hostile bodies, huge id lists, 135,000 queued URLs) next to a crawl of a normal site, each
 * in a fresh process running the crawl service in process: wall time, peak RSS and the longest
 * event-loop block (monitorEventLoopDelay), with the hostile crawl's ratios to the normal one.
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
const here = path.dirname(fileURLToPath(import.meta.url));

async function crawlInFreshProcess(url: string): Promise<CrawlRun> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', path.join(here, 'crawl-process.ts'), url], {
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
  const line = (label: string, r: CrawlRun) =>
    `${label} (${r.pages} pages, ${r.links} links checked): wall ${fmt(r.ms)} ms, peak RSS ${fmt(r.peakRssMb)} MB ` +
    `(${fmt(r.baseRssMb)} MB before), longest event-loop block ${fmt(r.maxBlockMs)} ms`;
  console.log('\n== hostile site benchmark (issue 8): one broken-link crawl each, crawl service in a fresh process ==');
  console.log(line('normal crawl', normal));
  console.log(line('hostile site', hostile));
  console.log(
    `  hostile / normal: wall ${fmt(hostile.ms / normal.ms, 2)}x, peak RSS ${fmt(hostile.peakRssMb / normal.peakRssMb, 2)}x, ` +
      `longest block ${fmt(hostile.maxBlockMs / normal.maxBlockMs, 2)}x`,
  );
} finally {
  await normalSite.close();
  await hostileSite.close();
}
