/**
 * A TLS server written at the record level that answers hellos as an old or broken implementation
 * would (SSLv2, SSLv3, RC4, 3DES and export suites, TLS compression, Heartbleed, an early
 * ChangeCipherSpec taken, Ticketbleed, ROBOT's padding oracle, no downgrade or renegotiation
 * protection), for the scan's vulnerability tests: no build of such a server can run here. It reads
 * one ClientHello and sends ServerHello, Certificate, a ServerKeyExchange for DHE suites and
 * ServerHelloDone; it completes no handshake. With `delegatePort`, a hello carrying an empty
 * session_ticket extension (Node's own client) is piped to that real TLS server instead, so
 * Node-made handshakes still complete.
 */
import { constants, type KeyObject, privateDecrypt, randomBytes } from 'node:crypto';
import { once } from 'node:events';
import net, { type AddressInfo } from 'node:net';

export type RawVersion = 'SSLv3' | 'TLSv1' | 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3';
const CODE: Record<RawVersion, number> = {
  SSLv3: 0x300,
  TLSv1: 0x301,
  'TLSv1.1': 0x302,
  'TLSv1.2': 0x303,
  'TLSv1.3': 0x304,
};

export interface RawTlsServerOptions {
  /** Versions accepted. */
  versions: RawVersion[];
  /** Suites accepted, in the server's order of preference (IANA code points). */
  suites: number[];
  /** The leaf certificate sent (DER). */
  certificate: Buffer;
  /** Answers an SSLv2 CLIENT-HELLO with a SERVER-HELLO. */
  sslv2?: boolean;
  /** Picks DEFLATE when offered (CRIME). */
  compression?: boolean;
  /** Offers the heartbeat extension; with `heartbleed`, answers a heartbeat with 16 KB of "memory". */
  heartbeat?: boolean;
  heartbleed?: boolean;
  /** Takes a ChangeCipherSpec before the key exchange, then fails to decrypt (CCS injection). */
  ccsInjection?: boolean;
  /** Refuses a fallback hello below its newest version (RFC 7507); default true. */
  fallbackScsv?: boolean;
  /** Answers renegotiation_info (RFC 5746); default true. */
  secureRenegotiation?: boolean;
  /** Pads a one-byte session ID sent with a ticket to 32 bytes (Ticketbleed). */
  ticketbleed?: boolean;
  /** Prime size of the DHE ServerKeyExchange; default 2048. */
  dhBits?: number;
  /** The DHE ServerKeyExchange's prime itself (random of `dhBits` when absent). */
  dhPrime?: Buffer;
  /**
   * The certificate's private key: the server reads the RSA ClientKeyExchange and answers the
   * Finished after it with bad_record_mac, as a patched server does whatever the premaster secret.
   */
  rsaKey?: KeyObject;
  /** With `rsaKey`: a premaster secret whose PKCS#1 padding is malformed gets handshake_failure instead (ROBOT). */
  robotOracle?: boolean;
  /** The 1-based counts of RSA ClientKeyExchanges this server leaves unanswered, as a stalled or lossy peer does. */
  unansweredKeyExchanges?: number[];
  /** A real TLS server on 127.0.0.1 that handshakes Node's clients make are piped to. */
  delegatePort?: number;
}

export interface RawTlsServer {
  port: number;
  close(): Promise<void>;
}

