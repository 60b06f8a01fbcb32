import type { ConvertXbelToHtmlRequest, ConvertXbelToHtmlResponse } from '@webutil/proto/webutil/bookmark/v1/bookmark';
import { type BookmarkFilesDeps, checkUpload, lifetime, storeOutput } from './bookmark-files.js';
import { cleanUploadName, htmlName } from './file-names.js';
import { netscapeHtml } from './netscape-html.js';
import { readXbel } from './xbel.js';

/** The spec's folder nesting limit for xbel-to-html. */
export const MAX_FOLDER_DEPTH = 100;

/** ConvertXbelToHtml: reads the XBEL, writes Netscape bookmark HTML into the store piece by piece. */
export async function convertXbelToHtml(
  request: ConvertXbelToHtmlRequest,
  deps: BookmarkFilesDeps,
  signal: AbortSignal,
): Promise<ConvertXbelToHtmlResponse> {
  checkUpload(request.file);
  const limits = { maxFolderDepth: MAX_FOLDER_DEPTH };
  const doc = await readXbel(request.file, limits, signal);
  const upload = cleanUploadName(request.fileName);
  const fileName = htmlName(upload);
  const stored = await storeOutput(deps, 'html', netscapeHtml(doc, limits, signal), fileName);
  const { bookmark, folder } = doc.counts;
  return {
    storedName: stored.name,
    fileName,
    message:
      `Converted ${plural(bookmark, 'bookmark')} in ${plural(folder, 'folder')} to ${fileName}. ` +
      `The download link is valid for ${lifetime(deps.ttlMs)}.`,
  };
}

const plural = (n: number, noun: string) => `${n.toLocaleString('en-US')} ${noun}${n === 1 ? '' : 's'}`;
