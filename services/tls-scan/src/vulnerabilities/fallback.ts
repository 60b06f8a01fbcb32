/** TLS_FALLBACK_SCSV (RFC 7507): a hello below the newest version, marked as a fallback, must be refused. */
import type { ProtocolSuites } from '../cipher-suites.js';
import { clientHello, exchangeHello, type WireVersion } from '../raw-hello.js';
import { ALERT, CHECKS, type Context, type VulnerabilityResult, verdict } from './check.js';

export async function fallback(ctx: Context): Promise<VulnerabilityResult> {
  const versions = ctx.suites.protocols.filter((p) => p.supported && p.protocol !== 'SSLv2' && p.suites.length);
  if (versions.length < 2) {
    return versions.length
      ? verdict(CHECKS.fallback, 'not_vulnerable', 'only one protocol is accepted: there is nothing to downgrade to')
      : verdict(CHECKS.fallback, 'unknown', 'no handshake answered');
  }
  const lower = versions.at(-2) as ProtocolSuites;
  const flight = await exchangeHello(
    ctx.endpoint,
    clientHello({
      version: lower.protocol as WireVersion,
      suites: lower.suites.map((s) => s.code),
      fallback: true,
      servername: ctx.endpoint.servername,
    }),
    ctx.timeoutMs,
    ctx.signal,
  );
  if (flight.alert?.description === ALERT.inappropriateFallback) {
    return verdict(
      CHECKS.fallback,
      'not_vulnerable',
      `a ${lower.protocol} fallback hello is refused (inappropriate_fallback)`,
    );
  }
  if (flight.hello) {
    return verdict(
      CHECKS.fallback,
      'vulnerable',
      `a ${lower.protocol} hello marked as a fallback is accepted: no downgrade prevention`,
    );
  }
  return verdict(
    CHECKS.fallback,
    'unknown',
    `the fallback hello got ${flight.alert ? `alert ${flight.alert.description}` : flight.end}`,
  );
}
