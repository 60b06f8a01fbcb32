/**
 * LOGJAM: DH export suites, a DHE group under 1024 bits, or a 1024-bit group that is one of the
 * well-known common primes (a precomputation for one such prime breaks every server that uses it).
 * Read off the enumeration's ServerKeyExchanges, no connection of its own.
 */
import { createHash } from 'node:crypto';
import type { SuiteScan } from '../cipher-suites.js';
import { CHECKS, fromSuites, list, suiteNames, type VulnerabilityResult, verdict } from './check.js';

/**
 * The published DH groups, by the SHA-256 of their prime (big-endian, no leading zero): the RFC 2409
 * and RFC 3526 MODP groups (Node's getDiffieHellman), RFC 5114's and RFC 7919's (OpenSSL's named
 * groups). A test recomputes each from those sources. Vendor-built primes (older Apache, Java,
 * some appliances) are not listed.
 */
export const COMMON_DH_PRIMES: ReadonlyMap<string, string> = new Map([
  ['b52ba6a3026520a6c49d37e4587601801bee500123b3259b6bf03e7cecc3e63d', 'RFC 2409 group 1 (768-bit MODP)'],
  ['3f35a3f5f6c4376a744acad409bb22f8d897f949d2311d885adaa890981b67a0', 'RFC 2409 group 2 (1024-bit MODP)'],
  ['64fcc83ec403930bf18393dbc883ccaa1fbb08ac876f77f7aa99748ca945019b', 'RFC 3526 group 5 (1536-bit MODP)'],
  ['d66436f79bbd6b2e38c0ffbd079be904d2641415e2e67140e09448be9a60890e', 'RFC 3526 group 14 (2048-bit MODP)'],
  ['48cf8b092fbce4359d9871abf74f98e25b6163379eaa15cd9087e800c6d1c55c', 'RFC 3526 group 15 (3072-bit MODP)'],
  ['4ee95187682bcb230ad26a95205f6920e84708f6251b3894329b09ec23919e33', 'RFC 3526 group 16 (4096-bit MODP)'],
  ['d1bfe6d0925ce7e4da262b62861514a7755e35831e429f343e7b864848657efd', 'RFC 3526 group 17 (6144-bit MODP)'],
  ['39ab4feab950a3128fb71accb9fc3965d857012e081998a85996e3ea8b3c3bcf', 'RFC 3526 group 18 (8192-bit MODP)'],
  ['44c55cfee5c075927cf682da5b681bdecbd5c3eb0784c14f5dce7610f0ef133d', 'RFC 5114 1024-bit group (160-bit subgroup)'],
  ['bfe545862ca102ad1eeddb5fbfa5bf855ac4995c56a8b408ce3fe099dce93a9d', 'RFC 5114 2048-bit group (224-bit subgroup)'],
  ['0b7835722cb619827610c2549fdda5587421686c4409a13865e76225522ddcc9', 'RFC 5114 2048-bit group (256-bit subgroup)'],
  ['9cd3b7f336872f46c09428d1bbc19877a4d440512cda8d1c1cf0cd6e33698966', 'RFC 7919 ffdhe2048'],
  ['0eaf67db3a839156d5013494a5318a772b5697d270d721f37f092efc69ea5a17', 'RFC 7919 ffdhe3072'],
  ['4648414224ac881b3d0dc59b466f96d06a558278776807797ecf1f66ff397b3e', 'RFC 7919 ffdhe4096'],
  ['227ac9066b3ddd9e193670cda2388fa884f65ba0cf98b742d1fe77a6687c79c7', 'RFC 7919 ffdhe6144'],
  ['770b14efaf6f049929c523113b3fa99a8d11dab1b18af3609590122075d19833', 'RFC 7919 ffdhe8192'],
]);

/** The published group a prime is, if any. */
export function commonPrimeName(prime: Buffer): string | undefined {
  const first = prime.findIndex((b) => b !== 0);
  return COMMON_DH_PRIMES.get(
    createHash('sha256')
      .update(prime.subarray(Math.max(first, 0)))
      .digest('hex'),
  );
}

const bitsOf = (prime: Buffer) => {
  const first = prime.findIndex((b) => b !== 0);
  return first < 0 ? 0 : (prime.length - first - 1) * 8 + (32 - Math.clz32(prime[first] as number));
};

/** A 1024-bit or smaller common prime is within reach of one precomputation (the LOGJAM paper). */
const PRECOMPUTABLE_BITS = 1024;

export function logjam(suites: SuiteScan): VulnerabilityResult {
  const check = CHECKS.logjam;
  const dheExport = suiteNames(suites, (s) => s.export && /^TLS_DHE?_/.test(s.name));
  if (dheExport.length) return verdict(check, 'vulnerable', `DH export suites accepted: ${list(dheExport)}`);
  const groups = suites.findings.dhPrimes.map((prime) => ({ bits: bitsOf(prime), common: commonPrimeName(prime) }));
  const small = groups.find((g) => g.bits < PRECOMPUTABLE_BITS);
  if (small) {
    const name = small.common ? ` (${small.common})` : '';
    return verdict(check, 'vulnerable', `the DHE suites use a ${small.bits}-bit DH group${name}, under 1024 bits`);
  }
  const commonWeak = groups.find((g) => g.common && g.bits <= PRECOMPUTABLE_BITS);
  if (commonWeak) {
    return verdict(
      check,
      'vulnerable',
      `the DHE suites use a common ${commonWeak.bits}-bit prime, ${commonWeak.common}: ` +
        'one precomputation breaks every server using it',
    );
  }
  const named = groups.map((g) => (g.common ? `${g.bits}-bit, ${g.common}` : `${g.bits}-bit, not a common prime`));
  const group = named.length ? `the DH group is ${named.join('; ')}` : 'no DHE suite';
  return fromSuites(suites, check, [], `DH export suite (${group})`);
}
