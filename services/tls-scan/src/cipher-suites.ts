/**
 * Every cipher suite the server accepts, per protocol version, in its order of preference when it
 * has one; its named groups and signature algorithms. Found as testssl.sh finds them: raw
 * ClientHellos offering a list, the suite the server picks taken out of the list, again until the
 * server refuses (one connection per suite accepted, plus one). Each protocol's run stops at the
 * first hello that gets no ServerHello.
 */
import { setMaxListeners } from 'node:events';
import { sctCount } from './certificate.js';
import { CIPHER_SUITES } from './cipher-suite-table.js';
import { cipherBits, type Endpoint } from './handshake.js';
import {
  clientHello,
  dhPrime,
  EXTENSION,
  exchangeHello,
  type Flight,
  NAMED_GROUPS,
  SIGNATURE_ALGORITHMS,
  sslv2Exchange,
  VERSION_CODE,
  type WireVersion,
} from './raw-hello.js';

export type ScannedProtocol = 'SSLv2' | WireVersion;
export const SCANNED_PROTOCOLS: readonly ScannedProtocol[] = [
  'SSLv2',
  'SSLv3',
  'TLSv1',
  'TLSv1.1',
  'TLSv1.2',
  'TLSv1.3',
];

/** What a suite's IANA name says about it. */
export interface SuiteFacts {
  code: number;
  /** IANA name, e.g. TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256. */
  name: string;
  /** Key exchange: ECDHE, DHE, RSA, ECDH, DH, PSK, SRP, or any (TLS 1.3). */
  keyExchange: string;
  forwardSecrecy: boolean;
  aead: boolean;
  cbc: boolean;
  /** Bulk-cipher strength in bits; 0 without encryption. */
  bits: number;
  export: boolean;
  rc4: boolean;
  /** A 64-bit block cipher (3DES, DES, IDEA, RC2): SWEET32. */
  block64: boolean;
  anonymous: boolean;
}

export function suiteFacts(
  code: number,
  name = CIPHER_SUITES.get(code) ?? `0x${code.toString(16).padStart(4, '0')}`,
): SuiteFacts {
  const tls13 = code >> 8 === 0x13;
  const keyExchange = tls13 ? 'any' : (/^TLS_([A-Z]+)_/.exec(name)?.[1] ?? 'unknown');
  const exportSuite = /EXPORT/.test(name);
  const bits = cipherBits(name);
  const aead = tls13 || /_GCM_|CHACHA20_POLY1305|_CCM/.test(name);
  return {
    code,
    name,
    keyExchange,
    forwardSecrecy: tls13 || /^TLS_(ECDHE|DHE)_/.test(name),
    aead,
    cbc: !aead && /_CBC|3DES_EDE|_IDEA_|_SEED_/.test(name),
    bits,
    export: exportSuite,
    rc4: /_RC4_/.test(name),
    block64: /3DES|_DES_|DES40|_IDEA_|_RC2_/.test(name),
    anonymous: /_anon_/.test(name),
  };
}

export interface ProtocolSuites {
  protocol: ScannedProtocol;
  /** A hello at this version got a ServerHello at it (true), a refusal (false), or nothing in time (undefined). */
  supported: boolean | undefined;
  /** Accepted suites: the server's order of preference when it has one, else the order found. */
  suites: SuiteFacts[];
  /** The server picks by its own order (true), by ours (false); undefined with fewer than two suites. */
  serverPreference: boolean | undefined;
}

/** What the hellos of the enumeration saw besides suites: what the vulnerability checks read. */
export interface HelloFindings {
  /** The DH primes of the DHE suites' ServerKeyExchanges, each once. */
  dhPrimes: Buffer[];
  /** The server echoed renegotiation_info (RFC 5746) on some TLS 1.2-or-older hello. */
  secureRenegotiation: boolean | undefined;
  /** Signed certificate timestamps in the TLS extension (RFC 6962 3.3.1), most seen in one ServerHello. */
  tlsScts: number;
}

export interface SuiteScan {
  protocols: ProtocolSuites[];
  findings: HelloFindings;
  /** Named groups the server accepts, and signature algorithms, by IANA name. */
  groups: string[];
  signatureAlgorithms: string[];
  /** Connections made. */
  connections: number;
}

