import { createHash } from 'node:crypto';
import { invalidArgument, notFound } from '@webutil/kit';
import type { ArtifactInfo, OpenArtifact } from '@webutil/kit/artifacts';
import type {
  ReadCleanedBookmarksRequest,
  ReadCleanedBookmarksResponse,
} from '@webutil/proto/webutil/bookmark/v1/bookmark';
import { type BookmarkFilesDeps, lifetime, OUTPUTS, streamStored } from './bookmark-files.js';
import { cleanUploadName } from './file-names.js';
import { KEPT, type SourceFormat } from './parse-bookmarks.js';

/** A cleaned copy as stored: its own extensions, so no other download route serves it. */
const CLEANED = {
  xbel: { extension: 'cxbel', contentType: OUTPUTS.xbel.contentType },
  html: { extension: 'chtml', contentType: OUTPUTS.html.contentType },
} as const;

/**
 * ReadCleanedBookmarks: the kept file of a check with the edits applied, in its own format or
 * converted, streamed. Each cleaned copy (file, format and edits) is written once, in a worker
 * (bookmark-work.ts), and stored under a cache key for as long as the kept file lives; every
 * later request streams the stored bytes, parsing nothing (decision 0292). Requests for a copy
 * being written wait for that one writing.
 */
export async function readCleanedBookmarks(
  request: ReadCleanedBookmarksRequest,
  deps: BookmarkFilesDeps,
  send: (message: ReadCleanedBookmarksResponse) => Promise<void>,
  signal: AbortSignal,
): Promise<void> {
  const source = (Object.keys(KEPT) as SourceFormat[]).find((f) => request.fileId.endsWith(`.${KEPT[f].extension}`));
  const kept = source ? await deps.store.stat(request.fileId) : undefined;
  if (!source || !kept)
    throw notFound('FILE_NOT_FOUND', `no such file: a check's file is kept for ${lifetime(deps.ttlMs)}`);
  const format = (request.format || source) as SourceFormat;
  if (format !== 'xbel' && format !== 'html') throw invalidArgument('INVALID_FORMAT', 'format is xbel or html');
  const drop = [...new Set(request.drop)].sort((a, b) => a - b);
  const rewrites = [...new Map(request.rewrites.map((r) => [r.index, r.url]))].sort(([a], [b]) => a - b);
  const cacheKey = `cleaned:${request.fileId}:${format}:${createHash('sha256')
    .update(JSON.stringify([drop, rewrites]))
    .digest('base64url')}`;
  const copy = await storedCopy(cacheKey, deps, async () => {
    const opened = await deps.store.open(request.fileId);
    if (!opened) throw notFound('FILE_NOT_FOUND', `no such file: a check's file is kept for ${lifetime(deps.ttlMs)}`);
    const { body } = await deps.workers.run(
      { kind: 'cleaned-copy', file: await bytesOf(opened), source, format, drop, rewrites },
      // Not the caller's signal: others may be waiting for this copy; the worker's time limit bounds it.
      new AbortController().signal,
    );
    return deps.store.put({
      body,
      ...CLEANED[format],
      // The copy lives as long as the file it was made from.
      ttlMs: Math.max(1, kept.expiresAt - Date.now()),
      downloadName: kept.downloadName,
      cacheKey,
    });
  });
  const opened = await deps.store.open(copy.name);
  if (!opened) throw notFound('FILE_NOT_FOUND', `no such file: a check's file is kept for ${lifetime(deps.ttlMs)}`);
  const stem = cleanUploadName(request.baseName || kept.downloadName || '').replace(/\.[^.]*$/, '') || 'bookmarks';
  await streamStored(
    {
      fileName: `${stem}-cleaned.${OUTPUTS[format].extension}`,
      contentType: OUTPUTS[format].contentType,
      sizeBytes: opened.info.sizeBytes,
    },
    opened.body,
    send,
    signal,
  );
}

/** Copies being written in this process, by cache key: a second request waits for the first. */
const writing = new Map<string, Promise<ArtifactInfo>>();

/** The stored copy under this key, written now (once per process at a time) when there is none. */
async function storedCopy(
  cacheKey: string,
  deps: BookmarkFilesDeps,
  write: () => Promise<ArtifactInfo>,
): Promise<ArtifactInfo> {
  const stored = await deps.store.findCached(cacheKey);
  if (stored) return stored;
  let pending = writing.get(cacheKey);
  if (!pending) {
    pending = write().finally(() => writing.delete(cacheKey));
    writing.set(cacheKey, pending);
  }
  return pending;
}

async function bytesOf(opened: OpenArtifact): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of opened.body) parts.push(Buffer.from(chunk));
  return Buffer.concat(parts);
}
