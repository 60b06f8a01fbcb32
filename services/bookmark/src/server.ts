import { bind, type Logger, type ServiceBinding } from '@webutil/kit';
import { BookmarkServiceService } from '@webutil/proto/webutil/bookmark/v1/bookmark';
import type { BookmarkFilesDeps } from './bookmark-files.js';
import { readCleanedBookmarks } from './cleaned-bookmarks.js';
import { convertHtmlToXbel } from './convert-html-to-xbel.js';
import { convertXbelToHtml } from './convert-xbel-to-html.js';
import { decryptXbel } from './decrypt-xbel.js';
import { discardBookmarks, parseBookmarks } from './parse-bookmarks.js';
import { readDownload } from './read-download.js';

export function bookmarkService(deps: BookmarkFilesDeps, log: Logger): ServiceBinding {
  return bind(
    BookmarkServiceService,
    {
      decryptXbel: (request, ctx) => decryptXbel(request, deps, ctx.signal),
      convertXbelToHtml: (request, ctx) => convertXbelToHtml(request, deps, ctx.signal),
      convertHtmlToXbel: (request, ctx) => convertHtmlToXbel(request, deps, ctx.signal),
      readDownload: (request, ctx, send) => readDownload(request, deps, send, ctx.signal),
      parseBookmarks: (request, ctx) => parseBookmarks(request, deps, ctx.signal),
      discardBookmarks: (request) => discardBookmarks(request, deps),
      readCleanedBookmarks: (request, ctx, send) => readCleanedBookmarks(request, deps, send, ctx.signal),
    },
    log,
  );
}
