import {
  AddressPolicy,
  createLogger,
  exitOnFatalErrors,
  lookupVia,
  processOptions,
  runService,
  SafeHttp,
} from '@webutil/kit';
import { TrustStore } from './chain.js';
import { readConfig } from './config.js';
import { tlsScanService } from './server.js';

const config = readConfig();

const log = createLogger('tls-scan', config.LOG_LEVEL);
exitOnFatalErrors(log);
const policy = new AddressPolicy(config.WEBUTIL_ALLOW_TARGETS);
const store = TrustStore.load(config.SSL_SCAN_EXTRA_CA_FILE);
const lookup = lookupVia(config.SSL_SCAN_DNS_SERVERS);
// The HSTS answer counts only over a certificate the scan's own trust store accepts.
const http = new SafeHttp({ policy, lookup, ca: store.pems, connectTimeoutMs: config.SSL_SCAN_PROBE_TIMEOUT_MS });

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
        lookup,
        dnsServers: config.SSL_SCAN_DNS_SERVERS,
        extraProbes: config.SSL_SCAN_EXTRA_PROBES,
        handshakeTimeoutMs: config.SSL_SCAN_HANDSHAKE_TIMEOUT_MS,
        probeTimeoutMs: config.SSL_SCAN_PROBE_TIMEOUT_MS,
        drownPorts: config.SSL_SCAN_DROWN_PORTS,
      },
      log,
    ),
  ],
  log,
  onShutdown: () => http.close(),
});
