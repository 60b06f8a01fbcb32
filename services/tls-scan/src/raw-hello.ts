/**
 * ClientHello records written by hand and the server's first flight read back, over a plain TCP
 * socket to the checked address. Node's OpenSSL cannot offer SSLv2, SSLv3, RC4, 3DES or export
 * suites, nor send a heartbeat or an early ChangeCipherSpec: these probes can. Every exchange is
 * bounded: MAX_REPLY_BYTES read at most, and the caller's time limit.
 */
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import type { Endpoint } from './handshake.js';

export type WireVersion = 'SSLv3' | 'TLSv1' | 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3';
export const VERSION_CODE: Record<WireVersion, number> = {
  SSLv3: 0x0300,
  TLSv1: 0x0301,
  'TLSv1.1': 0x0302,
  'TLSv1.2': 0x0303,
  'TLSv1.3': 0x0304,
};

/** Record content types (RFC 5246 6.2.1, RFC 6520). */
export const RECORD = { changeCipherSpec: 20, alert: 21, handshake: 22, applicationData: 23, heartbeat: 24 } as const;
/** Handshake message types. */
export const HANDSHAKE = {
  clientHello: 1,
  serverHello: 2,
  certificate: 11,
  serverKeyExchange: 12,
  serverHelloDone: 14,
  clientKeyExchange: 16,
} as const;
/** Extension types. */
export const EXTENSION = {
  serverName: 0,
  supportedGroups: 10,
  ecPointFormats: 11,
  signatureAlgorithms: 13,
  heartbeat: 15,
  signedCertificateTimestamp: 18,
  extendedMasterSecret: 23,
  sessionTicket: 35,
  supportedVersions: 43,
  pskKeyExchangeModes: 45,
  keyShare: 51,
  renegotiationInfo: 0xff01,
} as const;
/** Signalling suites: secure renegotiation (RFC 5746) and downgrade protection (RFC 7507). */
export const EMPTY_RENEGOTIATION_INFO_SCSV = 0x00ff;
export const FALLBACK_SCSV = 0x5600;

/** Named groups offered by default: the modern curves, the finite-field groups, and the old NIST ones. */
export const NAMED_GROUPS: ReadonlyMap<number, string> = new Map([
  [29, 'x25519'],
  [30, 'x448'],
  [23, 'secp256r1'],
  [24, 'secp384r1'],
  [25, 'secp521r1'],
  [256, 'ffdhe2048'],
  [257, 'ffdhe3072'],
  [258, 'ffdhe4096'],
  [259, 'ffdhe6144'],
  [260, 'ffdhe8192'],
  [22, 'secp256k1'],
  [21, 'secp224r1'],
  [19, 'secp192r1'],
  [26, 'brainpoolP256r1'],
  [27, 'brainpoolP384r1'],
  [28, 'brainpoolP512r1'],
]);

/** Signature algorithms (RFC 8446 4.2.3 names), strongest first. */
export const SIGNATURE_ALGORITHMS: ReadonlyMap<number, string> = new Map([
  [0x0807, 'ed25519'],
  [0x0808, 'ed448'],
  [0x0403, 'ecdsa_secp256r1_sha256'],
  [0x0503, 'ecdsa_secp384r1_sha384'],
  [0x0603, 'ecdsa_secp521r1_sha512'],
  [0x0804, 'rsa_pss_rsae_sha256'],
  [0x0805, 'rsa_pss_rsae_sha384'],
  [0x0806, 'rsa_pss_rsae_sha512'],
  [0x0809, 'rsa_pss_pss_sha256'],
  [0x080a, 'rsa_pss_pss_sha384'],
  [0x080b, 'rsa_pss_pss_sha512'],
  [0x0401, 'rsa_pkcs1_sha256'],
  [0x0501, 'rsa_pkcs1_sha384'],
  [0x0601, 'rsa_pkcs1_sha512'],
  [0x0303, 'ecdsa_sha224'],
  [0x0301, 'rsa_pkcs1_sha224'],
  [0x0203, 'ecdsa_sha1'],
  [0x0201, 'rsa_pkcs1_sha1'],
  [0x0402, 'dsa_sha256'],
  [0x0202, 'dsa_sha1'],
]);

