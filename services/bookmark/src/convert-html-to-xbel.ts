import { invalidArgument } from '@webutil/kit';
import type { ConvertHtmlToXbelRequest, ConvertHtmlToXbelResponse } from '@webutil/proto/webutil/bookmark/v1/bookmark';
import { type BookmarkFilesDeps, checkUpload, lifetime, storeOutput } from './bookmark-files.js';
import { cleanUploadName, xbelName } from './file-names.js';
import { looksLikeNetscape, readNetscape } from './netscape-read.js';
import { xbelFromNetscape } from './xbel-write.js';

/**
 * ConvertHtmlToXbel: a browser's bookmark HTML (Netscape format) to XBEL, stored for its download
 * route: folders, bookmarks, descriptions and separators in order, dates as ISO 8601.
 */
export async function convertHtmlToXbel(
  request: ConvertHtmlToXbelRequest,
  deps: BookmarkFilesDeps,
): Promise<ConvertHtmlToXbelResponse> {
  checkUpload(request.file);
  const text = Buffer.from(request.file.buffer, request.file.byteOffset, request.file.length).toString('utf8');
  if (!looksLikeNetscape(text.slice(0, 64 * 1024)))
    throw invalidArgument(
      'INVALID_HTML',
      'the file is not a Netscape bookmark HTML export (it has no bookmark list: <DL> with <DT> items)',
    );
  const doc = readNetscape(text);
  const upload = cleanUploadName(request.fileName);
  const fileName = xbelName(upload || 'bookmarks.html');
  const stored = await storeOutput(deps, 'xbelFromHtml', Buffer.from(xbelFromNetscape(doc), 'utf8'), fileName);
  const n = doc.bookmarks.length;
  return {
    storedName: stored.name,
    fileName,
    message:
      `Converted ${n.toLocaleString('en-US')} bookmark${n === 1 ? '' : 's'} to ${fileName}. ` +
      `The download link is valid for ${lifetime(deps.ttlMs)}.`,
  };
}
