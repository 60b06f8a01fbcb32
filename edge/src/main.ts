import { createLogger, env, loadConfig } from '@webutil/kit';
import { z } from 'zod';
import { createApp } from './app.js';
import { closeAll, connectAll } from './clients.js';

const config = loadConfig({
  HOST: env.string('0.0.0.0'),
  PORT: env.port(8080),
  LOG_LEVEL: z.string().default('info'),
  JSON_BODY_LIMIT: env.string('64kb'),
  BILLING_ADDR: env.string('127.0.0.1:50051'),
  META_SCAN_ADDR: env.string('127.0.0.1:50055'),
  CRAWL_ADDR: env.string('127.0.0.1:50053'),
  SHUTDOWN_GRACE_MS: env.int(10_000),
  /** Reverse proxies (CIDRs) whose X-Forwarded-For names the client; none by default. */
  TRUSTED_PROXIES: env.cidrList(),
});

const log = createLogger('edge', config.LOG_LEVEL);
const clients = connectAll({ billing: config.BILLING_ADDR, metaScan: config.META_SCAN_ADDR, crawl: config.CRAWL_ADDR });
const app = createApp({ clients, log, jsonLimit: config.JSON_BODY_LIMIT, trustedProxies: config.TRUSTED_PROXIES });
const server = app.listen(config.PORT, config.HOST, () => {
  const address = server.address();
  log.info({ port: typeof address === 'object' && address ? address.port : config.PORT }, 'listening');
});
server.requestTimeout = 0; // crawls and renders set their own deadlines per route
server.keepAliveTimeout = 5_000;

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    if (stopping) return;
    stopping = true;
    log.info('shutting down: draining requests');
    const force = setTimeout(() => server.closeAllConnections(), config.SHUTDOWN_GRACE_MS);
    server.close(() => {
      clearTimeout(force);
      closeAll(clients);
      log.info('stopped');
      process.exit(0);
    });
    server.closeIdleConnections();
  });
}