export interface HelloOptions {
  version: WireVersion;
  suites: readonly number[];
  servername?: string;
  groups?: readonly number[];
  sigalgs?: readonly number[];
  /** Offers DEFLATE before null compression (CRIME's precondition). */
  compression?: boolean;
  /** Offers the heartbeat extension, peer allowed to send (Heartbleed's precondition). */
  heartbeat?: boolean;
  /** Adds TLS_FALLBACK_SCSV: this hello is a downgraded retry. */
  fallback?: boolean;
  /** A session ticket to resume with, and the session ID sent beside it. */
  sessionTicket?: Buffer;
  sessionId?: Buffer;
  /** TLS 1.3: send no key share, so a server that supports an offered group answers HelloRetryRequest. */
  emptyKeyShare?: boolean;
}

const u8 = (n: number) => Buffer.from([n & 0xff]);
const u16 = (n: number) => Buffer.from([(n >> 8) & 0xff, n & 0xff]);
const u24 = (n: number) => Buffer.from([(n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff]);
const vec8 = (b: Buffer) => Buffer.concat([u8(b.length), b]);
const vec16 = (b: Buffer) => Buffer.concat([u16(b.length), b]);
const list16 = (ns: readonly number[]) => vec16(Buffer.concat(ns.map(u16)));
const extension = (type: number, body: Buffer) => Buffer.concat([u16(type), vec16(body)]);

export const record = (type: number, version: number, body: Buffer) =>
  Buffer.concat([u8(type), u16(version), vec16(body)]);
export const handshake = (type: number, body: Buffer) => Buffer.concat([u8(type), u24(body.length), body]);

/** A ClientHello record offering exactly `suites` at `version` (TLS 1.3: through supported_versions). */
export function clientHello(options: HelloOptions): Buffer {
  const tls13 = options.version === 'TLSv1.3';
  const legacyVersion = tls13 ? VERSION_CODE['TLSv1.2'] : VERSION_CODE[options.version];
  const suites = [...options.suites];
  if (!tls13) suites.push(EMPTY_RENEGOTIATION_INFO_SCSV);
  if (options.fallback) suites.push(FALLBACK_SCSV);
  const extensions: Buffer[] = [];
  if (options.version !== 'SSLv3') {
    if (options.servername) {
      const name = Buffer.from(options.servername, 'ascii');
      extensions.push(extension(EXTENSION.serverName, vec16(Buffer.concat([u8(0), vec16(name)]))));
    }
    const groups = options.groups ?? [...NAMED_GROUPS.keys()];
    extensions.push(extension(EXTENSION.supportedGroups, list16(groups)));
    extensions.push(extension(EXTENSION.ecPointFormats, vec8(Buffer.from([0]))));
    if (options.version === 'TLSv1.2' || tls13) {
      extensions.push(
        extension(EXTENSION.signatureAlgorithms, list16(options.sigalgs ?? [...SIGNATURE_ALGORITHMS.keys()])),
      );
    }
    if (options.heartbeat) extensions.push(extension(EXTENSION.heartbeat, u8(1)));
    extensions.push(extension(EXTENSION.signedCertificateTimestamp, Buffer.alloc(0)));
    if (options.sessionTicket) extensions.push(extension(EXTENSION.sessionTicket, options.sessionTicket));
    extensions.push(extension(EXTENSION.extendedMasterSecret, Buffer.alloc(0)));
    if (tls13) {
      extensions.push(extension(EXTENSION.supportedVersions, vec8(u16(VERSION_CODE['TLSv1.3']))));
      extensions.push(extension(EXTENSION.pskKeyExchangeModes, vec8(u8(1))));
      // Any 32 bytes are an X25519 public key: the server answers before it could tell ours is not.
      const share =
        options.emptyKeyShare || !groups.includes(29)
          ? Buffer.alloc(0)
          : Buffer.concat([u16(29), vec16(randomBytes(32))]);
      extensions.push(extension(EXTENSION.keyShare, vec16(share)));
    }
  }
  const body = Buffer.concat([
    u16(legacyVersion),
    randomBytes(32),
    vec8(options.sessionId ?? (tls13 ? randomBytes(32) : Buffer.alloc(0))),
    list16(suites),
    vec8(Buffer.from(options.compression ? [1, 0] : [0])),
    ...(extensions.length ? [vec16(Buffer.concat(extensions))] : []),
  ]);
  // The record layer says TLS 1.0 for any hello, as browsers do: old servers refuse a higher record version.
  const recordVersion = options.version === 'SSLv3' ? VERSION_CODE.SSLv3 : VERSION_CODE.TLSv1;
  return record(RECORD.handshake, recordVersion, handshake(HANDSHAKE.clientHello, body));
}

/** SSLv2's cipher kinds (3 bytes each), all seven of the SSLv2 specification. */
export const SSLV2_CIPHERS = [0x010080, 0x020080, 0x030080, 0x040080, 0x050080, 0x060040, 0x0700c0] as const;

/** An SSLv2 CLIENT-HELLO (two-byte record header) offering every SSLv2 cipher kind and nothing newer. */
export function sslv2Hello(): Buffer {
  const specs = Buffer.concat(SSLV2_CIPHERS.map((c) => Buffer.from([(c >> 16) & 0xff, (c >> 8) & 0xff, c & 0xff])));
  const challenge = randomBytes(16);
  const body = Buffer.concat([u8(1), u16(0x0002), u16(specs.length), u16(0), u16(challenge.length), specs, challenge]);
  return Buffer.concat([u16(0x8000 | body.length), body]);
}

/** What an SSLv2 SERVER-HELLO says: how many cipher kinds it shares with our CLIENT-HELLO, and its certificate. */
export interface Sslv2Answer {
  /** A SERVER-HELLO came (true), a refusal or other bytes (false), nothing in time or no connection (undefined). */
  supported: boolean | undefined;
  kinds: number;
  certificate?: Buffer;
}

/** One SSLv2 CLIENT-HELLO on a new connection, and the SERVER-HELLO read back. */
export async function sslv2Exchange(
  endpoint: Endpoint,
  timeoutMs: number,
  signal: AbortSignal,
  connectTimeoutMs = timeoutMs,
): Promise<Sslv2Answer> {
  const conn = await RawConnection.open(endpoint, timeoutMs, signal, connectTimeoutMs);
  if (!conn) return { supported: undefined, kinds: 0 };
  try {
    conn.send(sslv2Hello());
    const header = await conn.take(2);
    if (typeof header === 'string') return { supported: header === 'timeout' ? undefined : false, kinds: 0 };
    // Message type, session-ID hit, certificate type, version, then the lengths of the certificate,
    // the cipher specs and the connection ID.
    const hello = (header[0] as number) & 0x80 ? await conn.take(11) : 'not_tls';
    if (typeof hello === 'string' || hello[0] !== 4) return { supported: false, kinds: 0 };
    const certificate = await conn.take(hello.readUInt16BE(5));
    return {
      supported: true,
      kinds: Math.floor(hello.readUInt16BE(7) / 3),
      certificate: typeof certificate === 'string' ? undefined : certificate,
    };
  } finally {
    conn.close();
  }
}

export interface ServerHello {
  version: number;
  suite: number;
  compression: number;
  sessionId: Buffer;
  extensions: Map<number, Buffer>;
  /** A TLS 1.3 HelloRetryRequest: the server wants a key share for the group it names. */
  retry: boolean;
}

/** RFC 8446 4.1.3: the random of a HelloRetryRequest. */
const RETRY_RANDOM = Buffer.from('CF21AD74E59A6111BE1D8C021E65B891C2A211167ABB8C5E079E09E2C8A8339C', 'hex');

export function parseServerHello(body: Buffer): ServerHello | undefined {
  try {
    let at = 0;
    const version = body.readUInt16BE(at);
    at += 2;
    const random = body.subarray(at, at + 32);
    at += 32;
    const idLength = body.readUInt8(at);
    const sessionId = body.subarray(at + 1, at + 1 + idLength);
    at += 1 + idLength;
    const suite = body.readUInt16BE(at);
    const compression = body.readUInt8(at + 2);
    at += 3;
    const extensions = new Map<number, Buffer>();
    if (at + 2 <= body.length) {
      const end = at + 2 + body.readUInt16BE(at);
      at += 2;
      while (at + 4 <= end) {
        const type = body.readUInt16BE(at);
        const length = body.readUInt16BE(at + 2);
        extensions.set(type, body.subarray(at + 4, at + 4 + length));
        at += 4 + length;
      }
    }
    const supported = extensions.get(EXTENSION.supportedVersions);
    return {
      version: supported?.length === 2 ? supported.readUInt16BE(0) : version,
      suite,
      compression,
      sessionId,
      extensions,
      retry: random.equals(RETRY_RANDOM),
    };
  } catch {
    return undefined; // truncated: no ServerHello a client could use
  }
}

export interface TlsRecord {
  type: number;
  version: number;
  body: Buffer;
}

/** What the server sent in answer to a hello, up to its ServerHelloDone (or TLS 1.3's ServerHello). */
export interface Flight {
  hello?: ServerHello;
  /** Handshake messages in order, type and body. */
  messages: { type: number; body: Buffer }[];
  alert?: { level: number; description: number };
  /** How the reading stopped: `resumed` is an abbreviated handshake (ServerHello, then ChangeCipherSpec). */
  end: 'done' | 'resumed' | 'alert' | 'closed' | 'timeout' | 'limit' | 'not_tls';
}

/** No reply read past this: a certificate chain and key exchange fit many times over. */
export const MAX_REPLY_BYTES = 256 * 1024;

/**
 * One raw connection: records in, bytes out. `next()` resolves with the next record, or with how
 * the connection ended (closed, out of time, over the byte bound, or bytes that are no TLS record).
 */
export class RawConnection {
  private buffered = Buffer.alloc(0);
  private total = 0;
  private ended: Flight['end'] | undefined;
  private wake: (() => void) | undefined;
  private readonly timer: NodeJS.Timeout;

  private constructor(
    readonly socket: net.Socket,
    timeoutMs: number,
    signal: AbortSignal,
  ) {
    const stop = (why: Flight['end']) => {
      this.ended ??= why;
      this.notify();
    };
    this.timer = setTimeout(() => stop('timeout'), timeoutMs);
    const onAbort = () => stop('timeout');
    signal.addEventListener('abort', onAbort, { once: true });
    socket.on('data', (chunk: Buffer) => {
      this.total += chunk.length;
      if (this.total > MAX_REPLY_BYTES) return stop('limit');
      this.buffered = Buffer.concat([this.buffered, chunk]);
      this.notify();
    });
    socket.on('error', () => stop('closed'));
    socket.on('close', () => {
      signal.removeEventListener('abort', onAbort);
      stop('closed');
    });
  }

  /**
   * Connects to exactly the endpoint's address; undefined when no TCP connection came up within
   * `connectTimeoutMs` (by default the exchange's whole `timeoutMs`).
   */
  static open(
    endpoint: Endpoint,
    timeoutMs: number,
    signal: AbortSignal,
    connectTimeoutMs = timeoutMs,
  ): Promise<RawConnection | undefined> {
    return new Promise((resolve) => {
      const socket = net.connect({ host: endpoint.address, port: endpoint.port });
      const timer = setTimeout(() => fail(), connectTimeoutMs);
      const fail = () => {
        clearTimeout(timer);
        socket.destroy();
        resolve(undefined);
      };
      if (signal.aborted) return fail();
      socket.once('error', fail);
      socket.once('connect', () => {
        clearTimeout(timer);
        socket.removeListener('error', fail);
        resolve(new RawConnection(socket, timeoutMs, signal));
      });
    });
  }

  send(bytes: Buffer): void {
    if (!this.socket.destroyed) this.socket.write(bytes);
  }

  close(): void {
    clearTimeout(this.timer);
    this.socket.destroy();
  }

  private notify() {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  /** The next `n` bytes, or how the connection ended first. */
  async take(n: number): Promise<Buffer | Flight['end']> {
    while (this.buffered.length < n) {
      if (this.ended) return this.ended;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
    const out = this.buffered.subarray(0, n);
    this.buffered = this.buffered.subarray(n);
    return out;
  }

  /** The next TLS record, or how the connection ended. */
  async next(): Promise<TlsRecord | Flight['end']> {
    const header = await this.take(5);
    if (typeof header === 'string') return header;
    const type = header.readUInt8(0);
    if (type < 20 || type > 24 || header.readUInt8(1) !== 3) return 'not_tls';
    const body = await this.take(header.readUInt16BE(3));
    if (typeof body === 'string') return body;
    return { type, version: header.readUInt16BE(1), body };
  }

  /**
   * The server's answer to a hello, read until its ServerHelloDone (TLS 1.2 and older), its
   * ChangeCipherSpec when it resumes a session, its ServerHello when it speaks TLS 1.3 (the rest
   * is encrypted), an alert, or the end.
   */
  async readFlight(): Promise<Flight> {
    const flight: Flight = { messages: [], end: 'done' };
    let pending = Buffer.alloc(0);
    for (;;) {
      const rec = await this.next();
      if (typeof rec === 'string') return { ...flight, end: rec };
      if (rec.type === RECORD.alert) {
        return { ...flight, alert: { level: rec.body[0] ?? 0, description: rec.body[1] ?? 0 }, end: 'alert' };
      }
      // After a TLS 1.2-or-older ServerHello, a ChangeCipherSpec means the server resumed a session:
      // no ServerHelloDone follows. Before it, or with TLS 1.3, it is a middlebox-compatibility record.
      if (rec.type === RECORD.changeCipherSpec && flight.hello) return { ...flight, end: 'resumed' };
      if (rec.type !== RECORD.handshake) continue;
      pending = Buffer.concat([pending, rec.body]);
      while (pending.length >= 4) {
        const length = pending.readUIntBE(1, 3);
        if (pending.length < 4 + length) break;
        const message = { type: pending.readUInt8(0), body: pending.subarray(4, 4 + length) };
        pending = pending.subarray(4 + length);
        flight.messages.push(message);
        if (message.type === HANDSHAKE.serverHello) {
          flight.hello = parseServerHello(message.body);
          if (!flight.hello) return { ...flight, end: 'not_tls' };
          if (flight.hello.version >= VERSION_CODE['TLSv1.3']) return flight;
        }
        if (message.type === HANDSHAKE.serverHelloDone) return flight;
      }
    }
  }
}

/** Sends `hello` on a new connection and reads the server's flight; the connection is closed after. */
export async function exchangeHello(
  endpoint: Endpoint,
  hello: Buffer,
  timeoutMs: number,
  signal: AbortSignal,
): Promise<Flight> {
  const conn = await RawConnection.open(endpoint, timeoutMs, signal);
  if (!conn) return { messages: [], end: 'closed' };
  try {
    conn.send(hello);
    return await conn.readFlight();
  } finally {
    conn.close();
  }
}

/** The DER certificates of a TLS 1.2-or-older Certificate message. */
export function certificatesOf(flight: Flight): Buffer[] {
  const body = flight.messages.find((m) => m.type === HANDSHAKE.certificate)?.body;
  if (!body || body.length < 3) return [];
  const certs: Buffer[] = [];
  let at = 3;
  while (at + 3 <= body.length) {
    const length = body.readUIntBE(at, 3);
    certs.push(body.subarray(at + 3, at + 3 + length));
    at += 3 + length;
  }
  return certs;
}

/** The prime p of a DHE ServerKeyExchange (its first field), leading zero bytes left out. */
export function dhPrime(flight: Flight): Buffer | undefined {
  const body = flight.messages.find((m) => m.type === HANDSHAKE.serverKeyExchange)?.body;
  if (!body || body.length < 3) return undefined;
  const p = body.subarray(2, 2 + body.readUInt16BE(0));
  const first = p.findIndex((b) => b !== 0);
  return first < 0 ? Buffer.alloc(0) : p.subarray(first);
}

/** The named group of an ECDHE ServerKeyExchange (curve_type 3 = named_curve). */
export function ecdheGroup(flight: Flight): number | undefined {
  const body = flight.messages.find((m) => m.type === HANDSHAKE.serverKeyExchange)?.body;
  return body && body.length >= 3 && body[0] === 3 ? body.readUInt16BE(1) : undefined;
}