const TLS13_CODES = [...CIPHER_SUITES.keys()].filter((c) => c >> 8 === 0x13);
/** Older suites, strong ones first: a server that picks by the client's order shows it on the first hello. */
const LEGACY_CODES = [...CIPHER_SUITES.keys()].filter((c) => c >> 8 !== 0x13).sort((a, b) => rank(b) - rank(a));
function rank(code: number): number {
  const f = suiteFacts(code);
  return (f.forwardSecrecy ? 4 : 0) + (f.aead ? 2 : 0) + f.bits / 256;
}
/** A runaway server (one that picks a suite it was not offered) cannot make the loop run longer than this. */
const MAX_STEPS = CIPHER_SUITES.size + 1;

interface Probe {
  endpoint: Endpoint;
  timeoutMs: number;
  signal: AbortSignal;
  connections: number;
}

async function hello(probe: Probe, bytes: Buffer): Promise<Flight> {
  probe.connections++;
  return exchangeHello(probe.endpoint, bytes, probe.timeoutMs, probe.signal);
}

/** The suites accepted at one version (SSLv3 to TLS 1.3), by taking out each one the server picks. */
async function enumerate(probe: Probe, version: WireVersion, findings: HelloFindings): Promise<ProtocolSuites> {
  const candidates = version === 'TLSv1.3' ? TLS13_CODES : LEGACY_CODES;
  let remaining = [...candidates];
  const accepted: number[] = [];
  let supported: boolean | undefined;
  const wanted = VERSION_CODE[version];
  const offer = (suites: number[]) =>
    hello(probe, clientHello({ version, suites, servername: probe.endpoint.servername }));
  for (let step = 0; step < MAX_STEPS && remaining.length; step++) {
    const flight = await offer(remaining);
    const picked = flight.hello;
    if (!picked || picked.version !== wanted || !remaining.includes(picked.suite)) {
      if (supported === undefined) supported = flight.end === 'timeout' ? undefined : false;
      break;
    }
    supported = true;
    accepted.push(picked.suite);
    remaining = remaining.filter((c) => c !== picked.suite);
    if (version !== 'TLSv1.3') {
      const scts = sctCount(picked.extensions.get(EXTENSION.signedCertificateTimestamp), true);
      findings.tlsScts = Math.max(findings.tlsScts, scts);
      const renegotiation = picked.extensions.has(EXTENSION.renegotiationInfo);
      findings.secureRenegotiation = (findings.secureRenegotiation ?? true) && renegotiation;
      const prime = dhPrime(flight);
      const dhe = /^TLS_DHE_/.test(suiteFacts(picked.suite).name);
      if (dhe && prime && !findings.dhPrimes.some((p) => p.equals(prime))) findings.dhPrimes.push(prime);
    }
  }
  let serverPreference: boolean | undefined;
  if (accepted.length >= 2) {
    const reversed = await offer([...accepted].reverse());
    serverPreference = reversed.hello ? reversed.hello.suite === accepted[0] : undefined;
  }
  const ordered = serverPreference === false ? candidates.filter((c) => accepted.includes(c)) : accepted;
  return { protocol: version, supported, suites: ordered.map((c) => suiteFacts(c)), serverPreference };
}

/** SSLv2: one CLIENT-HELLO; a SERVER-HELLO lists the cipher kinds the server shares with us. */
async function probeSslv2(probe: Probe): Promise<ProtocolSuites> {
  probe.connections++;
  const answer = await sslv2Exchange(probe.endpoint, probe.timeoutMs, probe.signal);
  const suites = Array.from({ length: answer.kinds }, (_, i) => ({
    ...suiteFacts(0xff00 + i, 'SSL_CK_SSLV2'),
    keyExchange: 'RSA',
    cbc: true,
    bits: 40,
    export: true,
    block64: true,
  }));
  return { protocol: 'SSLv2', supported: answer.supported, suites, serverPreference: undefined };
}

/**
 * Each named group alone: a ServerHello or HelloRetryRequest (TLS 1.3), or an ECDHE ServerHello (older),
 * accepts it.
 */
