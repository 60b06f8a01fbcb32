/**
 * ROBOT (Bleichenbacher's oracle with RSA key transport): five ClientKeyExchanges, each followed by
 * ChangeCipherSpec and a Finished the server cannot decrypt, one carrying a well-formed PKCS#1 v1.5
 * premaster secret and four malformed ones. A patched server answers all five alike (it goes on
 * with a random secret); one that answers a malformed one differently is an oracle. A difference is
 * asked twice before it counts, and an exchange whose handshake or answer was lost is asked once
 * more, so one stalled connection on a busy server is not read as an answer. The shortened flow
 * (no ChangeCipherSpec and Finished) that some oracles need is not tried: on a patched server every
 * such exchange waits out its time limit.
 */
import { constants, type KeyObject, publicEncrypt, randomBytes, X509Certificate } from 'node:crypto';
import {
  certificatesOf,
  clientHello,
  HANDSHAKE,
  handshake,
  RawConnection,
  RECORD,
  record,
  VERSION_CODE,
  type WireVersion,
} from '../raw-hello.js';
import { acceptedSuites, CHECKS, type Context, list, type VulnerabilityResult, verdict } from './check.js';

/** The premaster secrets sent: a well-formed one, then the malformations of the ROBOT paper. */
export const PREMASTER_KINDS = [
  'well-formed',
  'wrong first bytes',
  'zero in the padding',
  'no zero separator',
  'wrong version',
] as const;
type PremasterKind = (typeof PREMASTER_KINDS)[number];

/** Non-zero random bytes: PKCS#1 v1.5 padding. */
function nonZero(length: number): Buffer {
  const bytes = randomBytes(length);
  for (let i = 0; i < bytes.length; i++) if (bytes[i] === 0) bytes[i] = 0x55;
  return bytes;
}

/** The padded premaster secret of `kind`, as long as the modulus (`size` bytes). */
export function paddedPremaster(kind: PremasterKind, size: number, version: number): Buffer {
  const secret = Buffer.concat([Buffer.from([version >> 8, version & 0xff]), nonZero(46)]);
  if (kind === 'wrong version') secret.writeUInt16BE(0x0202, 0);
  const padding = nonZero(size - 3 - secret.length);
  // PKCS#1 v1.5 wants at least eight non-zero padding bytes: a zero among them ends the padding too early.
  if (kind === 'zero in the padding') padding[4] = 0;
  const head = kind === 'wrong first bytes' ? [0x41, 0x17] : [0x00, 0x02];
  const separator = kind === 'no zero separator' ? 0x11 : 0x00;
  return Buffer.concat([Buffer.from(head), padding, Buffer.from([separator]), secret]);
}

/**
 * One exchange: hello offering the RSA suites, then the ClientKeyExchange of `kind`, ChangeCipherSpec
 * and a Finished of random bytes; the answer is the server's first record, or how the connection ended.
 */
async function exchange(
  ctx: Context,
  version: WireVersion,
  codes: number[],
  kind: PremasterKind,
): Promise<string | undefined> {
  const conn = await RawConnection.open(ctx.endpoint, ctx.timeoutMs, ctx.signal);
  if (!conn) return undefined;
  try {
    conn.send(clientHello({ version, suites: codes, servername: ctx.endpoint.servername }));
    const flight = await conn.readFlight();
    const leaf = certificatesOf(flight)[0];
    if (!flight.hello || flight.end !== 'done' || !leaf) return undefined;
    const key = publicKeyOf(leaf);
    if (!key) return undefined;
    const size = ((key.asymmetricKeyDetails?.modulusLength ?? 0) + 7) >> 3;
    if (key.asymmetricKeyType !== 'rsa' || size < 64) return undefined;
    const code = VERSION_CODE[version];
    const encrypted = publicEncrypt(
      { key, padding: constants.RSA_NO_PADDING },
      paddedPremaster(kind, size, VERSION_CODE[version]),
    );
    // TLS puts the encrypted secret behind a 16-bit length; SSLv3 sends it bare.
    const body =
      version === 'SSLv3'
        ? encrypted
        : Buffer.concat([Buffer.from([encrypted.length >> 8, encrypted.length & 0xff]), encrypted]);
    conn.send(record(RECORD.handshake, code, handshake(HANDSHAKE.clientKeyExchange, body)));
    conn.send(record(RECORD.changeCipherSpec, code, Buffer.from([1])));
    conn.send(record(RECORD.handshake, code, randomBytes(48)));
    const answer = await conn.next();
    if (typeof answer === 'string') return answer === 'timeout' ? 'no answer in time' : `connection ${answer}`;
    return answer.type === RECORD.alert ? `alert ${answer.body[1]}` : `a record of type ${answer.type}`;
  } finally {
    conn.close();
  }
}

