import { invalidArgument } from '@webutil/kit';
import type { ConvertHtmlToXbelRequest, ConvertHtmlToXbelResponse } from '@webutil/proto/webutil/bookmark/v1/bookmark';
import { type BookmarkFilesDeps, checkUpload, lifetime, storeOutput } from './bookmark-files.js';
import { cleanUploadName, xbelName } from './file-names.js';
import { looksLikeNetscape } from './netscape-read.js';

/**
 * ConvertHtmlToXbel: a browser's bookmark HTML (Netscape format) to XBEL, stored for its download
 * route: folders, bookmarks, descriptions and separators in order, dates as ISO 8601; read and
 * written in a worker (bookmark-workers.ts).
 */
export async function convertHtmlToXbel(
  request: ConvertHtmlToXbelRequest,
  deps: BookmarkFilesDeps,
  signal: AbortSignal,
): Promise<ConvertHtmlToXbelResponse> {
  checkUpload(request.file);
  const head = Buffer.from(request.file.buffer, request.file.byteOffset, Math.min(request.file.length, 64 * 1024));
  if (!looksLikeNetscape(head.toString('utf8')))
    throw invalidArgument(
      'INVALID_HTML',
      'the file is not a Netscape bookmark HTML export (it has no bookmark list: <DL> with <DT> items)',
    );
  const { body, bookmarks: n } = await deps.workers.run({ kind: 'html-to-xbel', file: request.file }, signal);
  const upload = cleanUploadName(request.fileName);
  const fileName = xbelName(upload || 'bookmarks.html');
  const stored = await storeOutput(deps, 'xbelFromHtml', body, fileName);
  return {
    storedName: stored.name,
    fileName,
    message:
      `Converted ${n.toLocaleString('en-US')} bookmark${n === 1 ? '' : 's'} to ${fileName}. ` +
      `The download link is valid for ${lifetime(deps.ttlMs)}.`,
  };
}
