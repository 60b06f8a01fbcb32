import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { createLogger, exitOnFatalErrors, processOptions, runService } from '@webutil/kit';
import { type MonitorConfig, readConfig } from './config.js';
import { Monitors } from './monitors.js';
import { monitorService } from './server.js';
import { openStatusPages } from './status-pages/store.js';
import { storeReads } from './status-reads.js';
import { monitorStatusService } from './status-server.js';
import type { MonitorStore } from './store/store.js';

const config = readConfig();

const log = createLogger('monitor', config.LOG_LEVEL);
exitOnFatalErrors(log);
const store = await openStore(config);
const monitors = new Monitors({ store });
const pages = await openStatusPages({
  mongoUrl: config.MONGO_URL,
  sqliteFile: path.join(config.DATA_DIR, 'monitors.sqlite'),
});

await runService({
  name: 'monitor',
  ...processOptions(config),
  protoFiles: ['webutil/monitor/v1/monitor.proto', 'webutil/monitor/v1/status.proto'],
  bindings: [monitorService(monitors, log), monitorStatusService({ reads: storeReads(store), pages }, log)],
  log,
  onShutdown: () => store.close(),
});

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
