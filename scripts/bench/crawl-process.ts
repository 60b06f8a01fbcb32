/**
 * One broken-link crawl in a fresh process, with the crawl service running in this process (so
 * its memory and event loop are what is measured): `node --import tsx crawl-process.ts <url>`
 * prints {status, ms, pages, baseRssMb, peakRssMb, maxBlockMs} as JSON.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { credentials } from '@grpc/grpc-js';
import { createCrawlService, readCrawlSettings } from '@webutil/crawl';
import { createLogger, runService } from '@webutil/kit';
import { CrawlServiceClient, type GetBrokenLinkCrawlResponse } from '@webutil/proto/webutil/crawl/v1/crawl';

const [entryUrl] = process.argv.slice(2);
if (!entryUrl) throw new Error('usage: crawl-process.ts <entry url>');
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'crawl-bench-'));
const settings = readCrawlSettings({ DATA_DIR: dataDir, WEBUTIL_ALLOW_TARGETS: '127.0.0.0/8', HOST: '127.0.0.1' });
const log = createLogger('crawl', 'warn');
const service = await createCrawlService(settings, log);
const running = await runService({
  name: 'crawl',
  host: '127.0.0.1',
  port: 0,
  protoFiles: ['webutil/crawl/v1/crawl.proto'],
  bindings: [service.binding],
  log,
  onShutdown: () => service.close(),
});
const client = new CrawlServiceClient(`127.0.0.1:${running.port}`, credentials.createInsecure());
const call = <T>(run: (done: (err: Error | null, value: T) => void) => void) =>
  new Promise<T>((resolve, reject) => run((err, value) => (err ? reject(err) : resolve(value))));

const mb = (bytes: number) => bytes / 1024 / 1024;
const baseRssMb = mb(process.memoryUsage.rss());
let peak = process.memoryUsage.rss();
const sampler = setInterval(() => {
  peak = Math.max(peak, process.memoryUsage.rss());
}, 20);
const loop = monitorEventLoopDelay({ resolution: 10 });
loop.enable();
const started = performance.now();
const { jobId } = await call<{ jobId: string }>((done) => client.startBrokenLinkCrawl({ url: entryUrl }, done));
let job: GetBrokenLinkCrawlResponse;
for (;;) {
  job = await call<GetBrokenLinkCrawlResponse>((done) => client.getBrokenLinkCrawl({ jobId }, done));
  if (job.status !== 'crawling') break;
  await new Promise((resolve) => setTimeout(resolve, 100));
}
const ms = performance.now() - started;
loop.disable();
clearInterval(sampler);
process.stdout.write(
  JSON.stringify({
    status: job.status,
    error: job.error,
    ms,
    pages: job.result?.pagesCrawled ?? 0,
    links: job.result?.links.length ?? 0,
    baseRssMb,
    peakRssMb: mb(peak),
    maxBlockMs: loop.max / 1e6,
  }),
);
client.close();
await running.stop();
rmSync(dataDir, { recursive: true, force: true });
process.exit(0);
