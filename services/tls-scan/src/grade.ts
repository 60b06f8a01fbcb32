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
  /** The two keys that make it, each named (e.g. "1024-bit RSA", "X25519"), so a cap says which is weak. */
  keys?: { certificate?: NamedKey; exchange?: NamedKey };
  /** Version and forward secrecy of the main handshake (what a modern client gets). */
  negotiated: { protocol: TlsVersion; forwardSecrecy: boolean };
  trusted: boolean;
  /** Why the certificate is not trusted (the chain's problems), for the cap's message. */
  trustProblems?: readonly string[];
  chainComplete: boolean;
  nameMatches: boolean;
  inDate: boolean;
  /** HSTS max-age in seconds, when the server sent the header. */
  hstsMaxAge: number | undefined;
  /**
   * Whether browsers honour the header read: `ignored` over a certificate with errors (RFC 6797 8.1),
   * `absent` when the answer had none, `not_read` when no answer came. Unset: honoured when sent.
   */
  hstsStatus?: HstsStatus;
  /** Caps found by the full scan: SSL 2.0/3.0 accepted, and each vulnerability that caps (SSL Labs' guide). */
  findingCaps?: readonly GradeCap[];
}

/** A grade cap and what caused it. */
export interface GradeCap {
  grade: Capped;
  code: string;
  message: string;
}

export type HstsStatus = 'honoured' | 'ignored' | 'absent' | 'not_read';

/** A key in RSA-equivalent bits, with what it is called in a message. */
export interface NamedKey {
  strength: number;
  label: string;
}

export type Letter = 'A+' | 'A' | 'B' | 'C' | 'D' | 'E' | 'F';

/** One thing that shaped the score or grade: a stable code (docs/grading.md), what was found, what it does. */
export interface GradeReason {
  code: string;
  message: string;
  effect: string;
}

export interface Rating {
  score: number;
  grade: Letter;
  /** Every cap, missing A+ requirement and score deduction, in that order; empty for a perfect 100 A+. */
  reasons: GradeReason[];
}

/** Six months: the HSTS max-age SSL Labs requires for A+. */
export const HSTS_A_PLUS_SECONDS = 15_552_000;

const PROTOCOL_SCORE: Record<TlsVersion, number> = { TLSv1: 90, 'TLSv1.1': 95, 'TLSv1.2': 100, 'TLSv1.3': 100 };
const PROTOCOL_LABEL: Record<TlsVersion, string> = {
  TLSv1: 'TLS 1.0',
  'TLSv1.1': 'TLS 1.1',
  'TLSv1.2': 'TLS 1.2',
  'TLSv1.3': 'TLS 1.3',
};

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

/** The three categories before weighting: each the average of its best and worst case. */
export function categories(input: GradeInput): { protocol: number; keyExchange: number; cipher: number } {
  const protocolScores = input.protocols.map((v) => PROTOCOL_SCORE[v]);
  return {
    protocol: (Math.max(...protocolScores) + Math.min(...protocolScores)) / 2,
    keyExchange: input.insecureSuite ? 0 : keyExchangeScore(input.keyExchangeBits),
    cipher: (cipherScore(input.strongestBits) + cipherScore(input.weakestBits)) / 2,
  };
}

const WEIGHT = { protocol: 0.3, keyExchange: 0.3, cipher: 0.4 } as const;

