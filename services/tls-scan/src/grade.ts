/**
 * The SSL scan's score and grade, after the SSL Labs server rating guide: a weighted score of
 * protocol support (30 %), key exchange (30 %) and cipher strength (40 %), then grade caps for
 * what the guide caps, then A+ for an A with HSTS. The rubric is written down in docs/grading.md;
 * this file is the only place that applies it.
 */
import type { TlsVersion } from './handshake.js';

export interface GradeInput {
  /** Versions the server accepted. */
  protocols: readonly TlsVersion[];
  /** Strongest and weakest bulk cipher accepted, in bits. */
  strongestBits: number;
  weakestBits: number;
  /** A suite without encryption or server authentication was accepted. */
  insecureSuite: boolean;
  /** Key exchange strength in RSA-equivalent bits: the weaker of the certificate key and the ephemeral key. */
  keyExchangeBits: number;
  /** Version and forward secrecy of the main handshake (what a modern client gets). */
  negotiated: { protocol: TlsVersion; forwardSecrecy: boolean };
  trusted: boolean;
  chainComplete: boolean;
  nameMatches: boolean;
  inDate: boolean;
  /** HSTS max-age in seconds, when the server sent the header. */
  hstsMaxAge: number | undefined;
}

export type Letter = 'A+' | 'A' | 'B' | 'C' | 'D' | 'E' | 'F';

export interface Rating {
  score: number;
  grade: Letter;
  /** Why the grade is capped, one phrase per cap; empty when nothing capped it. */
  caps: string[];
}

/** Six months: the HSTS max-age SSL Labs requires for A+. */
export const HSTS_A_PLUS_SECONDS = 15_552_000;

const PROTOCOL_SCORE: Record<TlsVersion, number> = { TLSv1: 90, 'TLSv1.1': 95, 'TLSv1.2': 100, 'TLSv1.3': 100 };

/** The guide's key-exchange table, by RSA-equivalent bits. */
export function keyExchangeScore(bits: number): number {
  if (bits <= 0) return 0;
  if (bits < 512) return 20;
  if (bits < 1024) return 40;
  if (bits < 2048) return 80;
  if (bits < 4096) return 90;
  return 100;
}

/** The guide's cipher-strength table, by bulk-cipher bits. */
export function cipherScore(bits: number): number {
  if (bits <= 0) return 0;
  if (bits < 128) return 20;
  if (bits < 256) return 80;
  return 100;
}

/** The weighted score before caps: each category is the average of its best and worst case. */
export function rawScore(input: GradeInput): number {
  const protocolScores = input.protocols.map((v) => PROTOCOL_SCORE[v]);
  const protocol = (Math.max(...protocolScores) + Math.min(...protocolScores)) / 2;
  const keyExchange = input.insecureSuite ? 0 : keyExchangeScore(input.keyExchangeBits);
  const cipher = (cipherScore(input.strongestBits) + cipherScore(input.weakestBits)) / 2;
  return Math.round(0.3 * protocol + 0.3 * keyExchange + 0.4 * cipher);
}

/** Score bands of the guide: A 80+, B 65+, C 50+, D 35+, E 20+, F below 20. */
export function letterOf(score: number): Letter {
  if (score >= 80) return 'A';
  if (score >= 65) return 'B';
  if (score >= 50) return 'C';
  if (score >= 35) return 'D';
  if (score >= 20) return 'E';
  return 'F';
}

/** Highest score of a capped grade, so the score stays the basis of the grade. */
const CEILING = { B: 79, C: 64, F: 19 } as const;

function capsOf(input: GradeInput): [keyof typeof CEILING, string][] {
  const caps: [keyof typeof CEILING, string][] = [];
  const cap = (grade: keyof typeof CEILING, why: string, applies: boolean) => {
    if (applies) caps.push([grade, why]);
  };
  // The guide's "T" (not trusted) and "M" (name mismatch) grades are F in our letter set.
  cap('F', 'the certificate is not trusted', !input.trusted);
  cap('F', 'the certificate is expired or not yet valid', !input.inDate);
  cap('F', 'the certificate does not name the host', !input.nameMatches);
  cap('F', 'a key weaker than 1024 bits', input.keyExchangeBits < 1024);
  cap('F', 'a suite without encryption or authentication is accepted', input.insecureSuite);
  cap(
    'C',
    'neither TLS 1.2 nor TLS 1.3 is supported',
    !input.protocols.some((v) => v === 'TLSv1.2' || v === 'TLSv1.3'),
  );
  cap('C', 'a cipher weaker than 128 bits is accepted', input.weakestBits > 0 && input.weakestBits < 128);
  cap(
    'B',
    'TLS 1.0 or TLS 1.1 is still accepted',
    input.protocols.some((v) => v === 'TLSv1' || v === 'TLSv1.1'),
  );
  cap('B', 'the server does not send the full certificate chain', !input.chainComplete);
  cap('B', 'a key weaker than 2048 bits', input.keyExchangeBits < 2048);
  cap('B', 'no forward secrecy', !input.negotiated.forwardSecrecy);
  return caps;
}

export function rate(input: GradeInput): Rating {
  const caps = capsOf(input);
  const score = Math.min(rawScore(input), ...caps.map(([grade]) => CEILING[grade]));
  const letter = letterOf(score);
  const modern =
    input.negotiated.protocol === 'TLSv1.3' ||
    (input.negotiated.protocol === 'TLSv1.2' && input.negotiated.forwardSecrecy);
  const aPlus = letter === 'A' && modern && (input.hstsMaxAge ?? 0) >= HSTS_A_PLUS_SECONDS;
  return { score, grade: aPlus ? 'A+' : letter, caps: caps.map(([, why]) => why) };
}
