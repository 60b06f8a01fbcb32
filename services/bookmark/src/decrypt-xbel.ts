import { invalidArgument, ServiceError } from '@webutil/kit';
import type { DecryptXbelRequest, DecryptXbelResponse } from '@webutil/proto/webutil/bookmark/v1/bookmark';
import { type BookmarkFilesDeps, checkUpload, lifetime, storeOutput } from './bookmark-files.js';
import { cleanUploadName, decryptedName } from './file-names.js';
import { type DeriveKey, decryptFloccus, encryptedFileOf } from './floccus-crypto.js';
import { readXbel } from './xbel.js';

const NEITHER = 'the file is neither XBEL nor an encrypted Floccus file (a JSON object holding ciphertext and salt)';

/**
 * DecryptXbel: a Floccus-encrypted file is decrypted; a plain XBEL file is checked and returned
 * byte for byte. Either way the output is stored for the download route.
 */
export async function decryptXbel(
  request: DecryptXbelRequest,
  deps: BookmarkFilesDeps,
  signal: AbortSignal,
): Promise<DecryptXbelResponse> {
  checkUpload(request.file);
  if (request.key === '') throw invalidArgument('KEY_REQUIRED', 'key is required');
  const upload = cleanUploadName(request.fileName);
  const fileName = decryptedName(upload);
  const plaintext = await decryptOrPass(request.file, request.key, request.salt, deps.deriveKey, signal);
  const stored = await storeOutput(deps, 'xbel', plaintext.bytes, fileName);
  const what = plaintext.wasEncrypted ? 'Decrypted' : 'The file was not encrypted; returned unchanged:';
  return {
    storedName: stored.name,
    fileName,
    message:
      `${what} ${upload || 'the upload'} as ${fileName}. ` + `The download link is valid for ${lifetime(deps.ttlMs)}.`,
  };
}

async function decryptOrPass(
  file: Uint8Array,
  key: string,
  salt: string | undefined,
  deriveKey: DeriveKey,
  signal: AbortSignal,
): Promise<{ bytes: Uint8Array; wasEncrypted: boolean }> {
  const bytes = Buffer.from(file.buffer, file.byteOffset, file.length);
  // The first character decides (after a byte-order mark and white space): JSON is Floccus's shape.
  if (/^\uFEFF?\s*\{/.test(bytes.subarray(0, 1024).toString('utf8'))) {
    let json: unknown;
    try {
      json = JSON.parse(bytes.toString('utf8'));
    } catch {
      throw invalidArgument(
        'CORRUPTED_FILE',
        'the file starts like an encrypted Floccus file (JSON) but does not parse: it is cut short or damaged',
      );
    }
    return { bytes: await decryptFloccus(encryptedFileOf(json, salt), key, deriveKey, signal), wasEncrypted: true };
  }
  try {
    await readXbel(file, { maxFolderDepth: Number.POSITIVE_INFINITY }, signal);
  } catch (err) {
    if (err instanceof ServiceError && err.reason === 'INVALID_XBEL')
      throw invalidArgument('INVALID_FILE', `${NEITHER}: ${err.message}`);
    throw err;
  }
  return { bytes: file, wasEncrypted: false };
}
