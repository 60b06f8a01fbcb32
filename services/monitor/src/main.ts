import { createLogger, exitOnFatalErrors, processOptions, runService } from '@webutil/kit';
import { readConfig } from './config.js';
import { monitorService } from './server.js';

const config = readConfig();

const log = createLogger('monitor', config.LOG_LEVEL);
exitOnFatalErrors(log);

await runService({
  name: 'monitor',
  ...processOptions(config),
  protoFiles: ['webutil/monitor/v1/monitor.proto'],
  bindings: [monitorService(log)],
  log,
});