/** The public key of a DER certificate; undefined when it is not one node:crypto reads. */
function publicKeyOf(der: Buffer): KeyObject | undefined {
  try {
    return new X509Certificate(der).publicKey;
  } catch {
    return undefined;
  }
}

/** An outcome that says nothing about the premaster secret: the handshake or the answer was lost. */
const lost = (answer: string | undefined) => answer === undefined || answer === 'no answer in time';

/** The answer to `kind`, asked a second time when the first was lost. */
async function answerTo(ctx: Context, version: WireVersion, codes: number[], kind: PremasterKind) {
  const answer = await exchange(ctx, version, codes, kind);
  return lost(answer) && !ctx.signal.aborted ? exchange(ctx, version, codes, kind) : answer;
}

/** The five answers, in PREMASTER_KINDS order; undefined where a handshake did not reach its key exchange. */
const round = (ctx: Context, version: WireVersion, codes: number[]) =>
  Promise.all(PREMASTER_KINDS.map((kind) => answerTo(ctx, version, codes, kind)));

export async function robot(ctx: Context): Promise<VulnerabilityResult> {
  const check = CHECKS.robot;
  const rsa = acceptedSuites(ctx.suites).filter((s) => s.keyExchange === 'RSA' && !s.export);
  if (!rsa.length) return verdict(check, 'not_vulnerable', 'no RSA key transport suite is accepted');
  const codes = [...new Set(rsa.map((s) => s.code))];
  const protocol = ctx.suites.protocols
    .filter((p) => p.supported && p.protocol !== 'SSLv2' && p.protocol !== 'TLSv1.3')
    .findLast((p) => p.suites.some((s) => codes.includes(s.code)));
  if (!protocol) return verdict(check, 'unknown', 'no protocol accepts the RSA suites found');
  const version = protocol.protocol as WireVersion;
  const unreached = (answers: (string | undefined)[]) => answers.some((a) => a === undefined);
  const unreachedVerdict = () =>
    verdict(check, 'unknown', 'a handshake with RSA key transport did not reach its key exchange');
  const first = await round(ctx, version, codes);
  if (unreached(first)) return unreachedVerdict();
  if (first.every((a) => a === 'no answer in time')) {
    return verdict(check, 'unknown', 'no key exchange got an answer in time');
  }
  if (new Set(first).size === 1) {
    return verdict(
      check,
      'not_vulnerable',
      `a well-formed and four malformed premaster secrets all got the same answer (${first[0]}): no oracle`,
    );
  }
  const second = await round(ctx, version, codes);
  if (unreached(second)) return unreachedVerdict();
  if (second.some((a, i) => a !== first[i])) {
    return verdict(check, 'unknown', 'the answers differ between malformed premaster secrets, but not twice alike');
  }
  const answers = PREMASTER_KINDS.map((kind, i) => `${kind}: ${first[i]}`);
  return verdict(
    check,
    'vulnerable',
    `the server answers malformed RSA premaster secrets differently (${answers.join('; ')}), ` +
      `a Bleichenbacher oracle, with ${list([...new Set(rsa.map((s) => s.name))])}`,
  );
}
