/**
 * A distributed site audit's pace on jongodb: REPLICAS in-process replicas (each its own store
 * connections, NATS work consumer and page workers) audit the generated site of PAGES pages for at
 * most SECONDS; prints pages per second and, per store command, how many and their total time.
 * `npx tsx services/crawl/bench/distributed-jongodb.ts`, under the e2e lock.
 */
import { randomUUID } from 'node:crypto';
import { AddressPolicy, createLogger, SafeHttp } from '@webutil/kit';
import { startAuditSite } from '@webutil/scripts/fixture-audit-site';
import { startMongo } from '@webutil/scripts/mongo-under-test';
import { removeStreams, SHARED_NATS_URL, uniquePrefix } from '@webutil/scripts/nats-under-test';
import mongoose from 'mongoose';
import { throttleFor } from '../src/checking/throttle.js';
import { readConfig } from '../src/config.js';
import { MongoAuditPages } from '../src/jobs/audit-pages-mongo.js';
import { auditSiteDistributed } from '../src/site-audit/distributed/coordinator.js';
import { MongoPageFrontier } from '../src/site-audit/distributed/page-frontier-mongo.js';
import { NatsPageWork } from '../src/site-audit/distributed/page-work-nats.js';
import { AuditPageWorker } from '../src/site-audit/distributed/page-worker.js';

const PAGES = Number(process.env.PAGES ?? 2_000);
const REPLICAS = Number(process.env.REPLICAS ?? 3);
const WORKERS = Number(process.env.WORKERS ?? 8);
const SECONDS = Number(process.env.SECONDS ?? 120);

const log = createLogger('bench', 'silent');
const mongo = await startMongo();
const site = await startAuditSite(PAGES);
const settings = readConfig({ DATA_DIR: '/tmp', WEBUTIL_ALLOW_TARGETS: '127.0.0.0/8' });
const safe = new SafeHttp({ policy: new AddressPolicy(settings.WEBUTIL_ALLOW_TARGETS) });
// The crawl's own throttle, as the service builds it.
const deps = { http: safe, throttle: throttleFor(settings.fetch), ...settings.fetch, limits: settings.crawl };
const prefix = uniquePrefix();
const commands = new Map<string, { n: number; ms: number }>();
const watch = (client: { on(event: string, f: (e: { commandName: string; duration: number }) => void): void }) =>
  client.on('commandSucceeded', (e) => {
    const c = commands.get(e.commandName) ?? { n: 0, ms: 0 };
    c.n++;
    c.ms += e.duration;
    commands.set(e.commandName, c);
  });
// Every store connection reports its commands (mongoose keeps each connection it made).
const url = `${mongo.url}${mongo.url.includes('?') ? '&' : '?'}monitorCommands=true`;
const pages = await MongoAuditPages.connect(url);
const replicas = await Promise.all(
  Array.from({ length: REPLICAS }, async () => {
    const frontier = await MongoPageFrontier.connect(url);
    const work = await NatsPageWork.connect({
      url: SHARED_NATS_URL,
      prefix,
      ackWaitMs: 10_000,
      retentionMs: 600_000,
      log,
    });
    const worker = new AuditPageWorker({
      frontier,
      pages,
      work,
      crawl: deps,
      owner: randomUUID(),
      leaseMs: 10_000,
      log,
    });
    worker.start(WORKERS);
    return { frontier, work, worker, leaseMs: 10_000 };
  }),
);
for (const connection of mongoose.connections) if (connection.readyState === 1) watch(connection.getClient());
const first = replicas[0] as (typeof replicas)[number];
const stop = new AbortController();
const started = Date.now();
let crawled = 0;
const timer = setInterval(
  () => console.log(`${Math.round((Date.now() - started) / 1000)} s: ${crawled} pages`),
  10_000,
);
const timeout = setTimeout(() => stop.abort(new Error('time up')), SECONDS * 1000);
try {
  await auditSiteDistributed(
    new URL(`${site.base}/`),
    PAGES + 100,
    deps,
    (p) => {
      crawled = p.pagesCrawled ?? crawled;
    },
    stop.signal,
    { checkFragments: false },
    { store: pages, jobId: randomUUID(), expiresAt: new Date(Date.now() + 3_600_000) },
    first,
    1,
  );
} catch (err) {
  console.log(`stopped: ${(err as Error).message}`);
}
const secs = (Date.now() - started) / 1000;
clearInterval(timer);
clearTimeout(timeout);
console.log(
  `${REPLICAS} replicas x ${WORKERS} workers, ${PAGES}-page site: ${crawled} pages in ${secs.toFixed(1)} s = ` +
    `${(crawled / secs).toFixed(2)} pages/s`,
);
for (const [name, c] of [...commands].sort((a, b) => b[1].ms - a[1].ms))
  console.log(`  ${name}: ${c.n} commands, ${Math.round(c.ms)} ms in all, ${(c.ms / c.n).toFixed(1)} ms each`);
for (const r of replicas) {
  r.worker.close();
  await r.work.close();
  await r.frontier.close();
}
await pages.close();
await safe.close();
await removeStreams(SHARED_NATS_URL, prefix);
await site.close();
await mongo.stop();
process.exit(0);
