/**
 * Compression attacks: CRIME (TLS compression: one hello offering DEFLATE) and BREACH (HTTP
 * compression of the home page, read off the page the scan fetched).
 */
import type { HomePage } from '../hsts.js';
import { clientHello, exchangeHello } from '../raw-hello.js';
import { CHECKS, type Context, legacyProtocol, supported, type VulnerabilityResult, verdict } from './check.js';

/** CRIME: a hello that offers DEFLATE; a server that picks it compresses TLS records. */
export async function crime(ctx: Context): Promise<VulnerabilityResult> {
  const legacy = legacyProtocol(ctx.suites);
  if (!legacy) {
    return supported(ctx.suites, 'TLSv1.3')?.supported
      ? verdict(CHECKS.crime, 'not_vulnerable', 'only TLS 1.3 is accepted: it has no compression')
      : verdict(CHECKS.crime, 'unknown', 'no handshake answered');
  }
  const flight = await exchangeHello(
    ctx.endpoint,
    clientHello({
      version: legacy.version,
      suites: legacy.codes,
      compression: true,
      servername: ctx.endpoint.servername,
    }),
    ctx.timeoutMs,
    ctx.signal,
  );
  if (!flight.hello) return verdict(CHECKS.crime, 'unknown', 'the hello offering compression got no ServerHello');
  return flight.hello.compression !== 0
    ? verdict(
        CHECKS.crime,
        'vulnerable',
        `the server picks TLS compression (method ${flight.hello.compression}) when offered`,
      )
    : verdict(CHECKS.crime, 'not_vulnerable', 'the server refuses TLS compression');
}

/** BREACH: the home page sent compressed (what matters is a page reflecting input beside secrets). */
export function breach(page: HomePage): VulnerabilityResult {
  if (!page.answered) return verdict(CHECKS.breach, 'unknown', `the home page could not be read: ${page.why}`);
  const encoding = page.headers['content-encoding'];
  return encoding && /gzip|deflate|br|compress|zstd/i.test(encoding)
    ? verdict(
        CHECKS.breach,
        'vulnerable',
        `potentially: the home page is sent with HTTP compression (${encoding}); ` +
          'it matters if the page reflects input beside secrets',
      )
    : verdict(CHECKS.breach, 'not_vulnerable', 'the home page is sent without HTTP compression');
}
