import { AddressPolicy, createLogger, exitOnFatalErrors, lookupVia, SafeHttp, serveMetrics } from '@webutil/kit';
import { createApp } from './app.js';
import { WebhookDelivery } from './areas/webhooks/deliver.js';
import { setWebhookTargets } from './areas/webhooks/targets.js';
import { closeAll, connectAll } from './clients.js';
import { readConfig } from './config.js';
import { createServer } from './http-server.js';
import { createMetering } from './metering/index.js';
import { listenForRevocations } from './revocations.js';
import { routes } from './routes.js';

const config = readConfig();

const log = createLogger('edge', config.LOG_LEVEL);
exitOnFatalErrors(log);
const clients = connectAll({
  billing: config.BILLING_ADDR,
  metaScan: config.META_SCAN_ADDR,
  crawl: config.CRAWL_ADDR,
  render: config.RENDER_ADDR,
  bookmark: config.BOOKMARK_ADDR,
  tlsScan: config.TLS_SCAN_ADDR,
  monitor: config.MONITOR_ADDR,
});
const metering = createMetering(clients.billing, log, { callerViewMs: config.CALLER_VIEW_MS });
const revocations =
  config.NATS_URL === undefined
    ? undefined
    : listenForRevocations(config.NATS_URL, (subject) => metering.revoke(subject), log);
const publicBaseUrl = config.PUBLIC_BASE_URL ?? `http://127.0.0.1:${config.PORT}`;
const app = createApp({
  clients,
  metering,
  log,
  jsonLimit: config.JSON_BODY_LIMIT,
  trustedProxies: config.TRUSTED_PROXIES,
  publicBaseUrl,
  turnstile: Boolean(config.TURNSTILE_SITE_KEY),
  maxUploadsPerClient: config.MAX_UPLOADS_PER_CLIENT,
});
const webhookPolicy = new AddressPolicy(config.WEBUTIL_ALLOW_TARGETS);
const webhookLookup = lookupVia(config.WEBHOOK_DNS_SERVERS);
setWebhookTargets(webhookPolicy, webhookLookup);
const webhookHttp = new SafeHttp({ policy: webhookPolicy, lookup: webhookLookup, connectionsPerOrigin: 4 });
const webhooks = config.WEBHOOK_DELIVERY
  ? new WebhookDelivery({
      clients,
      routes,
      http: webhookHttp,
      log: log.child({ part: 'webhooks' }),
      retryBaseMs: config.WEBHOOK_RETRY_BASE_MS,
      pollMs: config.WEBHOOK_POLL_MS,
      tickMs: config.WEBHOOK_TICK_MS,
      publicBaseUrl,
    })
  : undefined;
webhooks?.start();
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
      revocations?.close();
      await webhooks?.stop();
      await webhookHttp.close();
      await metering.drain(5_000);
      closeAll(clients);
      metrics?.close();
      log.info('stopped');
      process.exit(0);
    });
    server.closeIdleConnections();
  });
}
