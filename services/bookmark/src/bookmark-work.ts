import type { ParsedBookmark } from '@webutil/proto/webutil/bookmark/v1/bookmark';
import { asLatin1, type BookmarkEdits, editNetscape, editXbel, fromLatin1 } from './bookmark-edits.js';
import { maxOutputBytes, outputTooLarge } from './bookmark-files.js';
import { MAX_FOLDER_DEPTH } from './convert-xbel-to-html.js';
import { netscapeHtml } from './netscape-html.js';
import { readNetscape } from './netscape-read.js';
import { listNetscape, type SourceFormat } from './parse-bookmarks.js';
import { readXbel } from './xbel.js';
import { xbelFromNetscape } from './xbel-write.js';

/**
 * The bookmark work whose cost grows with the file (reading bookmark HTML, writing a cleaned
 * copy), as tasks a worker thread runs off the service's event loop (bookmark-workers.ts).
 */
export type BookmarkTask =
  | { kind: 'list-html'; file: Uint8Array }
  | { kind: 'html-to-xbel'; file: Uint8Array }
  | {
      kind: 'cleaned-copy';
      file: Uint8Array;
      source: SourceFormat;
      format: SourceFormat;
      drop: number[];
      rewrites: [number, string][];
    };

export interface BookmarkResults {
  'list-html': { total: number; bookmarks: ParsedBookmark[] };
  'html-to-xbel': { body: Uint8Array; bookmarks: number };
  'cleaned-copy': { body: Uint8Array };
}

export type BookmarkResult = BookmarkResults[BookmarkTask['kind']];

export async function runBookmarkTask(task: BookmarkTask): Promise<BookmarkResult> {
  switch (task.kind) {
    case 'list-html':
      return listNetscape(utf8(task.file));
    case 'html-to-xbel': {
      const doc = readNetscape(utf8(task.file));
      return { body: xbelFromNetscape(doc, maxOutputBytes(task.file.length)), bookmarks: doc.bookmarks.length };
    }
    case 'cleaned-copy':
      return { body: await cleanedCopy(task) };
  }
}

const utf8 = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('utf8');

/**
 * A kept file with the edits applied, in its own format (only the edited spans change) or
 * converted (XBEL to bookmark HTML as xbel-to-html does, HTML to XBEL as html-to-xbel does);
 * at most maxOutputBytes of the kept file.
 */
async function cleanedCopy(task: Extract<BookmarkTask, { kind: 'cleaned-copy' }>): Promise<Buffer> {
  const edits: BookmarkEdits = { drop: new Set(task.drop), rewrite: new Map(task.rewrites) };
  const text = asLatin1(task.file);
  const edited = fromLatin1(task.source === 'xbel' ? editXbel(text, edits) : editNetscape(text, edits));
  const maxBytes = maxOutputBytes(task.file.length);
  if (task.source === task.format) {
    if (edited.length > maxBytes) throw outputTooLarge(maxBytes);
    return edited;
  }
  if (task.source === 'html') return xbelFromNetscape(readNetscape(edited.toString('utf8')), maxBytes);
  const limits = { maxFolderDepth: MAX_FOLDER_DEPTH };
  const signal = new AbortController().signal;
  const doc = await readXbel(edited, limits, signal);
  const pieces: Uint8Array[] = [];
  let size = 0;
  for await (const piece of netscapeHtml(doc, limits, signal)) {
    size += piece.length;
    if (size > maxBytes) throw outputTooLarge(maxBytes);
    pieces.push(piece);
  }
  return Buffer.concat(pieces);
}
