import { mkdirSync } from 'node:fs';
import path from 'node:path';
import {
  AddressPolicy,
  createLogger,
  exitOnFatalErrors,
  type Logger,
  lookupVia,
  type RunningService,
  runService,
  SafeHttp,
  type ServiceBinding,
} from '@webutil/kit';
import { throttleFor } from './checking/throttle.js';
import { CrawlJobs } from './jobs/jobs.js';
import { MemoryTransport } from './jobs/memory-transport.js';
import type { JobStore } from './jobs/store.js';
import { SqliteJobStore } from './jobs/store-sqlite.js';
import type { CrawlTransport } from './jobs/transport.js';
import { crawlService } from './server.js';
import type { CrawlSettings } from './settings.js';
import { warmUp } from './warm-up.js';

/** A crawl service built and working (jobs taken, events recorded), ready to be served over gRPC. */
export interface CrawlService {
  binding: ServiceBinding;
  /** Stops taking jobs (running ones are handed back), closes the store and connections. */
  close(): Promise<void>;
}

/**
 * Builds the crawl service from its settings: the warm-up crawl, outbound HTTP and the host
 * throttle, the job store, the transport with its worker and recorder, and the sweeper of expired
 * jobs. Tests and benchmarks start one in process; main.ts serves one.
 */
export async function createCrawlService(settings: CrawlSettings, log: Logger): Promise<CrawlService> {
  if (settings.warmUp) await warmUp(settings, log);
  const policy = new AddressPolicy(settings.allowTargets);
  const lookup = lookupVia(settings.dnsServers);
  const f = settings.fetch;
  const http = new SafeHttp({
    policy,
    lookup,
    connectionsPerOrigin: f.hostConcurrencyMax,
    idleTimeoutMs: f.pageTimeoutMs,
  });
  const fetching = { http, throttle: throttleFor(f), ...f };
  const store = await openStore(settings);
  const transport = await openTransport(settings, log);
  const jobs = new CrawlJobs({
    store,
    transport,
    crawl: { ...fetching, limits: settings.crawl },
    policy,
    lookup,
    log,
    options: settings.jobs,
  });
  transport.record((event) => jobs.record(event));
  transport.work(settings.jobs.concurrency, (ticket, lease) => jobs.run(ticket, lease));
  if (transport instanceof MemoryTransport) {
    const resumed = await jobs.resumeAbandoned();
    if (resumed > 0) log.info({ resumed }, 'crawls of the previous run handed back to workers');
  }
  const sweeper = setInterval(
    () => {
      store.sweep().catch((err: unknown) => log.warn({ err }, 'could not delete expired crawl jobs'));
    },
    Math.min(60_000, settings.jobs.retentionMs),
  );
  sweeper.unref();
  return {
    binding: crawlService({ pageCheck: { ...fetching, ...settings.pageCheck }, jobs }, log),
    async close() {
      clearInterval(sweeper);
      await transport.close();
      await store.close();
      await http.close();
    },
  };
}

/** Builds the service and serves it on its gRPC port until SIGTERM. */
export async function runCrawlService(settings: CrawlSettings): Promise<RunningService> {
  const log = createLogger('crawl', settings.logLevel);
  exitOnFatalErrors(log);
  const service = await createCrawlService(settings, log);
  return runService({
    name: 'crawl',
    host: settings.host,
    port: settings.port,
    protoFiles: ['webutil/crawl/v1/crawl.proto'],
    bindings: [service.binding],
    shutdownGraceMs: settings.shutdownGraceMs,
    metricsPort: settings.metricsPort,
    connectPort: settings.connectPort,
    log,
    onShutdown: () => service.close(),
  });
}

/**
 * The job store the settings name. mongoose and the NATS client are imported only when used:
 * mongoose alone adds 16 MB to the process's resident memory.
 */
async function openStore(settings: CrawlSettings): Promise<JobStore> {
  if (settings.mongoUrl) {
    const { MongoJobStore } = await import('./jobs/store-mongo.js');
    return MongoJobStore.connect(settings.mongoUrl);
  }
  mkdirSync(settings.dataDir, { recursive: true });
  return new SqliteJobStore(path.join(settings.dataDir, 'crawl-jobs.sqlite'));
}

async function openTransport(settings: CrawlSettings, log: Logger): Promise<CrawlTransport> {
  if (!settings.natsUrl) return new MemoryTransport(log);
  const { NatsTransport } = await import('./jobs/nats-transport.js');
  return NatsTransport.connect({
    url: settings.natsUrl,
    prefix: settings.natsPrefix,
    ackWaitMs: settings.jobs.ackWaitMs,
    retentionMs: settings.jobs.retentionMs,
    log,
  });
}