const u16 = (n: number) => Buffer.from([(n >> 8) & 0xff, n & 0xff]);
const u24 = (n: number) => Buffer.from([(n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff]);
const vec16 = (b: Buffer) => Buffer.concat([u16(b.length), b]);
const record = (type: number, version: number, body: Buffer) =>
  Buffer.concat([Buffer.from([type]), u16(version), vec16(body)]);
const message = (type: number, body: Buffer) => Buffer.concat([Buffer.from([type]), u24(body.length), body]);
const alert = (version: number, description: number) => record(21, version, Buffer.from([2, description]));

interface Hello {
  version: number;
  sessionId: Buffer;
  suites: number[];
  compression: number[];
  extensions: Map<number, Buffer>;
}

function parseHello(body: Buffer): Hello | undefined {
  try {
    let at = 4; // handshake type and length
    const version = body.readUInt16BE(at);
    at += 34;
    const sessionId = body.subarray(at + 1, at + 1 + (body[at] as number));
    at += 1 + sessionId.length;
    const suiteBytes = body.readUInt16BE(at);
    const suites = Array.from({ length: suiteBytes / 2 }, (_, i) => body.readUInt16BE(at + 2 + i * 2));
    at += 2 + suiteBytes;
    const compression = [...body.subarray(at + 1, at + 1 + (body[at] as number))];
    at += 1 + compression.length;
    const extensions = new Map<number, Buffer>();
    if (at + 2 <= body.length) {
      const end = at + 2 + body.readUInt16BE(at);
      at += 2;
      while (at + 4 <= end) {
        const length = body.readUInt16BE(at + 2);
        extensions.set(body.readUInt16BE(at), body.subarray(at + 4, at + 4 + length));
        at += 4 + length;
      }
    }
    return { version, sessionId, suites, compression, extensions };
  } catch {
    return undefined;
  }
}

/** The version a hello gets: TLS 1.3 through supported_versions, else the hello's, capped at ours. */
function versionFor(hello: Hello, options: RawTlsServerOptions): number | undefined {
  const offered = hello.extensions.get(43);
  const ours = options.versions.map((v) => CODE[v]);
  if (offered && ours.includes(0x304)) {
    for (let at = 1; at + 1 < offered.length; at += 2) if (offered.readUInt16BE(at) === 0x304) return 0x304;
  }
  const best = Math.max(...ours.filter((v) => v !== 0x304 && v <= hello.version));
  return Number.isFinite(best) ? best : undefined;
}

function serverFlight(hello: Hello, options: RawTlsServerOptions): Buffer {
  const newest = Math.max(...options.versions.map((v) => CODE[v]));
  const version = versionFor(hello, options);
  const recordVersion = Math.min(version ?? 0x301, 0x303);
  if (version === undefined) return alert(0x301, 70); // protocol_version
  if ((options.fallbackScsv ?? true) && hello.suites.includes(0x5600) && version < newest) {
    return alert(recordVersion, 86); // inappropriate_fallback
  }
  const tls13 = version === 0x304;
  const suite = options.suites.find((s) => hello.suites.includes(s) && (s >> 8 === 0x13) === tls13);
  if (suite === undefined) return alert(recordVersion, 40); // handshake_failure
  const extensions: Buffer[] = [];
  const ext = (type: number, body: Buffer) => extensions.push(Buffer.concat([u16(type), vec16(body)]));
  if (tls13) {
    ext(43, u16(0x304));
    ext(51, Buffer.concat([u16(29), vec16(randomBytes(32))]));
  } else {
    if ((options.secureRenegotiation ?? true) && (hello.suites.includes(0xff) || hello.extensions.has(0xff01))) {
      ext(0xff01, Buffer.from([0]));
    }
    if (options.heartbeat && hello.extensions.has(15)) ext(15, Buffer.from([1]));
    if (hello.extensions.has(35)) ext(35, Buffer.alloc(0));
  }
  const ticket = hello.extensions.get(35);
  const sessionId =
    tls13 || hello.sessionId.length === 0
      ? hello.sessionId
      : options.ticketbleed && ticket?.length && hello.sessionId.length < 32
        ? Buffer.concat([hello.sessionId, randomBytes(32 - hello.sessionId.length)])
        : hello.sessionId;
  const compression = options.compression && hello.compression.includes(1) ? 1 : 0;
  const serverHello = Buffer.concat([
    u16(tls13 ? 0x303 : version),
    randomBytes(32),
    Buffer.from([sessionId.length]),
    sessionId,
    u16(suite),
    Buffer.from([compression]),
    ...(extensions.length ? [vec16(Buffer.concat(extensions))] : []),
  ]);
  const messages = [message(2, serverHello)];
  if (!tls13) {
    messages.push(message(11, vec24(vec24(options.certificate))));
    const dhe = [0x0011, 0x0014, 0x0015, 0x0016, 0x0033, 0x0039, 0x0067, 0x006b, 0x009e, 0x009f].includes(suite);
    if (dhe) {
      const p = options.dhPrime ?? randomBytes((options.dhBits ?? 2048) / 8);
      if (!options.dhPrime) p[0] = (p[0] as number) | 0x80;
      messages.push(
        message(
          12,
          Buffer.concat([
            vec16(p),
            vec16(Buffer.from([2])),
            vec16(randomBytes(p.length)),
            u16(0x0401),
            vec16(randomBytes(64)),
          ]),
        ),
      );
    }
    messages.push(message(14, Buffer.alloc(0)));
  }
  return record(22, recordVersion, Buffer.concat(messages));
}

const vec24 = (b: Buffer) => Buffer.concat([u24(b.length), b]);

/** Whether an RSA ClientKeyExchange message carries a PKCS#1 v1.5 padded secret (00 02, 8+ non-zero bytes, 00). */
function paddingConforms(message: Buffer, key: KeyObject): boolean {
  try {
    const encrypted = message.subarray(6, 6 + message.readUInt16BE(4));
    const padded = privateDecrypt({ key, padding: constants.RSA_NO_PADDING }, encrypted);
    return padded[0] === 0 && padded[1] === 2 && padded.indexOf(0, 2) >= 10;
  } catch {
    return false;
  }
}

function sslv2ServerHello(certificate: Buffer): Buffer {
  const specs = Buffer.from([0x01, 0x00, 0x80, 0x07, 0x00, 0xc0]);
  const connectionId = randomBytes(16);
  const body = Buffer.concat([
    Buffer.from([4, 0, 1]),
    u16(0x0002),
    u16(certificate.length),
    u16(specs.length),
    u16(connectionId.length),
    certificate,
    specs,
    connectionId,
  ]);
  return Buffer.concat([u16(0x8000 | body.length), body]);
}

export async function startRawTlsServer(options: RawTlsServerOptions): Promise<RawTlsServer> {
  const sockets = new Set<net.Socket>();
  let keyExchanges = 0;
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    let input = Buffer.alloc(0);
    let answered = false;
    let earlyCcs = false;
    /** After an RSA ClientKeyExchange: whether its padding conformed; then whether ChangeCipherSpec came. */
    let conforming: boolean | undefined;
    let changedCipher = false;
    let unanswered = false;
    const onData = (chunk: Buffer) => {
      input = Buffer.concat([input, chunk]);
      if (input.length > 64 * 1024) return socket.destroy();
      if (!answered && (input[0] as number) & 0x80) {
        answered = true;
        if (options.sslv2) socket.write(sslv2ServerHello(options.certificate));
        else socket.destroy();
        return;
      }
      while (input.length >= 5 && input.length >= 5 + input.readUInt16BE(3)) {
        const type = input[0] as number;
        const version = input.readUInt16BE(1);
        const body = input.subarray(5, 5 + input.readUInt16BE(3));
        input = input.subarray(5 + body.length);
        if (!answered) {
          const hello = type === 22 ? parseHello(body) : undefined;
          if (!hello) return socket.destroy();
          const ticket = hello.extensions.get(35);
          if (options.delegatePort && ticket?.length === 0) {
            socket.removeListener('data', onData);
            const upstream = net.connect(options.delegatePort, '127.0.0.1');
            upstream.on('error', () => socket.destroy());
            upstream.write(Buffer.concat([record(type, version, body), input]));
            socket.pipe(upstream).pipe(socket);
            return;
          }
          answered = true;
          socket.write(serverFlight(hello, options));
          continue;
        }
        if (type === 24 && options.heartbleed) {
          // The claimed payload length, served from "memory" whatever was sent: the bug itself.
          const claimed = body.length >= 3 ? body.readUInt16BE(1) : 0;
          socket.write(record(24, version, Buffer.concat([Buffer.from([2]), u16(claimed), randomBytes(claimed + 16)])));
        } else if (type === 22 && body[0] === 16 && options.rsaKey) {
          conforming = paddingConforms(body, options.rsaKey);
          unanswered = options.unansweredKeyExchanges?.includes(++keyExchanges) ?? false;
        } else if (type === 20 && conforming !== undefined) {
          changedCipher = true;
        } else if (changedCipher && unanswered) {
          return;
        } else if (changedCipher) {
          // The Finished, which no premaster secret of ours decrypts: one answer, unless this is an oracle.
          socket.end(alert(version, options.robotOracle && !conforming ? 40 : 20));
          return;
        } else if (type === 20) {
          if (!options.ccsInjection) {
            socket.end(alert(version, 10)); // unexpected_message: a patched server
            return;
          }
          earlyCcs = true;
        } else if (earlyCcs) {
          socket.end(alert(version, 20)); // bad_record_mac: it tried to decrypt with the early keys
          return;
        }
      }
    };
    socket.on('data', onData);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
