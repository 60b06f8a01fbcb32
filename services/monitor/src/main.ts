import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { createLogger, exitOnFatalErrors, processOptions, runService } from '@webutil/kit';
import { openArtifactStore, sweepArtifacts } from '@webutil/kit/artifacts';
import { openAlertDelivery } from './alert-delivery.js';
import { closeRunClients, connectRunClients } from './clients.js';
import { type MonitorConfig, readConfig } from './config.js';
import { Monitors } from './monitors.js';
import { runMonitor } from './run-monitor.js';
import { Scheduler } from './scheduler.js';
import { monitorService } from './server.js';
import { openStatusPages } from './status-pages/store.js';
import { storeReads } from './status-reads.js';
import { monitorStatusService } from './status-server.js';
import type { MonitorStore } from './store/store.js';

const config = readConfig();

const log = createLogger('monitor', config.LOG_LEVEL);
exitOnFatalErrors(log);
const store = await openStore(config);
const images = await openArtifactStore({ dataDir: config.DATA_DIR, mongoUrl: config.MONGO_URL, bucket: 'monitor' });
const monitors = new Monitors({ store, images, log, timeScale: config.MONITOR_TIME_SCALE });
const pages = await openStatusPages({
  mongoUrl: config.MONGO_URL,
  sqliteFile: path.join(config.DATA_DIR, 'monitors.sqlite'),
});

// Each claimed run: its operation, billing, comparison, incidents and alerts (decision 0461).
const clients = connectRunClients({
  billing: config.BILLING_ADDR,
  metaScan: config.META_SCAN_ADDR,
  tlsScan: config.TLS_SCAN_ADDR,
  crawl: config.CRAWL_ADDR,
  render: config.RENDER_ADDR,
});
const stopSweepingImages = sweepArtifacts(images, 60 * 60_000, log);
const alerts = openAlertDelivery(
  {
    billingAddress: config.BILLING_ADDR,
    allowTargets: config.WEBUTIL_ALLOW_TARGETS,
    smtpUrl: config.SMTP_URL,
    mailFrom: config.MAIL_FROM,
    dataDir: config.DATA_DIR,
  },
  log.child({ part: 'alerts' }),
);
const runClaimed = runMonitor({
  store,
  clients,
  images,
  alerts: alerts.sink,
  log: log.child({ part: 'runs' }),
  publicBaseUrl: config.PUBLIC_BASE_URL,
  recheckDelayMs: config.MONITOR_RECHECK_DELAY_MS,
  crawlPollMs: config.MONITOR_CRAWL_POLL_MS,
  crawlDeadlineMs: config.MONITOR_CRAWL_DEADLINE_MS,
});
// Every replica schedules: a unique claim per (monitor, slot) picks the one that runs it (decisions 0431, 0469).
const scheduler = new Scheduler(
  store,
  runClaimed,
  {
    replica: config.MONITOR_REPLICA,
    tickMs: config.MONITOR_TICK_MS,
    graceMs: config.MONITOR_GRACE_MS,
    concurrency: config.MONITOR_CONCURRENCY,
    staleRunMs: config.MONITOR_STALE_RUN_MS,
    timeScale: config.MONITOR_TIME_SCALE,
    runRetentionMs: config.MONITOR_RUN_RETENTION_DAYS * 86_400_000,
  },
  log,
);

await runService({
  name: 'monitor',
  ...processOptions(config),
  protoFiles: ['webutil/monitor/v1/monitor.proto', 'webutil/monitor/v1/status.proto'],
  bindings: [monitorService(monitors, images, log), monitorStatusService({ reads: storeReads(store), pages }, log)],
  log,
  onShutdown: async () => {
    await scheduler.stop();
    stopSweepingImages();
    closeRunClients(clients);
    alerts.close();
    await images.close();
    await store.close();
  },
});
scheduler.start();
log.info({ replica: config.MONITOR_REPLICA, timeScale: config.MONITOR_TIME_SCALE }, 'the scheduler started');

/** The store the config names; mongoose is imported only when used. */
async function openStore(config: MonitorConfig): Promise<MonitorStore> {
  if (config.MONGO_URL) {
    const { MongoMonitorStore } = await import('./store/store-mongo.js');
    return MongoMonitorStore.connect(config.MONGO_URL);
  }
  mkdirSync(config.DATA_DIR, { recursive: true });
  const { SqliteMonitorStore } = await import('./store/store-sqlite.js');
  return new SqliteMonitorStore(path.join(config.DATA_DIR, 'monitors.sqlite'));
}
