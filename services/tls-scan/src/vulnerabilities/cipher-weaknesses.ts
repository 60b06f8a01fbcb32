/**
 * Weaknesses read off the suites the server accepts, with no connection of their own: RC4,
 * SWEET32 (64-bit blocks), FREAK (RSA export), POODLE (SSLv3 with CBC), BEAST (CBC with TLS 1.0
 * or older) and LUCKY13 (any CBC).
 */
import type { SuiteScan } from '../cipher-suites.js';
import {
  accepted,
  CHECKS,
  fromSuites,
  list,
  suiteNames,
  supported,
  type VulnerabilityResult,
  verdict,
} from './check.js';

export const rc4 = (suites: SuiteScan): VulnerabilityResult =>
  fromSuites(
    suites,
    CHECKS.rc4,
    suiteNames(suites, (s) => s.rc4),
    'RC4 suite',
  );

export function sweet32(suites: SuiteScan): VulnerabilityResult {
  const block64 = suiteNames(suites, (s) => s.block64);
  return supported(suites, 'SSLv2')?.supported && !block64.length
    ? verdict(CHECKS.sweet32, 'vulnerable', 'SSLv2 is accepted, and its ciphers are 64-bit block ciphers')
    : fromSuites(suites, CHECKS.sweet32, block64, '64-bit block cipher suite (3DES, DES, IDEA, RC2)');
}

export const freak = (suites: SuiteScan): VulnerabilityResult =>
  fromSuites(
    suites,
    CHECKS.freak,
    suiteNames(suites, (s) => s.export && /^TLS_RSA_EXPORT/.test(s.name)),
    'RSA export suite',
  );

export function poodle(suites: SuiteScan): VulnerabilityResult {
  const sslv3 = supported(suites, 'SSLv3');
  if (sslv3?.supported === undefined) return verdict(CHECKS.poodle, 'unknown', 'the SSLv3 probe got no answer in time');
  const cbc = sslv3.suites.filter((s) => s.cbc).map((s) => s.name);
  if (cbc.length) return verdict(CHECKS.poodle, 'vulnerable', `SSLv3 with CBC suites is accepted: ${list(cbc)}`);
  return verdict(
    CHECKS.poodle,
    'not_vulnerable',
    sslv3.supported ? 'SSLv3 is accepted, without CBC suites' : 'SSLv3 is refused',
  );
}

export function beast(suites: SuiteScan): VulnerabilityResult {
  const cbc = [...accepted(supported(suites, 'SSLv3')), ...accepted(supported(suites, 'TLSv1'))]
    .filter((s) => s.cbc)
    .map((s) => s.name);
  if (!cbc.length) return fromSuites(suites, CHECKS.beast, [], 'CBC suite with TLS 1.0 or SSLv3');
  const newer = suites.protocols.some(
    (p) => p.supported && (p.protocol === 'TLSv1.1' || p.protocol === 'TLSv1.2' || p.protocol === 'TLSv1.3'),
  );
  return verdict(
    CHECKS.beast,
    'vulnerable',
    `CBC suites with TLS 1.0 or SSLv3: ${list([...new Set(cbc)])}` +
      (newer ? '; newer protocols are accepted too (likely mitigated in browsers)' : ''),
  );
}

export function lucky13(suites: SuiteScan): VulnerabilityResult {
  const cbc = suiteNames(suites, (s) => s.cbc);
  return cbc.length
    ? verdict(
        CHECKS.lucky13,
        'vulnerable',
        `potentially: CBC suites are accepted (${list(cbc)}); patched libraries resist the timing attack`,
      )
    : fromSuites(suites, CHECKS.lucky13, [], 'CBC suite');
}
