/**
 * The full scan's parts beyond the fast one: every suite per protocol, the named groups and
 * signature algorithms, then the vulnerability checks that read them. Each part is timed.
 */
import type { X509Certificate } from 'node:crypto';
import type { CipherSuite, ProtocolCiphers, Vulnerability } from '@webutil/proto/webutil/tlsscan/v1/tlsscan';
import { type ProtocolSuites, type SuiteFacts, type SuiteScan, scanSuites, suiteNotes } from './cipher-suites.js';
import type { GradeCap } from './grade.js';
import type { Endpoint } from './handshake.js';
import type { HomePage } from './hsts.js';
import { checkVulnerabilities, type VulnerabilityResult } from './vulnerabilities.js';

export interface DeepScan {
  suites: SuiteScan;
  vulnerabilities: VulnerabilityResult[];
  cipherSuitesMs: number;
  vulnerabilitiesMs: number;
}

/** What the vulnerability checks need from the rest of the scan. */
export interface DeepScanInputs {
  /** The main handshake's leaf certificate: DROWN looks for its key on other ports. */
  certificate: X509Certificate;
  /** Other ports of the address tried for SSLv2 (DROWN). */
  otherPorts: readonly number[];
}

export async function deepScan(
  endpoint: Endpoint,
  page: Promise<HomePage>,
  timeoutMs: number,
  signal: AbortSignal,
  inputs: DeepScanInputs,
): Promise<DeepScan> {
  const started = performance.now();
  const suites = await scanSuites(endpoint, timeoutMs, signal);
  const enumerated = performance.now();
  const vulnerabilities = await checkVulnerabilities({
    endpoint,
    timeoutMs,
    signal,
    suites,
    page: await page,
    ...inputs,
  });
  return {
    suites,
    vulnerabilities,
    cipherSuitesMs: Math.round(enumerated - started),
    vulnerabilitiesMs: Math.round(performance.now() - enumerated),
  };
}

/** What the full scan adds to the grade: the old protocols, every suite's strength, and each finding's cap. */
export function gradeFindings(deep: DeepScan): {
  bits: number[];
  insecureSuite: boolean;
  caps: GradeCap[];
} {
  const accepted = deep.suites.protocols.filter((p) => p.supported).flatMap((p) => p.suites);
  const caps: GradeCap[] = [];
  const supported = (protocol: string) => deep.suites.protocols.some((p) => p.protocol === protocol && p.supported);
  if (supported('SSLv2')) caps.push({ grade: 'F', code: 'sslv2', message: 'SSL 2.0 is accepted' });
  if (supported('SSLv3')) caps.push({ grade: 'B', code: 'sslv3', message: 'SSL 3.0 is accepted' });
  for (const v of deep.vulnerabilities) {
    if (v.verdict === 'vulnerable' && v.cap)
      caps.push({ grade: v.cap, code: `vulnerable_${v.id}`, message: `${v.name}: ${v.why}` });
  }
  return {
    bits: accepted.map((s) => s.bits),
    insecureSuite: accepted.some((s) => s.bits === 0 || s.anonymous || s.export),
    caps,
  };
}

/** strong, weak or insecure, as the proto documents. */
export function strengthOf(s: SuiteFacts): string {
  if (s.bits === 0 || s.anonymous || s.export) return 'insecure';
  if (s.bits < 128 || s.rc4 || s.block64 || (s.cbc && !s.forwardSecrecy)) return 'weak';
  return 'strong';
}

const presentSuite = (s: SuiteFacts): CipherSuite => ({
  name: s.name,
  code: `0x${s.code.toString(16).toUpperCase().padStart(4, '0')}`,
  keyExchange: s.keyExchange,
  forwardSecrecy: s.forwardSecrecy,
  aead: s.aead,
  bits: s.bits,
  strength: strengthOf(s),
});

export const presentProtocols = (protocols: readonly ProtocolSuites[]): ProtocolCiphers[] =>
  protocols.map((p) => ({
    protocol: p.protocol,
    supported: p.supported,
    serverPreference: p.serverPreference,
    suites: p.suites.map(presentSuite),
  }));

export const presentVulnerabilities = (results: readonly VulnerabilityResult[]): Vulnerability[] =>
  results.map((v) => ({ id: v.id, name: v.name, verdict: v.verdict, why: v.why, cve: v.cve, gradeCap: v.cap }));

export { suiteNotes };
