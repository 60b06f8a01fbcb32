import {
  AddressPolicy,
  createLogger,
  exitOnFatalErrors,
  lookupVia,
  processOptions,
  runService,
  SafeHttp,
} from '@webutil/kit';
import { readConfig } from './config.js';
import { metaScanService } from './server.js';

const config = readConfig();

const log = createLogger('meta-scan', config.LOG_LEVEL);
exitOnFatalErrors(log);
const policy = new AddressPolicy(config.WEBUTIL_ALLOW_TARGETS);
const lookup = lookupVia(config.META_DNS_SERVERS);
const http = new SafeHttp({ policy, lookup, connectTimeoutMs: config.DOWN_CHECK_TIMEOUT_MS });

await runService({
  name: 'meta-scan',
  ...processOptions(config),
  protoFiles: ['webutil/metascan/v1/metascan.proto'],
  bindings: [
    metaScanService(
      {
        downCheck: { http, policy, lookup, testedFrom: config.TESTED_FROM, timeoutMs: config.DOWN_CHECK_TIMEOUT_MS },
        metaScan: {
          http,
          pageTimeoutMs: config.META_PAGE_TIMEOUT_MS,
          fileTimeoutMs: config.META_FILE_TIMEOUT_MS,
          maxHeadBytes: config.META_MAX_HEAD_BYTES,
        },
      },
      log,
    ),
  ],
  log,
  onShutdown: () => http.close(),
});
