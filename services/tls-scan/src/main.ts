import { AddressPolicy, createLogger, exitOnFatalErrors, processOptions, runService, SafeHttp } from '@webutil/kit';
import { TrustStore } from './chain.js';
import { readConfig } from './config.js';
import { tlsScanService } from './server.js';

const config = readConfig();

const log = createLogger('tls-scan', config.LOG_LEVEL);
exitOnFatalErrors(log);
const policy = new AddressPolicy(config.WEBUTIL_ALLOW_TARGETS);
const http = new SafeHttp({ policy, connectTimeoutMs: config.SSL_SCAN_PROBE_TIMEOUT_MS });
const store = TrustStore.load(config.SSL_SCAN_EXTRA_CA_FILE);

await runService({
  name: 'tls-scan',
  ...processOptions(config),
  protoFiles: ['webutil/tlsscan/v1/tlsscan.proto'],
  bindings: [
    tlsScanService(
      {
        policy,
        http,
        store,
        port: config.SSL_SCAN_PORT,
        handshakeTimeoutMs: config.SSL_SCAN_HANDSHAKE_TIMEOUT_MS,
        probeTimeoutMs: config.SSL_SCAN_PROBE_TIMEOUT_MS,
      },
      log,
    ),
  ],
  log,
  onShutdown: () => http.close(),
});
