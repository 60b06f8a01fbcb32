/**
 * Broken-link crawls in a fresh process, with the crawl service running in this process (so its
 * memory and event loop are what is measured): `node --import tsx crawl-process.ts <url> [crawls]`
 * runs `crawls` (default 1) crawls of <url> at once and prints {status, ms, pages, links,
 * baseRssMb, peakRssMb, maxBlockMs} as JSON (status, pages and links of the last to end). Peak RSS
 * is the kernel's high-water mark (maxRSS), which no event-loop block can hide from a sampler.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { credentials } from '@grpc/grpc-js';
import { CrawlServiceClient, type GetBrokenLinkCrawlResponse } from '@webutil/proto/webutil/crawl/v1/crawl';
import { freePort } from '../src/local-stack.js';

const [entryUrl, count = '1'] = process.argv.slice(2);
if (!entryUrl) throw new Error('usage: crawl-process.ts <entry url> [crawls]');
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'crawl-bench-'));
const port = await freePort();
// The service's own process wiring (main.ts), configured as its environment would.
Object.assign(process.env, {
  DATA_DIR: dataDir,
  WEBUTIL_ALLOW_TARGETS: '127.0.0.0/8',
  HOST: '127.0.0.1',
  PORT: String(port),
  LOG_LEVEL: 'warn',
});
await import('@webutil/crawl/main');
const client = new CrawlServiceClient(`127.0.0.1:${port}`, credentials.createInsecure());
const call = <T>(run: (done: (err: Error | null, value: T) => void) => void) =>
  new Promise<T>((resolve, reject) => run((err, value) => (err ? reject(err) : resolve(value))));

const mb = (bytes: number) => bytes / 1024 / 1024;
const baseRssMb = mb(process.memoryUsage.rss());
const loop = monitorEventLoopDelay({ resolution: 10 });
loop.enable();
const started = performance.now();
const crawlOnce = async () => {
  const { jobId } = await call<{ jobId: string }>((done) => client.startBrokenLinkCrawl({ url: entryUrl }, done));
  for (;;) {
    const job = await call<GetBrokenLinkCrawlResponse>((done) => client.getBrokenLinkCrawl({ jobId }, done));
    if (job.status !== 'crawling') return job;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};
const jobs = await Promise.all(Array.from({ length: Number(count) }, crawlOnce));
const job = jobs.find((j) => j.status !== 'done') ?? (jobs.at(-1) as GetBrokenLinkCrawlResponse);
const ms = performance.now() - started;
loop.disable();
const peakRssMb = process.resourceUsage().maxRSS / 1024; // kilobytes
process.stdout.write(
  JSON.stringify({
    status: job.status,
    error: job.error,
    ms,
    pages: job.result?.pagesCrawled ?? 0,
    links: job.result?.links.length ?? 0,
    baseRssMb,
    peakRssMb,
    maxBlockMs: loop.max / 1e6,
  }),
);
client.close();
rmSync(dataDir, { recursive: true, force: true });
process.exit(0);
