import { AddressPolicy, createLogger, env, loadConfig, runService, SafeHttp, serviceEnv } from '@webutil/kit';
import { crawlService } from './server.js';

const config = loadConfig({
  ...serviceEnv,
  HOST: env.string('0.0.0.0'),
  PORT: env.port(50053),
  WEBUTIL_ALLOW_TARGETS: env.cidrList(),
  PAGE_TIMEOUT_MS: env.int(20_000, 1),
  MAX_PAGE_BYTES: env.int(20 * 1024 * 1024, 1024),
});

const log = createLogger('crawl', config.LOG_LEVEL);
const http = new SafeHttp({ policy: new AddressPolicy(config.WEBUTIL_ALLOW_TARGETS) });

await runService({
  name: 'crawl',
  host: config.HOST,
  port: config.PORT,
  protoFiles: ['webutil/crawl/v1/crawl.proto'],
  bindings: [crawlService({ http, timeoutMs: config.PAGE_TIMEOUT_MS, linkCap: 5_000, maxPageBytes: config.MAX_PAGE_BYTES }, log)],
  shutdownGraceMs: config.SHUTDOWN_GRACE_MS,
  metricsPort: config.METRICS_PORT,
  log,
  onShutdown: () => http.close(),
});
