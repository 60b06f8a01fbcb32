import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { createLogger, exitOnFatalErrors, processOptions, runService } from '@webutil/kit';
import { type MonitorConfig, readConfig } from './config.js';
import { Monitors } from './monitors.js';
import { type RunClaimed, Scheduler } from './scheduler.js';
import { monitorService } from './server.js';
import { openStatusPages } from './status-pages/store.js';
import { storeReads } from './status-reads.js';
import { monitorStatusService } from './status-server.js';
import type { MonitorStore } from './store/store.js';

const config = readConfig();

const log = createLogger('monitor', config.LOG_LEVEL);
exitOnFatalErrors(log);
const store = await openStore(config);
const monitors = new Monitors({ store, timeScale: config.MONITOR_TIME_SCALE });
const pages = await openStatusPages({
  mongoUrl: config.MONGO_URL,
  sqliteFile: path.join(config.DATA_DIR, 'monitors.sqlite'),
});

// Until the runs execute their operation (run-monitor.ts), a claimed run is recorded as skipped.
const skipRun: RunClaimed = (_monitor, run) =>
  store.finishRun(run.id, {
    finishedAt: Date.now(),
    outcome: 'skipped',
    reason: 'runs do not execute their operation yet',
    creditsSpent: 0,
  });
// Every replica schedules: a unique claim per (monitor, slot) picks the one that runs it (decisions 0431, 0469).
const scheduler = new Scheduler(
  store,
  skipRun,
  {
    replica: config.MONITOR_REPLICA,
    tickMs: config.MONITOR_TICK_MS,
    graceMs: config.MONITOR_GRACE_MS,
    concurrency: config.MONITOR_CONCURRENCY,
    staleRunMs: config.MONITOR_STALE_RUN_MS,
    timeScale: config.MONITOR_TIME_SCALE,
  },
  log,
);

await runService({
  name: 'monitor',
  ...processOptions(config),
  protoFiles: ['webutil/monitor/v1/monitor.proto', 'webutil/monitor/v1/status.proto'],
  bindings: [monitorService(monitors, log), monitorStatusService({ reads: storeReads(store), pages }, log)],
  log,
  onShutdown: async () => {
    await scheduler.stop();
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
