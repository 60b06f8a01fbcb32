import { invalidArgument } from '@webutil/kit';
import type { ArtifactInfo, ArtifactStore } from '@webutil/kit/artifacts';
import type { BookmarkWorkers } from './bookmark-workers.js';
import type { DeriveKey } from './floccus-crypto.js';

/** What the RPC handlers share: where outputs go and how long they live. */
export interface BookmarkFilesDeps {
  store: ArtifactStore;
  /** Output lifetime (the spec's 30 minutes). */
  ttlMs: number;
  /** Floccus key derivation, with its concurrency limit. */
  deriveKey: DeriveKey;
  /** Where reading bookmark HTML and writing cleaned copies run: off the event loop, bounded. */
  workers: BookmarkWorkers;
}

/** The spec's upload limit; the edge refuses larger bodies first, this guards the RPC itself. */
export const MAX_FILE_BYTES = 10 * 1024 * 1024;

/**
 * What one conversion may write, whatever the upload: five times the upload limit (aliases copy
 * items, and indentation and escaping lengthen each line). See docs/decisions/0111.
 */
export const MAX_OUTPUT_BYTES = 5 * MAX_FILE_BYTES;

/**
 * What a file may convert to, relative to its size: four times it plus 1 MiB, never past
 * MAX_OUTPUT_BYTES. A browser's export converts to about its own size; what needs more is
 * markup built to multiply (decision 0292).
 */
export function maxOutputBytes(inputBytes: number): number {
  return Math.min(MAX_OUTPUT_BYTES, 4 * inputBytes + 1024 * 1024);
}

/** The stored output kinds: their artifact extension and content type. */
export const OUTPUTS = {
  xbel: { extension: 'xbel', contentType: 'application/xml' },
  html: { extension: 'html', contentType: 'text/html; charset=utf-8' },
  /** html-to-xbel's: its own extension, so the decrypt route never serves it (decision 0057). */
  xbelFromHtml: { extension: 'hxbel', contentType: 'application/xml' },
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

export const outputTooLarge = (maxBytes = MAX_OUTPUT_BYTES) =>
  invalidArgument(
    'OUTPUT_TOO_LARGE',
    `the output would be larger than ${(maxBytes / (1024 * 1024)).toFixed(1)} MB (${maxBytes} bytes), ` +
      'the most this file may convert to',
  );

/**
 * Stores a conversion's output for its download route. An output that passes MAX_OUTPUT_BYTES is
 * refused: bytes are checked before the store is asked, a stream the moment it passes the bound,
 * and the store deletes what a failed body had written.
 */
export function storeOutput(
  deps: BookmarkFilesDeps,
  kind: keyof typeof OUTPUTS,
  body: Uint8Array | AsyncIterable<Uint8Array>,
  downloadName: string,
): Promise<ArtifactInfo> {
  if (body instanceof Uint8Array && body.length > MAX_OUTPUT_BYTES) return Promise.reject(outputTooLarge());
  return deps.store.put({
    body: body instanceof Uint8Array ? body : bounded(body),
    ...OUTPUTS[kind],
    ttlMs: deps.ttlMs,
    downloadName,
  });
}

async function* bounded(body: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  let written = 0;
  for await (const chunk of body) {
    written += chunk.length;
    if (written > MAX_OUTPUT_BYTES) throw outputTooLarge();
    yield chunk;
  }
}

/** One message of a streamed file (ReadDownload's and ReadCleanedBookmarks's are alike). */
export interface FileMessage {
  fileName: string;
  contentType: string;
  sizeBytes: string;
  chunk: Buffer;
}

/**
 * Streams a stored file: a first message with its name, type and size, then its bytes. Leaving
 * the loop early (the caller went away) closes the stored file.
 */
export async function streamStored(
  head: { fileName: string; contentType: string; sizeBytes: number },
  body: AsyncIterable<Uint8Array>,
  send: (message: FileMessage) => Promise<void>,
  signal: AbortSignal,
): Promise<void> {
  await send({ ...head, sizeBytes: String(head.sizeBytes), chunk: Buffer.alloc(0) });
  for await (const chunk of body) {
    if (signal.aborted) break;
    await send({
      fileName: '',
      contentType: '',
      sizeBytes: '0',
      chunk: Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length),
    });
  }
}
