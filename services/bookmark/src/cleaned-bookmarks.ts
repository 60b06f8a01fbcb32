import { invalidArgument, notFound } from '@webutil/kit';
import type {
  ReadCleanedBookmarksRequest,
  ReadCleanedBookmarksResponse,
} from '@webutil/proto/webutil/bookmark/v1/bookmark';
import { asLatin1, type BookmarkEdits, editNetscape, editXbel, fromLatin1 } from './bookmark-edits.js';
import { type BookmarkFilesDeps, lifetime, MAX_OUTPUT_BYTES, OUTPUTS } from './bookmark-files.js';
import { MAX_FOLDER_DEPTH } from './convert-xbel-to-html.js';
import { cleanUploadName } from './file-names.js';
import { netscapeHtml } from './netscape-html.js';
import { readNetscape } from './netscape-read.js';
import { KEPT, type SourceFormat } from './parse-bookmarks.js';
import { readXbel } from './xbel.js';
import { xbelFromNetscape } from './xbel-write.js';

/** Bytes per streamed message. */
const CHUNK_BYTES = 256 * 1024;

/**
 * ReadCleanedBookmarks: the kept file of a check with the edits applied, in its own format
 * (only the edited spans change) or converted (XBEL to bookmark HTML as xbel-to-html does, HTML to
 * XBEL as html-to-xbel does), streamed.
 */
export async function readCleanedBookmarks(
  request: ReadCleanedBookmarksRequest,
  deps: BookmarkFilesDeps,
  send: (message: ReadCleanedBookmarksResponse) => Promise<void>,
  signal: AbortSignal,
): Promise<void> {
  const source = (Object.keys(KEPT) as SourceFormat[]).find((f) => request.fileId.endsWith(`.${KEPT[f].extension}`));
  const opened = source ? await deps.store.open(request.fileId) : undefined;
  if (!source || !opened)
    throw notFound('FILE_NOT_FOUND', `no such file: a check's file is kept for ${lifetime(deps.ttlMs)}`);
  const format = (request.format || source) as SourceFormat;
  if (format !== 'xbel' && format !== 'html') throw invalidArgument('INVALID_FORMAT', 'format is xbel or html');
  const parts: Buffer[] = [];
  for await (const chunk of opened.body) parts.push(Buffer.from(chunk));
  const edits: BookmarkEdits = {
    drop: new Set(request.drop),
    rewrite: new Map(request.rewrites.map((r) => [r.index, r.url])),
  };
  const text = asLatin1(Buffer.concat(parts));
  const edited = fromLatin1(source === 'xbel' ? editXbel(text, edits) : editNetscape(text, edits));
  signal.throwIfAborted();
  const body = await converted(edited, source, format, signal);
  if (body.length > MAX_OUTPUT_BYTES)
    throw invalidArgument('OUTPUT_TOO_LARGE', `the output would be larger than ${MAX_OUTPUT_BYTES} bytes`);
  const stem =
    cleanUploadName(request.baseName || opened.info.downloadName || '').replace(/\.[^.]*$/, '') || 'bookmarks';
  await send({
    fileName: `${stem}-cleaned.${OUTPUTS[format].extension}`,
    contentType: OUTPUTS[format].contentType,
    sizeBytes: String(body.length),
    chunk: Buffer.alloc(0),
  });
  for (let at = 0; at < body.length; at += CHUNK_BYTES) {
    if (signal.aborted) return;
    await send({ fileName: '', contentType: '', sizeBytes: '0', chunk: body.subarray(at, at + CHUNK_BYTES) });
  }
}

async function converted(
  edited: Buffer,
  source: SourceFormat,
  format: SourceFormat,
  signal: AbortSignal,
): Promise<Buffer> {
  if (source === format) return edited;
  if (source === 'html') return Buffer.from(xbelFromNetscape(readNetscape(edited.toString('utf8'))), 'utf8');
  const limits = { maxFolderDepth: MAX_FOLDER_DEPTH };
  const doc = await readXbel(edited, limits, signal);
  const pieces: Uint8Array[] = [];
  let size = 0;
  for await (const piece of netscapeHtml(doc, limits, signal)) {
    size += piece.length;
    if (size > MAX_OUTPUT_BYTES)
      throw invalidArgument('OUTPUT_TOO_LARGE', `the output would be larger than ${MAX_OUTPUT_BYTES} bytes`);
    pieces.push(piece);
  }
  return Buffer.concat(pieces);
}
