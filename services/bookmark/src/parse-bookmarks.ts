import { invalidArgument, ServiceError } from '@webutil/kit';
import type {
  DiscardBookmarksRequest,
  DiscardBookmarksResponse,
  ParseBookmarksRequest,
  ParseBookmarksResponse,
  ParsedBookmark,
} from '@webutil/proto/webutil/bookmark/v1/bookmark';
import { type BookmarkFilesDeps, checkUpload } from './bookmark-files.js';
import { MAX_FOLDER_DEPTH } from './convert-xbel-to-html.js';
import { cleanUploadName } from './file-names.js';
import { decryptFloccus, encryptedFileOf } from './floccus-crypto.js';
import { unixSeconds } from './netscape-html.js';
import { folderChain, looksLikeNetscape, readNetscape } from './netscape-read.js';
import { readXbel, type XbelItem } from './xbel.js';

/** Bookmarks a check lists and checks at most (the rest are counted). */
export const MAX_CHECKED_BOOKMARKS = 5_000;
/** A title is cut to this many characters in the list (the file keeps it whole). */
const MAX_TITLE_CHARS = 500;
/** A URL is cut to this many characters in the list; the crawl service does not check one this long. */
export const MAX_URL_CHARS = 4_096;
/** Characters of one bookmark's folder path in the list; deeper folders are left out past it. */
const MAX_PATH_CHARS = 2_000;

/** A kept file: the plain XBEL or HTML as uploaded (decrypted when it was Floccus-encrypted). */
export const KEPT = {
  xbel: { extension: 'kxbel', contentType: 'application/xml' },
  html: { extension: 'khtml', contentType: 'text/html; charset=utf-8' },
} as const;

export type SourceFormat = keyof typeof KEPT;

const NOT_BOOKMARKS =
  'the file is neither XBEL (plain or Floccus-encrypted) nor a Netscape bookmark HTML export from a browser';

/**
 * ParseBookmarks: the file read (decrypted first when it is a Floccus file and a key is given),
 * its bookmarks listed in file order (the first 5,000) with their folders, and the plain file kept
 * for cleaned copies as long as a check's job lives.
 */
export async function parseBookmarks(
  request: ParseBookmarksRequest,
  deps: BookmarkFilesDeps,
  signal: AbortSignal,
): Promise<ParseBookmarksResponse> {
  checkUpload(request.file);
  const { format, bytes } = await plainFile(request, deps, signal);
  const { total, bookmarks } =
    format === 'xbel'
      ? await listXbel(bytes, signal)
      : await deps.workers.run({ kind: 'list-html', file: bytes }, signal);
  const stored = await deps.store.put({
    body: bytes,
    ...KEPT[format],
    ttlMs: deps.ttlMs,
    downloadName: cleanUploadName(request.fileName) || `bookmarks.${format}`,
  });
  return { fileId: stored.name, sourceFormat: format, totalBookmarks: total, bookmarks };
}

/**
 * DiscardBookmarks: a kept file deleted now, its check refused before a job existed. Only a kept
 * file (never a conversion's download) is deleted; another name, or one already gone, changes nothing.
 */
export async function discardBookmarks(
  request: DiscardBookmarksRequest,
  deps: BookmarkFilesDeps,
): Promise<DiscardBookmarksResponse> {
  const kept = Object.values(KEPT).some((k) => request.fileId.endsWith(`.${k.extension}`));
  if (kept) await deps.store.delete(request.fileId);
  return {};
}

