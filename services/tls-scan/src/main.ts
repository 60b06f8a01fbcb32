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
import { TrustStore } from './chain.js';
import { tlsScanService } from './server.js';

const config = loadConfig({
  ...serviceEnv,
  HOST: env.string('0.0.0.0'),
  PORT: env.port(50054),
  WEBUTIL_ALLOW_TARGETS: env.cidrList(),
  /** The port scanned (the spec's 443); tests point it at their own TLS servers. */
  SSL_SCAN_PORT: env.port(443),
  /** PEM file of roots trusted besides Node's bundled Mozilla store (a private CA, tests). */
  SSL_SCAN_EXTRA_CA_FILE: env.optionalString(),
  SSL_SCAN_HANDSHAKE_TIMEOUT_MS: env.int(10_000, 1),
  SSL_SCAN_PROBE_TIMEOUT_MS: env.int(5_000, 1),
});

const log = createLogger('tls-scan', config.LOG_LEVEL);
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
