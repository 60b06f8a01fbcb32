import { env, loadConfig, serviceEnv } from '@webutil/kit';
import { DROWN_PORTS } from './vulnerabilities/drown.js';

/** The service's settings from environment variables (a bad value stops the process, naming it). */
export function readConfig(source: NodeJS.ProcessEnv = process.env) {
  return loadConfig(
    {
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
      /** Other ports of the scanned address tried for SSLv2 with the same key (DROWN); `none` tries none. */
      SSL_SCAN_DROWN_PORTS: env.string(DROWN_PORTS.join(',')).transform((value, ctx) => {
        if (value.trim() === 'none') return [];
        const ports = value.split(',').map((p) => p.trim());
        const bad = ports.find((p) => !/^\d{1,5}$/.test(p) || Number(p) < 1 || Number(p) > 65535);
        if (bad !== undefined) ctx.addIssue({ code: 'custom', message: `not a port: ${bad}` });
        return ports.map(Number);
      }),
      /** DNS servers (host:port) for the domain and its CAA records; the system resolver when empty. */
      SSL_SCAN_DNS_SERVERS: env.list(),
      /**
       * The probes beyond the spec's fields (ALPN, OCSP stapling, CAA); off, those fields read empty
       * (alpn [], ocspStapling false, caa null). A switch for a resolver that misbehaves, and the benchmark's baseline.
       */
      SSL_SCAN_EXTRA_PROBES: env.bool(true),
    },
    source,
  );
}
