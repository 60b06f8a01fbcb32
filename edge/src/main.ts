import { createLogger, env, loadConfig, serveMetrics, serviceEnv } from '@webutil/kit';
import { z } from 'zod';
import { createApp } from './app.js';
import { closeAll, connectAll } from './clients.js';
import { createServer } from './http-server.js';
import { routes } from './routes.js';
import { SettlementQueue } from './settlements.js';

const config = loadConfig({
  HOST: env.string('0.0.0.0'),
  PORT: env.port(8080),
  LOG_LEVEL: z.string().default('info'),
  JSON_BODY_LIMIT: env.string('64kb'),
  BILLING_ADDR: env.string('127.0.0.1:50051'),
  META_SCAN_ADDR: env.string('127.0.0.1:50055'),
  CRAWL_ADDR: env.string('127.0.0.1:50053'),
  RENDER_ADDR: env.string('127.0.0.1:50052'),
  BOOKMARK_ADDR: env.string('127.0.0.1:50056'),
  TLS_SCAN_ADDR: env.string('127.0.0.1:50054'),
  SHUTDOWN_GRACE_MS: env.int(10_000),
  /** Reverse proxies (CIDRs) whose X-Forwarded-For names the client; none by default. */
  TRUSTED_PROXIES: env.cidrList(),
  /** Slow clients: time to send the headers, and the whole request (a 10 MB upload at 1.4 Mbit/s). */
  HEADERS_TIMEOUT_MS: env.int(10_000, 100),
  REQUEST_TIMEOUT_MS: env.int(60_000, 100),
  KEEP_ALIVE_TIMEOUT_MS: env.int(5_000, 100),
  /** The request line plus headers (an oversized query counts): Node's default, 16 KB. */
  MAX_HEADER_BYTES: env.int(16_384, 1_024),
  MAX_CONNECTIONS_PER_CLIENT: env.int(256, 1),
  /** Where clients reach the API; download links start with it. Default: this process on 127.0.0.1. */
  PUBLIC_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  /** Set (as for billing) when the bot challenge is Cloudflare Turnstile: the pages' CSP allows its widget. */
  TURNSTILE_SITE_KEY: env.optionalString(),
  /** Prometheus /metrics on its own port (not on the public one); unset: none. */
  METRICS_PORT: serviceEnv.METRICS_PORT,
});

const log = createLogger('edge', config.LOG_LEVEL);
const clients = connectAll({
  billing: config.BILLING_ADDR,
  metaScan: config.META_SCAN_ADDR,
  crawl: config.CRAWL_ADDR,
  render: config.RENDER_ADDR,
  bookmark: config.BOOKMARK_ADDR,
  tlsScan: config.TLS_SCAN_ADDR,
});
const settlements = new SettlementQueue(clients.billing, log);
const app = createApp({
  clients,
  settlements,
  log,
  jsonLimit: config.JSON_BODY_LIMIT,
  trustedProxies: config.TRUSTED_PROXIES,
  publicBaseUrl: config.PUBLIC_BASE_URL ?? `http://127.0.0.1:${config.PORT}`,
  turnstile: Boolean(config.TURNSTILE_SITE_KEY),
});
const server = createServer(app, {
  headersTimeoutMs: config.HEADERS_TIMEOUT_MS,
  requestTimeoutMs: config.REQUEST_TIMEOUT_MS,
  keepAliveTimeoutMs: config.KEEP_ALIVE_TIMEOUT_MS,
  maxHeaderBytes: config.MAX_HEADER_BYTES,
  // A connection waiting on the slowest route's reply is quiet until its deadline.
  socketIdleTimeoutMs: Math.max(...routes.map((route) => route.timeoutMs)) + 30_000,
  maxConnectionsPerClient: config.MAX_CONNECTIONS_PER_CLIENT,
  trustedProxies: config.TRUSTED_PROXIES,
});
const metrics = config.METRICS_PORT === undefined ? undefined : await serveMetrics(config.METRICS_PORT);
server.listen(config.PORT, config.HOST, () => {
  const address = server.address();
  log.info({ port: typeof address === 'object' && address ? address.port : config.PORT }, 'listening');
});

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    if (stopping) return;
    stopping = true;
    log.info('shutting down: draining requests');
    const force = setTimeout(() => server.closeAllConnections(), config.SHUTDOWN_GRACE_MS);
    server.close(async () => {
      clearTimeout(force);
      await settlements.drain(5_000);
      closeAll(clients);
      metrics?.close();
      log.info('stopped');
      process.exit(0);
    });
    server.closeIdleConnections();
  });
}
