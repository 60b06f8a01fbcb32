/** Heartbleed: a heartbeat request claiming 16 KB of payload and carrying none, sent before the handshake ends. */
import { clientHello, EXTENSION, RawConnection, RECORD, record, VERSION_CODE } from '../raw-hello.js';
import { CHECKS, type Context, legacyProtocol, type VulnerabilityResult, verdict, withoutLegacy } from './check.js';

export async function heartbleed(ctx: Context): Promise<VulnerabilityResult> {
  const check = CHECKS.heartbleed;
  const legacy = legacyProtocol(ctx.suites);
  if (!legacy) {
    return withoutLegacy(ctx, check, 'no TLS 1.2-or-older handshake to probe (TLS 1.3 alone is not affected)');
  }
  const conn = await RawConnection.open(ctx.endpoint, ctx.timeoutMs, ctx.signal);
  if (!conn) return verdict(check, 'unknown', 'no connection');
  try {
    conn.send(
      clientHello({
        version: legacy.version,
        suites: legacy.codes,
        heartbeat: true,
        servername: ctx.endpoint.servername,
      }),
    );
    const flight = await conn.readFlight();
    if (!flight.hello) return verdict(check, 'unknown', 'the hello with the heartbeat extension got no ServerHello');
    if (!flight.hello.extensions.has(EXTENSION.heartbeat)) {
      return verdict(check, 'not_vulnerable', 'the server does not offer the heartbeat extension');
    }
    conn.send(record(RECORD.heartbeat, VERSION_CODE[legacy.version], Buffer.from([1, 0x40, 0x00])));
    for (;;) {
      const rec = await conn.next();
      if (typeof rec === 'string') {
        const how = rec === 'timeout' ? 'none in time' : 'connection closed';
        return verdict(check, 'not_vulnerable', `the heartbeat got no answer (${how})`);
      }
      if (rec.type === RECORD.heartbeat) {
        return rec.body.length > 3
          ? verdict(
              check,
              'vulnerable',
              `a heartbeat carrying no payload came back with ${rec.body.length - 3} bytes of the server's memory`,
            )
          : verdict(check, 'not_vulnerable', 'the heartbeat came back without extra bytes');
      }
      if (rec.type === RECORD.alert) {
        return verdict(check, 'not_vulnerable', 'the server answered the malformed heartbeat with an alert');
      }
    }
  } finally {
    conn.close();
  }
}
