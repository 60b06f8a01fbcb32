/** The tls-scan service's route: the SSL scan. */
import { type RouteSpec, route } from '../../route-spec.js';
import { presentSslScan } from './presenters.js';
import { SslScanResult, sslScanInput } from './schemas.js';

export const tlsScanRoutes: RouteSpec[] = [
  route({
    method: 'GET',
    path: '/ssl-scan',
    operation: 'ssl-scan',
    summary:
      'The certificate chain, protocols, cipher, HSTS, CAA and ALPN of a host on port 443 (or `port`), graded ' +
      'after the SSL Labs guide with the reasons.',
    credits: 1,
    input: sslScanInput,
    output: SslScanResult,
    errors: { invalid_domain: 400, target_blocked: 400, target_unreachable: 400, tls_handshake_failed: 400 },
    timeoutMs: 30_000,
    call: (c, input, options) =>
      c.tlsScan.sslScan({ domain: input.domain, port: input.port, fast: input.fast === 'true' }, options),
    present: presentSslScan,
  }),
];
