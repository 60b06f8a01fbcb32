import {
  AddressPolicy,
  createLogger,
  env,
  loadConfig,
  processOptions,
  runService,
  SafeHttp,
  serviceEnv,
} from '@webutil/kit';
import { metaScanService } from './server.js';

const config = loadConfig({
  ...serviceEnv,
  HOST: env.string('0.0.0.0'),
  PORT: env.port(50055),
  WEBUTIL_ALLOW_TARGETS: env.cidrList(),
  DOWN_CHECK_TIMEOUT_MS: env.int(15_000, 1),
  TESTED_FROM: env.string('India (Mumbai)'),
  META_PAGE_TIMEOUT_MS: env.int(15_000, 1),
  META_FILE_TIMEOUT_MS: env.int(10_000, 1),
  META_MAX_HEAD_BYTES: env.int(1024 * 1024, 1024),
});

const log = createLogger('meta-scan', config.LOG_LEVEL);
const policy = new AddressPolicy(config.WEBUTIL_ALLOW_TARGETS);
const http = new SafeHttp({ policy, connectTimeoutMs: config.DOWN_CHECK_TIMEOUT_MS });

await runService({
  name: 'meta-scan',
  ...processOptions(config),
  protoFiles: ['webutil/metascan/v1/metascan.proto'],
  bindings: [
    metaScanService(
      {
        downCheck: { http, policy, testedFrom: config.TESTED_FROM, timeoutMs: config.DOWN_CHECK_TIMEOUT_MS },
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
