import tls, { type SecureContext, type SecureVersion, type TLSSocket } from 'node:tls';
import {
  invalidArgument,
  type OutboundError,
  type OutboundFailureKind,
  outboundError,
  type ServiceError,
  targetFailure,
} from '@webutil/kit';
import { ecStrength } from './certificate.js';

export type TlsVersion = 'TLSv1' | 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3';
export const TLS_VERSIONS: readonly TlsVersion[] = ['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'];

/** Where to connect: the checked address, with the name for SNI (none for an IP literal). */
export interface Endpoint {
  address: string;
  port: number;
  servername: string | undefined;
}

/** TLS 1.3 suites by strength; naming any TLS 1.3 suite in `ciphers` replaces Node's default set. */
const TLS13_128 = 'TLS_AES_128_GCM_SHA256:TLS_AES_128_CCM_SHA256';
const TLS13_256 = 'TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256';
/**
 * Everything this OpenSSL can offer, modern suites first. Security level 0, or OpenSSL refuses
 * TLS 1.0/1.1, SHA-1 signatures and 1024-bit keys before we could see and grade them. (Node's
 * OpenSSL 3 has no SSLv2/SSLv3, 3DES, RC4 or export suites at all: those cannot be probed.)
 */
const EVERYTHING = `${TLS13_256}:${TLS13_128}:DEFAULT:ALL:@SECLEVEL=0`;

function context(options: { ciphers: string; min?: SecureVersion; max?: SecureVersion }): SecureContext {
  // An empty CA list: the scan judges trust itself, and getPeerCertificate() then returns
  // exactly the certificates the server sent, not ones OpenSSL filled in from a store.
  return tls.createSecureContext({
    ca: [],
    ciphers: options.ciphers,
    minVersion: options.min ?? 'TLSv1',
    maxVersion: options.max ?? 'TLSv1.3',
  });
}

/** The handshake that reads the certificate: offers everything, so any server answers it. */
export const MAIN_CONTEXT = context({ ciphers: EVERYTHING });

/** One context per protocol version, for the support probes. */
export const VERSION_CONTEXTS: Record<TlsVersion, SecureContext> = Object.fromEntries(
  TLS_VERSIONS.map((v) => [v, context({ ciphers: EVERYTHING, min: v, max: v })]),
) as Record<TlsVersion, SecureContext>;

/** Cipher classes of the strength probes: accepted or not tells the weakest and strongest suite. */
export const CIPHER_CONTEXTS = {
  /** No encryption or no authentication (TLS 1.2 and older only: TLS 1.3 has neither). */
  insecure: context({ ciphers: 'eNULL:aNULL:@SECLEVEL=0', max: 'TLSv1.2' }),
  bits128: context({ ciphers: `${TLS13_128}:AES128:CAMELLIA128:ARIA128:SEED:@SECLEVEL=0` }),
  bits256: context({ ciphers: `${TLS13_256}:AES256:CAMELLIA256:ARIA256:CHACHA20:@SECLEVEL=0` }),
};
export type CipherClass = keyof typeof CIPHER_CONTEXTS;

/** What a handshake offers besides its context: ALPN protocols, and a request for a stapled OCSP response. */
export interface Offer {
  alpn?: readonly string[];
  /** Asks for OCSP stapling; called with the response the server stapled (null: none). */
  onOcspResponse?: (response: Buffer | null) => void;
  /** Called once the TCP connection is up, before the handshake. */
  onConnect?: () => void;
}

/**
 * Connects to exactly `endpoint.address` and completes a handshake, within `timeoutMs` for both
 * (a server that accepts TCP and never speaks TLS fails at the deadline). A failure is an
 * OutboundError in the kit's one wording of network failures: kind `connect` or `timeout` when
 * no TCP connection came up, `tls` when one did but no handshake completed. The caller owns the
 * socket that comes back and must destroy it.
 */
