/**
 * What every vulnerability check shares: its id, name, CVEs and grade cap (SSL Labs' guide), the
 * verdict it answers with why, and what the probes read (the enumeration, the home page, the
 * checked address).
 */
import type { X509Certificate } from 'node:crypto';
import tls from 'node:tls';
import type { ProtocolSuites, SuiteFacts, SuiteScan } from '../cipher-suites.js';
import type { Endpoint } from '../handshake.js';
import type { HomePage } from '../hsts.js';
import type { WireVersion } from '../raw-hello.js';

export type Verdict = 'vulnerable' | 'not_vulnerable' | 'unknown';
export type CapGrade = 'F' | 'C' | 'B';

export interface VulnerabilityResult {
  /** Stable id, e.g. heartbleed. */
  id: string;
  name: string;
  cve: string[];
  verdict: Verdict;
  why: string;
  /** The grade cap this finding imposes when vulnerable (SSL Labs' guide); none for warnings. */
  cap?: CapGrade;
}

export interface Check {
  id: string;
  name: string;
  cve: string[];
  cap?: CapGrade;
}

export const CHECKS = {
  heartbleed: { id: 'heartbleed', name: 'Heartbleed', cve: ['CVE-2014-0160'], cap: 'F' },
  ccs: { id: 'ccs_injection', name: 'CCS injection', cve: ['CVE-2014-0224'], cap: 'F' },
  ticketbleed: { id: 'ticketbleed', name: 'Ticketbleed', cve: ['CVE-2016-9244'], cap: 'F' },
  robot: { id: 'robot', name: 'ROBOT', cve: ['CVE-2017-13099'], cap: 'F' },
  secureRenegotiation: {
    id: 'secure_renegotiation',
    name: 'Secure renegotiation (RFC 5746)',
    cve: ['CVE-2009-3555'],
    cap: 'C',
  },
  clientRenegotiation: { id: 'client_renegotiation', name: 'Client-initiated renegotiation', cve: [] },
  crime: { id: 'crime', name: 'CRIME (TLS compression)', cve: ['CVE-2012-4929'], cap: 'C' },
  breach: { id: 'breach', name: 'BREACH (HTTP compression)', cve: ['CVE-2013-3587'] },
  poodle: { id: 'poodle_ssl', name: 'POODLE (SSLv3)', cve: ['CVE-2014-3566'], cap: 'C' },
  fallback: { id: 'fallback_scsv', name: 'TLS_FALLBACK_SCSV (downgrade prevention)', cve: [] },
  sweet32: {
    id: 'sweet32',
    name: 'SWEET32 (64-bit block ciphers)',
    cve: ['CVE-2016-2183', 'CVE-2016-6329'],
    cap: 'C',
  },
  freak: { id: 'freak', name: 'FREAK (RSA export)', cve: ['CVE-2015-0204'], cap: 'F' },
  drown: { id: 'drown', name: 'DROWN (SSLv2)', cve: ['CVE-2016-0800', 'CVE-2016-0703'], cap: 'F' },
  logjam: { id: 'logjam', name: 'LOGJAM (DH export, weak DH)', cve: ['CVE-2015-4000'], cap: 'F' },
  beast: { id: 'beast', name: 'BEAST (CBC in TLS 1.0)', cve: ['CVE-2011-3389'] },
  lucky13: { id: 'lucky13', name: 'LUCKY13 (CBC timing)', cve: ['CVE-2013-0169'] },
  rc4: { id: 'rc4', name: 'RC4', cve: ['CVE-2013-2566', 'CVE-2015-2808'], cap: 'C' },
} as const satisfies Record<string, Check>;

export const verdict = (check: Check, v: Verdict, why: string): VulnerabilityResult => ({
  id: check.id,
  name: check.name,
  cve: [...check.cve],
  verdict: v,
  why,
  ...(v === 'vulnerable' && check.cap ? { cap: check.cap } : {}),
});

/** Alert descriptions read in verdicts. */
export const ALERT = {
  unexpectedMessage: 10,
  badRecordMac: 20,
  decryptionFailed: 21,
  handshakeFailure: 40,
  inappropriateFallback: 86,
};

/** What a probe works from: the checked address, the enumeration, the home page and the certificate. */
export interface Context {
  endpoint: Endpoint;
  timeoutMs: number;
  signal: AbortSignal;
  suites: SuiteScan;
  page: HomePage;
  /** The leaf certificate of the main handshake: DROWN compares other services' keys with its key. */
  certificate?: X509Certificate;
  /** Other ports of the same address where an SSLv2 service could share the key (DROWN). */
  otherPorts?: readonly number[];
}

export const supported = (suites: SuiteScan, protocol: string) => suites.protocols.find((p) => p.protocol === protocol);
export const accepted = (p: ProtocolSuites | undefined) => (p?.supported ? p.suites : []);
export const list = (names: string[]) =>
  names.length > 3 ? `${names.slice(0, 3).join(', ')} and ${names.length - 3} more` : names.join(', ');

/** Every suite accepted at SSLv3 to TLS 1.3 (SSLv2's cipher kinds are not suites). */
export const acceptedSuites = (suites: SuiteScan): SuiteFacts[] =>
  suites.protocols.filter((p) => p.protocol !== 'SSLv2').flatMap(accepted);

/** The names of the accepted suites that `pick` selects, each once. */
export const suiteNames = (suites: SuiteScan, pick: (s: SuiteFacts) => boolean) => [
  ...new Set(
    acceptedSuites(suites)
      .filter(pick)
      .map((s) => s.name),
  ),
];

/** A verdict from the suites found: vulnerable when any is, unknown when a protocol probe could not tell. */
export function fromSuites(suites: SuiteScan, check: Check, found: string[], what: string): VulnerabilityResult {
  if (found.length) return verdict(check, 'vulnerable', `${what} accepted: ${list(found)}`);
  const unknownEnumeration = suites.protocols.some((p) => p.protocol !== 'SSLv2' && p.supported === undefined);
  return unknownEnumeration
    ? verdict(check, 'unknown', 'a protocol probe got no answer in time')
    : verdict(check, 'not_vulnerable', `no ${what} accepted`);
}

/** Newest protocol at TLS 1.2 or below the server accepts, with its suites: what the TLS 1.2-era probes speak. */
export function legacyProtocol(suites: SuiteScan): { version: WireVersion; codes: number[] } | undefined {
  const p = suites.protocols
    .filter((x) => x.supported && x.protocol !== 'SSLv2' && x.protocol !== 'TLSv1.3' && x.suites.length)
    .at(-1);
  return p && { version: p.protocol as WireVersion, codes: p.suites.map((s) => s.code) };
}

/** The verdict of a probe that needs TLS 1.2 or older when the server speaks none: TLS 1.3 alone is not affected. */
export function withoutLegacy(ctx: Context, check: Check, why: string): VulnerabilityResult {
  return verdict(check, supported(ctx.suites, 'TLSv1.3')?.supported ? 'not_vulnerable' : 'unknown', why);
}

/** A handshake over Node's TLS to the checked address at exactly `version`, certificate not checked. */
export function connectAt(ctx: Context, version: WireVersion): tls.TLSSocket {
  return tls.connect({
    host: ctx.endpoint.address,
    port: ctx.endpoint.port,
    servername: ctx.endpoint.servername,
    rejectUnauthorized: false,
    minVersion: version as tls.SecureVersion,
    maxVersion: version as tls.SecureVersion,
    ciphers: 'DEFAULT:@SECLEVEL=0',
  });
}