async function acceptedGroups(probe: Probe, protocols: ProtocolSuites[]): Promise<string[]> {
  const tls13 = protocols.find((p) => p.protocol === 'TLSv1.3' && p.supported);
  const ecdhe = protocols
    .filter((p) => p.supported && p.protocol !== 'TLSv1.3' && p.protocol !== 'SSLv2')
    .map((p) => ({ version: p.protocol as WireVersion, suites: p.suites.filter((s) => s.keyExchange === 'ECDHE') }))
    .findLast((p) => p.suites.length > 0);
  const results = await mapLimited([...NAMED_GROUPS], async ([code, name]) => {
    if (tls13) {
      const flight = await hello(
        probe,
        clientHello({
          version: 'TLSv1.3',
          suites: tls13.suites.map((s) => s.code),
          groups: [code],
          emptyKeyShare: true,
          servername: probe.endpoint.servername,
        }),
      );
      if (flight.hello?.version === VERSION_CODE['TLSv1.3']) return name;
    }
    if (ecdhe && code < 256) {
      const flight = await hello(
        probe,
        clientHello({
          version: ecdhe.version,
          suites: ecdhe.suites.map((s) => s.code),
          groups: [code],
          servername: probe.endpoint.servername,
        }),
      );
      if (flight.hello && ecdhe.suites.some((s) => s.code === flight.hello?.suite)) return name;
    }
    return undefined;
  });
  return results.filter((n): n is string => n !== undefined);
}

/**
 * Each signature algorithm alone, at TLS 1.2 and 1.3 (each with its forward-secret suites; 1.3 only
 * with X25519, whose key share any 32 bytes make): a ServerHello accepts it.
 */
async function acceptedSignatureAlgorithms(
  probe: Probe,
  protocols: ProtocolSuites[],
  groups: string[],
): Promise<string[]> {
  const versions = protocols
    .filter((p) => p.supported && (p.protocol === 'TLSv1.2' || p.protocol === 'TLSv1.3'))
    .map((p) => ({
      version: p.protocol as WireVersion,
      suites: p.suites.filter((s) => s.forwardSecrecy && !s.anonymous).map((s) => s.code),
    }))
    .filter((p) => p.suites.length > 0 && (p.version !== 'TLSv1.3' || groups.includes('x25519')));
  const tries = versions.flatMap((v) => [...SIGNATURE_ALGORITHMS].map(([code, name]) => ({ ...v, code, name })));
  const results = await mapLimited(tries, async (t) => {
    const flight = await hello(
      probe,
      clientHello({
        version: t.version,
        suites: t.suites,
        sigalgs: [t.code],
        groups: t.version === 'TLSv1.3' ? [29] : undefined,
        servername: probe.endpoint.servername,
      }),
    );
    return flight.hello && !flight.hello.retry ? t.name : undefined;
  });
  return [...SIGNATURE_ALGORITHMS.values()].filter((name) => results.includes(name));
}

/** Abort listeners a scan's signal may hold: one per connection in flight. */
export const MAX_LISTENERS = 256;

/** Connections one scan holds open at once for the group and signature probes. */
const PARALLEL_PROBES = 8;

/** `fn` over `items`, at most PARALLEL_PROBES at a time, results in order. */
async function mapLimited<T, R>(items: readonly T[], fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(PARALLEL_PROBES, items.length) }, worker));
  return results;
}

export async function scanSuites(endpoint: Endpoint, timeoutMs: number, signal: AbortSignal): Promise<SuiteScan> {
  // One listener per connection in flight, and many connections: a scan's own signal, not the caller's.
  const scoped = AbortSignal.any([signal]);
  setMaxListeners(MAX_LISTENERS, scoped);
  signal = scoped;
  const probe: Probe = { endpoint, timeoutMs, signal, connections: 0 };
  const findings: HelloFindings = { dhPrimes: [], secureRenegotiation: undefined, tlsScts: 0 };
  const protocols = await Promise.all([
    probeSslv2(probe),
    ...(['SSLv3', 'TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'] as const).map((v) => enumerate(probe, v, findings)),
  ]);
  const groups = await acceptedGroups(probe, protocols);
  const signatureAlgorithms = await acceptedSignatureAlgorithms(probe, protocols, groups);
  return { protocols, findings, groups, signatureAlgorithms, connections: probe.connections };
}

/** Notes on the suite set as a whole: CBC only, no AEAD, no TLS 1.3. */
export function suiteNotes(protocols: readonly ProtocolSuites[]): string[] {
  const all = protocols.flatMap((p) => p.suites);
  if (!all.length) return [];
  const notes: string[] = [];
  if (!all.some((s) => s.aead)) notes.push('no AEAD suite (GCM, ChaCha20-Poly1305, CCM) is accepted');
  const modern = protocols.filter((p) => p.protocol === 'TLSv1.2' || p.protocol === 'TLSv1.3').flatMap((p) => p.suites);
  if (modern.length && modern.every((s) => s.cbc)) notes.push('TLS 1.2 offers CBC suites only');
  if (!protocols.some((p) => p.protocol === 'TLSv1.3' && p.supported)) notes.push('TLS 1.3 is not supported');
  return notes;
}
