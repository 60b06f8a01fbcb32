import { createDecipheriv, pbkdf2 } from 'node:crypto';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { promisify } from 'node:util';
import { invalidArgument } from '@webutil/kit';
import pLimit from 'p-limit';

/**
 * The encryption the Floccus bookmark-sync extension applies to its bookmark files
 * (src/lib/Crypto.ts in floccusaddon/floccus): the file is JSON `{ciphertext, salt}`; the key is
 * PBKDF2-SHA-256 over the passphrase's UTF-8 bytes, 250,000 iterations, salted with the salt
 * string's UTF-8 bytes, 32 bytes long; `ciphertext` is base64 of IV (16 bytes) | AES-256-GCM
 * ciphertext | tag (16 bytes).
 */
export const FLOCCUS = { iterations: 250_000, digest: 'sha256', keyBytes: 32, ivBytes: 16, tagBytes: 16 } as const;

export interface EncryptedFile {
  ciphertext: string;
  salt: string;
}

const pbkdf2Async = promisify(pbkdf2);

/** Floccus's key for a passphrase and salt. */
export type DeriveKey = (passphrase: string, salt: string, signal?: AbortSignal) => Promise<Buffer>;

/**
 * Key derivation on libuv's thread pool, at most `concurrency` at a time. Each derivation is
 * pure CPU: letting the pool's four threads run them in parallel on a small machine takes cores
 * from every other process without finishing the queue any sooner
 * (docs/decisions/0041-floccus-decryption.md). A call cancelled while it waits never derives.
 */
export function keyDerivation(concurrency: number): DeriveKey {
  const limit = pLimit(concurrency);
  return (passphrase, salt, signal) =>
    limit(() => {
      signal?.throwIfAborted();
      return pbkdf2Async(
        Buffer.from(passphrase, 'utf8'),
        Buffer.from(salt, 'utf8'),
        FLOCCUS.iterations,
        FLOCCUS.keyBytes,
        FLOCCUS.digest,
      );
    });
}
/** Bytes deciphered between two yields to the event loop (~1 ms). */
const SLICE_BYTES = 1024 * 1024;
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

const invalidFile = (message: string) => invalidArgument('INVALID_FILE', message);

/**
 * The parsed JSON when it has Floccus's shape; an error naming what is wrong otherwise. `salt`
 * stands in for a file without one: releases of Floccus that derived it from the file name wrote
 * none, and the caller has to say what it was.
 */
export function encryptedFileOf(json: unknown, saltGiven?: string): EncryptedFile {
  if (typeof json !== 'object' || json === null || Array.isArray(json))
    throw invalidFile('the file is JSON but not an object holding ciphertext and salt');
  const { ciphertext } = json as Record<string, unknown>;
  const salt = saltGiven || (json as Record<string, unknown>).salt;
  if (typeof ciphertext !== 'string' || typeof salt !== 'string')
    throw invalidFile('the file is JSON but lacks the string fields ciphertext and salt of an encrypted Floccus file');
  return { ciphertext, salt };
}

/**
 * Decrypts one Floccus file. Key derivation runs off the event loop and the cipher works in
 * slices, so the loop keeps serving other calls meanwhile. A failed tag check is a wrong
 * password (or altered bytes: GCM cannot tell the two apart).
 */
export async function decryptFloccus(
  file: EncryptedFile,
  passphrase: string,
  deriveKey: DeriveKey,
  signal?: AbortSignal,
): Promise<Buffer> {
  const packed = file.ciphertext.replace(/\s+/g, '');
  if (!BASE64.test(packed)) throw invalidFile('ciphertext is not base64');
  const bytes = Buffer.from(packed, 'base64');
  if (bytes.length < FLOCCUS.ivBytes + FLOCCUS.tagBytes)
    throw invalidFile(
      `ciphertext is ${bytes.length} bytes, ` +
        `too short for a ${FLOCCUS.ivBytes}-byte IV and a ${FLOCCUS.tagBytes}-byte tag`,
    );
  const key = await deriveKey(passphrase, file.salt, signal);
  signal?.throwIfAborted();
  const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, FLOCCUS.ivBytes));
  decipher.setAuthTag(bytes.subarray(bytes.length - FLOCCUS.tagBytes));
  const body = bytes.subarray(FLOCCUS.ivBytes, bytes.length - FLOCCUS.tagBytes);
  const parts: Buffer[] = [];
  for (let at = 0; at < body.length; at += SLICE_BYTES) {
    parts.push(decipher.update(body.subarray(at, at + SLICE_BYTES)));
    await yieldToLoop();
    signal?.throwIfAborted();
  }
  try {
    parts.push(decipher.final());
  } catch {
    // GCM's cipher is a counter mode: with the right key the bytes decipher right even when the
    // tag fails, so an XBEL start means the key is right and the file was cut short or altered.
    if (looksLikeXml(parts)) {
      throw invalidArgument(
        'CORRUPTED_FILE',
        'the key is right but the file is damaged: its ciphertext was cut short or altered, so it cannot be ' +
          'trusted; export it again',
      );
    }
    throw invalidArgument(
      'WRONG_PASSWORD',
      'the key does not decrypt this file: the password is wrong (or, for a file of an older Floccus release, ' +
        'its salt: send it as `salt`)',
    );
  }
  return Buffer.concat(parts);
}

function looksLikeXml(parts: Buffer[]): boolean {
  const head = Buffer.concat(parts.slice(0, 1)).subarray(0, 256).toString('utf8');
  return /^\uFEFF?\s*<(\?xml|!DOCTYPE\s+xbel|xbel[\s>])/.test(head);
}
