import { randomBytes, scrypt as scryptCallback, timingSafeEqual } from 'node:crypto';
import argon2 from 'argon2';

/**
 * Argon2id at OWASP's minimum (19 MiB, 2 passes, 1 lane; docs/decisions/0016-password-hashing.md),
 * computed on libuv's thread pool, so the event loop keeps serving while a password is hashed or checked.
 * The PHC string stores the parameters, so they can be raised later: a stored hash with weaker
 * ones is replaced at the next successful sign-in.
 */
const ARGON2ID = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

/** Passwords are compared as Unicode NFKC, so the same text typed on another keyboard matches. */
const normalize = (password: string) => password.normalize('NFKC');

export async function hashPassword(password: string): Promise<string> {
  return argon2.hash(normalize(password), ARGON2ID);
}

export interface Verification {
  ok: boolean;
  /** The stored hash is weaker than hashPassword() makes today: replace it once the password checked out. */
  outdated: boolean;
}

export async function verifyPassword(password: string, stored: string): Promise<Verification> {
  if (stored.startsWith('$argon2')) {
    const ok = await argon2.verify(stored, normalize(password)).catch(() => false);
    return { ok, outdated: ok && argon2.needsRehash(stored, ARGON2ID) };
  }
  return { ok: await verifyScrypt(normalize(password), stored), outdated: true };
}

/** Hashes written before Argon2id: `scrypt$N$r$p$salt$key` (base64url), N=2^15. */
async function verifyScrypt(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, key] = stored.split('$');
  const options = { N: Number(n), r: Number(r), p: Number(p) };
  if (scheme !== 'scrypt' || !salt || !key || !Object.values(options).every(Number.isSafeInteger)) return false;
  const expected = Buffer.from(key, 'base64url');
  if (expected.length === 0) return false;
  const maxmem = 256 * options.N * options.r;
  const actual = await new Promise<Buffer | undefined>((resolve) =>
    scryptCallback(password, Buffer.from(salt, 'base64url'), expected.length, { ...options, maxmem }, (err, derived) =>
      resolve(err ? undefined : derived),
    ),
  );
  return actual !== undefined && actual.length === expected.length && timingSafeEqual(actual, expected);
}

let decoy: Promise<string> | undefined;

/**
 * Spends the time of a real check against a throw-away hash, so a sign-in with an unknown email
 * (or one without a password) takes as long as a wrong password and does not reveal the account.
 */
export async function verifyDecoy(password: string): Promise<false> {
  decoy ??= hashPassword(randomBytes(16).toString('hex'));
  await verifyPassword(password, await decoy);
  return false;
}