/** The weighted score before caps. */
export function rawScore(input: GradeInput): number {
  const c = categories(input);
  return Math.round(WEIGHT.protocol * c.protocol + WEIGHT.keyExchange * c.keyExchange + WEIGHT.cipher * c.cipher);
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
type Capped = keyof typeof CEILING;

type Cap = GradeCap;

function capsOf(input: GradeInput): Cap[] {
  const caps: Cap[] = [];
  const cap = (grade: Capped, code: string, message: string, applies: boolean) => {
    if (applies) caps.push({ grade, code, message });
  };
  const legacy = input.protocols.filter((v) => v === 'TLSv1' || v === 'TLSv1.1');
  // The guide's "T" (not trusted) and "M" (name mismatch) grades are F in our letter set.
  const why = input.trustProblems?.length ? `: ${input.trustProblems.join('; ')}` : '';
  cap('F', 'cert_untrusted', `the certificate is not trusted${why}`, !input.trusted);
  cap('F', 'cert_out_of_date', 'the certificate is expired or not yet valid', !input.inDate);
  cap('F', 'cert_name_mismatch', 'the certificate does not name the host', !input.nameMatches);
  cap('F', 'key_under_1024', `${weakKeys(input, 1024)}, under 1024 bits`, input.keyExchangeBits < 1024);
  cap('F', 'insecure_suite', 'a suite without encryption or authentication is accepted', input.insecureSuite);
  cap(
    'C',
    'no_tls12',
    'neither TLS 1.2 nor TLS 1.3 is supported',
    !input.protocols.some((v) => v === 'TLSv1.2' || v === 'TLSv1.3'),
  );
  cap(
    'C',
    'cipher_under_128',
    `a ${input.weakestBits}-bit cipher is accepted, under 128 bits`,
    input.weakestBits > 0 && input.weakestBits < 128,
  );
  cap(
    'B',
    'legacy_protocol',
    `${legacy.map((v) => PROTOCOL_LABEL[v]).join(' and ')} ${legacy.length > 1 ? 'are' : 'is'} still accepted`,
    legacy.length > 0,
  );
  cap('B', 'chain_incomplete', 'the server does not send the full certificate chain', !input.chainComplete);
  // Under 1024 bits is the F cap above; this one is the band between.
  cap(
    'B',
    'key_under_2048',
    `${weakKeys(input, 2048)}, under 2048 bits`,
    input.keyExchangeBits >= 1024 && input.keyExchangeBits < 2048,
  );
  cap('B', 'no_forward_secrecy', 'the negotiated suite has no forward secrecy', !input.negotiated.forwardSecrecy);
  caps.push(...(input.findingCaps ?? []));
  // Lowest cap first, as the reasons list them.
  return caps.sort((a, b) => CEILING[a.grade] - CEILING[b.grade]);
}

/**
 * The keys weaker than `bits`, each named: the certificate's key and the exchange's ephemeral key
 * are told apart (a 1024-bit RSA certificate with X25519 is a weak certificate key, not a weak exchange).
 */
function weakKeys(input: GradeInput, bits: number): string {
  const { certificate, exchange } = input.keys ?? {};
  const named = [
    certificate && certificate.strength < bits ? `the certificate key is ${certificate.label}` : undefined,
    exchange && exchange.strength < bits ? `the key exchange is ${exchange.label}` : undefined,
  ].filter((s): s is string => s !== undefined);
  return named.length
    ? `${named.join(' and ')} (${input.keyExchangeBits}-bit RSA-equivalent)`
    : `the key exchange is ${input.keyExchangeBits}-bit (RSA-equivalent)`;
}

const points = (n: number) => `${Number.isInteger(n) ? n : n.toFixed(1)} point${n === 1 ? '' : 's'}`;

/** What kept each category under 100, as the points it cost the score. */
function deductionsOf(input: GradeInput): GradeReason[] {
  const c = categories(input);
  const reasons: GradeReason[] = [];
  const deduct = (category: keyof typeof WEIGHT, code: string, message: string) => {
    const lost = WEIGHT[category] * (100 - c[category]);
    if (lost > 0) {
      const what = `${message.split(':')[0]} scores ${c[category]} of 100`;
      reasons.push({ code, message, effect: `-${points(lost)}: ${what} (weight ${WEIGHT[category] * 100} %)` });
    }
  };
  const oldest = input.protocols[0];
  if (oldest) {
    deduct(
      'protocol',
      'protocol_support',
      `protocol support: the oldest version accepted is ${PROTOCOL_LABEL[oldest]}`,
    );
  }
  deduct(
    'keyExchange',
    'key_exchange_strength',
    input.insecureSuite
      ? 'key exchange: a suite without authentication is accepted'
      : `key exchange: ${input.keyExchangeBits}-bit RSA-equivalent${keysNamed(input)} (4096 for full marks)`,
  );
  deduct(
    'cipher',
    'cipher_strength',
    `cipher strength: the weakest suite accepted has ${input.weakestBits}-bit encryption, the strongest ` +
      `${input.strongestBits}-bit (256 for full marks)`,
  );
  return reasons;
}

/** ", the weaker of the certificate key 1024-bit RSA and the exchange X25519", when both are known. */
function keysNamed(input: GradeInput): string {
  const { certificate, exchange } = input.keys ?? {};
  if (certificate && exchange)
    return `, the weaker of the certificate key ${certificate.label} and the exchange ${exchange.label}`;
  if (certificate) return `, the certificate key ${certificate.label} (RSA key transport)`;
  return '';
}

export function rate(input: GradeInput): Rating {
  const caps = capsOf(input);
  const score = Math.min(rawScore(input), ...caps.map((c) => CEILING[c.grade]));
  const letter = letterOf(score);
  const modern =
    input.negotiated.protocol === 'TLSv1.3' ||
    (input.negotiated.protocol === 'TLSv1.2' && input.negotiated.forwardSecrecy);
  const honoured = input.hstsStatus === undefined || input.hstsStatus === 'honoured';
  const maxAge = honoured ? (input.hstsMaxAge ?? 0) : 0;
  const aPlus = letter === 'A' && modern && maxAge >= HSTS_A_PLUS_SECONDS;
  const reasons: GradeReason[] = caps.map((c) => ({
    code: c.code,
    message: c.message,
    effect: `grade capped at ${c.grade} (score at most ${CEILING[c.grade]})`,
  }));
  const needsHsts = 'A+ needs HSTS with max-age ≥ 6 months (15552000 s)';
  if (input.hstsStatus === 'not_read') {
    const message = 'the home page gave no answer, so the Strict-Transport-Security header could not be read';
    reasons.push({ code: 'hsts_not_read', message, effect: needsHsts });
  } else if (input.hstsStatus === 'ignored') {
    const message =
      'the Strict-Transport-Security header was read, but browsers ignore it over a certificate with errors';
    reasons.push({ code: 'hsts_ignored', message, effect: needsHsts });
  } else if (input.hstsMaxAge === undefined) {
    reasons.push({ code: 'no_hsts', message: 'no Strict-Transport-Security header with a max-age', effect: needsHsts });
  } else if (maxAge < HSTS_A_PLUS_SECONDS) {
    reasons.push({ code: 'hsts_short', message: `HSTS max-age is ${maxAge} s, under 6 months`, effect: needsHsts });
  }
  reasons.push(...deductionsOf(input));
  return { score, grade: aPlus ? 'A+' : letter, reasons };
}

/**
 * SSL Labs' second grade for a certificate problem: "T" (not trusted, out of date) or "M" (the
 * name does not match) beside the grade the server would get if the certificate were fine, its
 * HSTS header then honoured. Undefined when the certificate is trusted, in date and names the host.
 */
export function trustMarker(input: GradeInput): { marker: 'T' | 'M'; gradeIgnoringTrust: Letter } | undefined {
  const marker = !input.trusted || !input.inDate ? 'T' : !input.nameMatches ? 'M' : undefined;
  if (!marker) return undefined;
  const hstsStatus = input.hstsStatus === 'ignored' ? 'honoured' : input.hstsStatus;
  const trusted = { ...input, trusted: true, inDate: true, nameMatches: true, hstsStatus };
  return { marker, gradeIgnoringTrust: rate(trusted).grade };
}
