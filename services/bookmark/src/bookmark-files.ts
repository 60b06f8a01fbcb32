import { invalidArgument } from '@webutil/kit';
import type { ArtifactStore } from '@webutil/kit/artifacts';
import type { DeriveKey } from './floccus-crypto.js';

/** What the RPC handlers share: where outputs go and how long they live. */
export interface BookmarkFilesDeps {
  store: ArtifactStore;
  /** Output lifetime (the spec's 30 minutes). */
  ttlMs: number;
  /** Floccus key derivation, with its concurrency limit. */
  deriveKey: DeriveKey;
}

/** The spec's upload limit; the edge refuses larger bodies first, this guards the RPC itself. */
export const MAX_FILE_BYTES = 10 * 1024 * 1024;

/** The stored output kinds: their artifact extension and content type. */
export const OUTPUTS = {
  xbel: { extension: 'xbel', contentType: 'application/xml' },
  html: { extension: 'html', contentType: 'text/html; charset=utf-8' },
} as const;

export function checkUpload(file: Uint8Array): void {
  if (file.length === 0) throw invalidArgument('EMPTY_FILE', 'the file is empty');
  if (file.length > MAX_FILE_BYTES)
    throw invalidArgument('FILE_TOO_LARGE', `the file is larger than ${MAX_FILE_BYTES} bytes`);
}

/** "30 minutes", or seconds for the short lifetimes tests configure. */
export function lifetime(ms: number): string {
  if (ms >= 60_000) {
    const minutes = Math.round(ms / 60_000);
    return `${minutes} minute${minutes === 1 ? '' : 's'}`;
  }
  const seconds = Math.ceil(ms / 1000);
  return `${seconds} second${seconds === 1 ? '' : 's'}`;
}