/** What the file is, by its first characters, and its plain bytes. */
async function plainFile(
  request: ParseBookmarksRequest,
  deps: BookmarkFilesDeps,
  signal: AbortSignal,
): Promise<{ format: SourceFormat; bytes: Uint8Array }> {
  const file = Buffer.from(request.file.buffer, request.file.byteOffset, request.file.length);
  const head = file
    .subarray(0, 4096)
    .toString('utf8')
    .replace(/^\uFEFF/, '');
  if (/^\s*\{/.test(head)) {
    if (!request.key) throw invalidArgument('KEY_REQUIRED', 'the file is encrypted (Floccus): send its key');
    let json: unknown;
    try {
      json = JSON.parse(file.toString('utf8'));
    } catch {
      throw invalidArgument(
        'CORRUPTED_FILE',
        'the file starts like an encrypted Floccus file but is cut short or damaged',
      );
    }
    const plain = await decryptFloccus(encryptedFileOf(json, request.salt), request.key, deps.deriveKey, signal);
    return { format: 'xbel', bytes: plain };
  }
  if (
    /^\s*(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*(<!DOCTYPE\s+xbel[^>]*>\s*)?<xbel[\s>]/i.test(head) ||
    /<xbel[\s>]/.test(head)
  )
    return { format: 'xbel', bytes: file };
  if (looksLikeNetscape(head)) return { format: 'html', bytes: file };
  throw invalidArgument('INVALID_FILE', NOT_BOOKMARKS);
}

const cut = (value: string, max: number) => (value.length > max ? value.slice(0, max) : value);

function pathOf(titles: string[]): string[] {
  const path: string[] = [];
  let chars = 0;
  for (const title of titles) {
    const t = cut(title, 200);
    if (chars + t.length > MAX_PATH_CHARS) {
      path.push('…');
      break;
    }
    path.push(t);
    chars += t.length;
  }
  return path;
}

async function listXbel(
  bytes: Uint8Array,
  signal: AbortSignal,
): Promise<{ total: number; bookmarks: ParsedBookmark[] }> {
  let doc: Awaited<ReturnType<typeof readXbel>>;
  try {
    doc = await readXbel(bytes, { maxFolderDepth: MAX_FOLDER_DEPTH }, signal);
  } catch (err) {
    if (err instanceof ServiceError && err.reason === 'INVALID_XBEL')
      throw invalidArgument('INVALID_FILE', `${NOT_BOOKMARKS}: ${err.message}`);
    throw err;
  }
  const bookmarks: ParsedBookmark[] = [];
  const folders: string[] = [];
  const walk = (items: XbelItem[]) => {
    for (const item of items) {
      if (item.kind === 'folder') {
        folders.push(item.title?.trim() ?? '');
        walk(item.children);
        folders.pop();
      } else if (item.kind === 'bookmark' && bookmarks.length < MAX_CHECKED_BOOKMARKS) {
        bookmarks.push({
          title: cut(item.title?.trim() ?? '', MAX_TITLE_CHARS),
          url: cut(item.href, MAX_URL_CHARS),
          folderPath: pathOf(folders),
          addedAt: isoDate(item.added),
        });
      }
    }
  };
  walk(doc.children);
  return { total: doc.counts.bookmark, bookmarks };
}

/** An XBEL date as one ISO 8601 form (UTC, milliseconds); undefined for what is not ISO 8601. */
function isoDate(value: string | undefined): string | undefined {
  const seconds = value === undefined ? undefined : unixSeconds(value);
  return seconds === undefined ? undefined : new Date(seconds * 1000).toISOString();
}

/** Unix seconds (as browsers write ADD_DATE; some write microseconds) to ISO 8601. */
function isoOf(seconds: string | undefined): string | undefined {
  if (!seconds || !/^\d{1,17}$/.test(seconds)) return undefined;
  let n = Number(seconds);
  if (n > 1e14) n /= 1e6;
  else if (n > 1e11) n /= 1e3;
  const date = new Date(Math.round(n) * 1000);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

export function listNetscape(text: string): { total: number; bookmarks: ParsedBookmark[] } {
  const doc = readNetscape(text);
  const bookmarks = doc.bookmarks.slice(0, MAX_CHECKED_BOOKMARKS).map((item) => ({
    title: cut(item.title, MAX_TITLE_CHARS),
    url: cut(item.href, MAX_URL_CHARS),
    folderPath: pathOf(folderChain(item.folder).map((f) => f.title)),
    addedAt: isoOf(item.addDate),
  }));
  return { total: doc.bookmarks.length, bookmarks };
}

export { isoOf };
