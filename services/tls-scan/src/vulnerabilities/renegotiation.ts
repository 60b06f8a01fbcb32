/**
 * Renegotiation: whether the server protects it (RFC 5746's renegotiation_info in its
 * ServerHellos, read off the enumeration), and whether it lets a client start one again and again
 * (asked over Node's TLS, which can renegotiate).
 */
import type { SuiteScan } from '../cipher-suites.js';
import {
  CHECKS,
  type Context,
  connectAt,
  legacyProtocol,
  supported,
  type VulnerabilityResult,
  verdict,
} from './check.js';

export function secureRenegotiation(suites: SuiteScan): VulnerabilityResult {
  const check = CHECKS.secureRenegotiation;
  const legacy = suites.protocols.some((p) => p.supported && p.protocol !== 'SSLv2' && p.protocol !== 'TLSv1.3');
  if (!legacy && supported(suites, 'TLSv1.3')?.supported) {
    return verdict(check, 'not_vulnerable', 'only TLS 1.3 is accepted: it has no renegotiation');
  }
  const secure = suites.findings.secureRenegotiation;
  if (secure === undefined) return verdict(check, 'unknown', 'no TLS 1.2-or-older handshake answered');
  return secure
    ? verdict(check, 'not_vulnerable', 'the server answers with renegotiation_info (RFC 5746)')
    : verdict(check, 'vulnerable', 'the server does not support secure renegotiation (no renegotiation_info)');
}

/** Renegotiations asked in a row before a server counts as not limiting them. */
const RENEGOTIATIONS = 5;

/**
 * Client-initiated renegotiation over Node's TLS (TLS 1.2 and older): a server that accepts it
 * lets one client make it do a handshake's work again and again (a denial of service; testssl.sh's
 * "potential DoS threat"). No grade cap: SSL Labs caps only insecure renegotiation, which the
 * secure-renegotiation check reports.
 */
export function clientRenegotiation(ctx: Context): Promise<VulnerabilityResult> {
  const check = CHECKS.clientRenegotiation;
  const legacy = legacyProtocol(ctx.suites);
  if (!legacy || legacy.version === 'SSLv3') {
    const only13 = supported(ctx.suites, 'TLSv1.3')?.supported;
    return Promise.resolve(
      only13
        ? verdict(check, 'not_vulnerable', 'only TLS 1.3 is accepted: it has no renegotiation')
        : verdict(check, 'unknown', 'no TLS 1.0 to 1.2 handshake to renegotiate'),
    );
  }
  return new Promise((resolve) => {
    const socket = connectAt(ctx, legacy.version);
    let renegotiated = 0;
    const finish = (result: VulnerabilityResult) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    /** The server stopped the client's renegotiations: `first` before any, `then` after some. */
    const stopped = (first: string, then: string) =>
      finish(
        renegotiated
          ? verdict(
              check,
              'not_vulnerable',
              `mitigated: the server accepts ${renegotiated} renegotiations started by the client, then ${then}`,
            )
          : verdict(check, 'not_vulnerable', first),
      );
    const refused = () => stopped('the server refuses a renegotiation the client starts', 'refuses');
    const timer = setTimeout(
      () => finish(verdict(check, 'unknown', 'the renegotiation got no answer in time')),
      ctx.timeoutMs,
    );
    socket.on('error', refused);
    // Whatever the server sends (a web server's 400 to no request) is read and dropped: an unread
    // socket never reports its close.
    socket.resume();
    socket.once('close', () =>
      stopped('the server closed the connection on the renegotiation', 'closes the connection'),
    );
    // Several in a row, as testssl.sh does: a server that limits them (Node's 3 in 10 minutes) is mitigated.
    const again = () => {
      const started = socket.renegotiate({ rejectUnauthorized: false }, (err) => {
        if (err) return refused();
        renegotiated++;
        if (renegotiated < RENEGOTIATIONS) return again();
        finish(
          verdict(
            check,
            'vulnerable',
            `the server accepts ${RENEGOTIATIONS} renegotiations in a row started by the client: ` +
              'a denial-of-service lever',
          ),
        );
      });
      if (!started) finish(verdict(check, 'unknown', 'the renegotiation could not be started'));
    };
    socket.once('secureConnect', again);
  });
}