export function connectTls(
  endpoint: Endpoint,
  secureContext: SecureContext,
  timeoutMs: number,
  signal: AbortSignal,
  offer: Offer = {},
): Promise<TLSSocket> {
  return new Promise((resolve, reject) => {
    let connected = false;
    const target = `${endpoint.servername ?? endpoint.address}:${endpoint.port}`;
    const socket = tls.connect({
      host: endpoint.address,
      port: endpoint.port,
      servername: endpoint.servername,
      secureContext,
      rejectUnauthorized: false,
      ALPNProtocols: offer.alpn ? [...offer.alpn] : undefined,
      // tls.connect passes it to the TLSSocket; @types/node lists it only for the socket's constructor.
      requestOCSP: offer.onOcspResponse !== undefined,
    } as tls.ConnectionOptions);
    if (offer.onOcspResponse) socket.once('OCSPResponse', offer.onOcspResponse);
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      socket.removeAllListeners('secureConnect');
      socket.removeAllListeners('close');
    };
    const fail = (kind: OutboundFailureKind, code: string, detail?: string) => {
      done();
      socket.destroy();
      reject(outboundError(kind, code, detail, target));
    };
    const timer = setTimeout(() => {
      if (!connected) return fail('timeout', 'ETIMEDOUT');
      fail(
        'tls',
        'ETIMEDOUT',
        `the server accepted the connection but sent no TLS handshake within ${timeoutMs / 1000} s`,
      );
    }, timeoutMs);
    const onAbort = () => fail('cancelled', 'ECANCELLED');
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    socket.once('connect', () => {
      connected = true;
      offer.onConnect?.();
    });
    // Kept after the handshake too: a later error (a reset while HSTS is read) then only destroys
    // the socket instead of going unhandled.
    socket.on('error', (err: NodeJS.ErrnoException) => {
      const code = err.code ?? 'EUNKNOWN';
      if (connected) fail('tls', code, tlsFailure(code, endpoint.port));
      else fail('connect', code);
    });
    socket.once('close', () =>
      connected
        ? fail('tls', 'ECONNRESET', 'the server closed the connection during the TLS handshake')
        : fail('connect', 'ECONNRESET'),
    );
    socket.once('secureConnect', () => {
      done();
      resolve(socket);
    });
  });
}

/** What went wrong in a handshake on an open connection, for the kit's `TLS error: …` wording. */
function tlsFailure(code: string, port: number): string {
  if (/WRONG_VERSION_NUMBER|PACKET_LENGTH_TOO_LONG|HTTP_REQUEST|UNKNOWN_PROTOCOL/.test(code)) {
    return `the server on port ${port} does not speak TLS`;
  }
  if (code === 'ECONNRESET' || code === 'EPIPE') return 'the server closed the connection during the TLS handshake';
  const alert = /ALERT_([A-Z_]+)$/.exec(code)?.[1];
  return alert
    ? `the server answered with the alert ${alert.toLowerCase().replace(/_/g, ' ')}`
    : 'the handshake failed';
}

/**
 * The scan's error for a failed main handshake: 400 with the reason, as the spec says. A network
 * failure is the kit's TARGET_UNREACHABLE, worded as on every route; a failed handshake is ours.
 */
export function handshakeError(failure: OutboundError): ServiceError | unknown {
  return failure.kind === 'tls' ? invalidArgument('TLS_HANDSHAKE_FAILED', failure.message) : targetFailure(failure);
}

/** What one completed handshake agreed on. */
export interface Negotiated {
  protocol: TlsVersion;
  /** IANA name, e.g. TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256 or TLS_AES_256_GCM_SHA384. */
  cipher: string;
  /** Strength of the bulk cipher in bits; 0 for no encryption. */
  bits: number;
  forwardSecrecy: boolean;
  /** No server authentication (anonymous Diffie-Hellman). */
  anonymous: boolean;
  /** Ephemeral key of the exchange in RSA-equivalent bits; undefined for RSA key transport. */
  ephemeralStrength: number | undefined;
}

export function negotiatedOf(socket: TLSSocket): Negotiated {
  const protocol = socket.getProtocol() as TlsVersion;
  const { standardName, name } = socket.getCipher();
  const cipher = standardName || name;
  const ephemeral = socket.getEphemeralKeyInfo();
  return {
    protocol,
    cipher,
    bits: cipherBits(cipher),
    forwardSecrecy: protocol === 'TLSv1.3' || /(^|_)(ECDHE|DHE)_/.test(cipher),
    anonymous: /_anon_/.test(cipher),
    ephemeralStrength: ephemeral && 'size' in ephemeral ? ephemeralStrength(ephemeral) : undefined,
  };
}

/** The ephemeral key of a handshake: ECDH with its group, or DH; undefined for RSA key transport. */
export function keyExchangeOf(socket: TLSSocket): { type: string; name?: string; size: number } | undefined {
  const info = socket.getEphemeralKeyInfo() as { type?: string; name?: string; size?: number } | null;
  if (!info?.type || info.size === undefined) return undefined;
  return { type: info.type, name: info.name, size: info.size };
}

/** Bulk-cipher strength from the IANA suite name; unknown ciphers count as 128 bits. */
export function cipherBits(cipher: string): number {
  if (/_WITH_NULL_|^TLS_NULL_/.test(cipher)) return 0;
  if (/EXPORT1024|RC4_56/.test(cipher)) return 56;
  if (/EXPORT|_40_/.test(cipher)) return 40;
  if (/_WITH_DES_CBC_/.test(cipher)) return 56;
  if (/3DES/.test(cipher)) return 112;
  if (/_256_|CHACHA20/.test(cipher)) return 256;
  return 128;
}

/** Finite-field DH sizes count as RSA bits; ECDH curves as their RSA equivalent. */
function ephemeralStrength(info: { type?: string; size?: number }): number | undefined {
  const size = info.size ?? 0;
  if (info.type === 'DH') return size;
  if (info.type === 'ECDH') return ecStrength(size);
  return undefined;
}
