/** CCS injection: a ChangeCipherSpec before the key exchange; a patched server refuses it at once. */
import { randomBytes } from 'node:crypto';
import { clientHello, RawConnection, RECORD, record, VERSION_CODE } from '../raw-hello.js';
import {
  ALERT,
  CHECKS,
  type Context,
  legacyProtocol,
  type VulnerabilityResult,
  verdict,
  withoutLegacy,
} from './check.js';

export async function ccsInjection(ctx: Context): Promise<VulnerabilityResult> {
  const check = CHECKS.ccs;
  const legacy = legacyProtocol(ctx.suites);
  if (!legacy) {
    return withoutLegacy(ctx, check, 'no TLS 1.2-or-older handshake to probe (TLS 1.3 alone is not affected)');
  }
  const conn = await RawConnection.open(ctx.endpoint, ctx.timeoutMs, ctx.signal);
  if (!conn) return verdict(check, 'unknown', 'no connection');
  try {
    const version = VERSION_CODE[legacy.version];
    conn.send(clientHello({ version: legacy.version, suites: legacy.codes, servername: ctx.endpoint.servername }));
    const flight = await conn.readFlight();
    if (!flight.hello || flight.end !== 'done') {
      return verdict(check, 'unknown', 'the handshake did not reach ServerHelloDone');
    }
    // An early CCS, then a record a server that took it would try to decrypt with a key of zero secrets.
    conn.send(record(RECORD.changeCipherSpec, version, Buffer.from([1])));
    conn.send(record(RECORD.alert, version, randomBytes(32)));
    const rec = await conn.next();
    if (typeof rec === 'string') {
      return rec === 'timeout'
        ? verdict(check, 'unknown', 'the early ChangeCipherSpec got no answer in time')
        : verdict(check, 'not_vulnerable', 'the server closed the connection on the early ChangeCipherSpec');
    }
    const alert = rec.type === RECORD.alert && rec.body.length === 2 ? rec.body[1] : undefined;
    if (alert === ALERT.unexpectedMessage || alert === ALERT.handshakeFailure) {
      return verdict(check, 'not_vulnerable', 'the early ChangeCipherSpec is refused (unexpected_message)');
    }
    if (alert === ALERT.badRecordMac || alert === ALERT.decryptionFailed || rec.type === RECORD.alert) {
      return verdict(
        check,
        'vulnerable',
        'the server took the early ChangeCipherSpec and tried to decrypt the next record',
      );
    }
    return verdict(check, 'unknown', `the early ChangeCipherSpec got a record of type ${rec.type}`);
  } finally {
    conn.close();
  }
}
