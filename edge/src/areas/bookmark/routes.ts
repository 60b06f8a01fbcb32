/** Bookmark files: an upload in, a link to the output (kept 30 minutes) out. */
import { DownloadKind } from '@webutil/proto/webutil/bookmark/v1/bookmark';
import { z } from 'zod';
import { required } from '../../rest/common.js';
import { type DownloadSpec, download, type RouteSpec, route, versioned } from '../../route-spec.js';
import { withDownloadUrl } from './presenters.js';
import { HTML_UPLOAD, htmlToXbelInput, XBEL_UPLOAD, XbelResult, xbelDecryptInput, xbelToHtmlInput } from './schemas.js';

/**
 * A file the service refuses; 422 when what it converts to would pass the output bound (docs/decisions/0111).
 * The spec's XBEL routes answer a file they cannot use with 500; the code says what was wrong with it.
 */
export const XBEL_FILE_ERRORS = { empty_file: 400, output_too_large: 422 };

/** Where the bookmark routes' outputs are downloaded: the answer's downloadUrl and the download row share it. */
const XBEL_DECRYPT_DOWNLOAD = '/xbel-decrypt/download';
const XBEL_TO_HTML_DOWNLOAD = '/xbel-to-html/download';
const HTML_TO_XBEL_DOWNLOAD = '/html-to-xbel/download';

export const bookmarkRoutes: RouteSpec[] = [
  route({
    method: 'POST',
    path: '/xbel-decrypt',
    operation: 'xbel-decrypt',
    summary: 'Decrypts a bookmark file encrypted by Floccus; a plain XBEL file passes through unchanged.',
    credits: 1,
    input: xbelDecryptInput,
    upload: XBEL_UPLOAD,
    output: XbelResult,
    envelope: 'top-level',
    errors: { ...XBEL_FILE_ERRORS, wrong_password: 500, invalid_file: 500, corrupted_file: 500 },
    timeoutMs: 60_000,
    call: (c, input, options) =>
      c.bookmark.decryptXbel(
        { fileName: input.file.name, file: input.file.bytes, key: input.key, salt: input.salt },
        options,
      ),
    present: withDownloadUrl(XBEL_DECRYPT_DOWNLOAD),
  }),
  route({
    method: 'POST',
    path: '/xbel-to-html',
    operation: 'xbel-to-html',
    summary: 'Converts an XBEL bookmark file to the Netscape bookmark HTML that browsers import.',
    credits: 1,
    input: xbelToHtmlInput,
    upload: XBEL_UPLOAD,
    output: XbelResult,
    envelope: 'top-level',
    errors: { ...XBEL_FILE_ERRORS, invalid_xbel: 500, nesting_too_deep: 500, alias_expansion_too_large: 500 },
    timeoutMs: 60_000,
    call: (c, input, options) =>
      c.bookmark.convertXbelToHtml({ fileName: input.file.name, file: input.file.bytes }, options),
    present: withDownloadUrl(XBEL_TO_HTML_DOWNLOAD),
  }),
  route({
    method: 'POST',
    path: '/html-to-xbel',
    operation: 'html-to-xbel',
    summary: 'Converts a browser’s bookmark HTML export (Netscape format) to XBEL.',
    credits: 1,
    input: htmlToXbelInput,
    upload: HTML_UPLOAD,
    output: XbelResult,
    envelope: 'top-level',
    // A new route: a file it cannot use is the caller's to fix (400), unlike the spec's XBEL routes.
    errors: {
      ...XBEL_FILE_ERRORS,
      invalid_html: 400,
      nesting_too_deep: 400,
      too_many_bookmarks: 400,
      file_too_complex: 400,
    },
    timeoutMs: 60_000,
    call: (c, input, options) =>
      c.bookmark.convertHtmlToXbel({ fileName: input.file.name, file: input.file.bytes }, options),
    present: withDownloadUrl(HTML_TO_XBEL_DOWNLOAD),
  }),
];

/** A bookmark conversion's output, by the downloadUrl its conversion returned (kept 30 minutes). */
function bookmarkFile(
  prefix: string,
  operation: string,
  what: string,
  contentType: string,
  { kind }: { kind: DownloadKind },
): DownloadSpec {
  return download({
    paths: versioned(`${prefix}/:stored_name`),
    operation,
    summary: `${what} by the downloadUrl its conversion returned; kept 30 minutes.`,
    input: z.object({ stored_name: required('stored_name') }),
    nameParam: 'stored_name',
    disposition: 'attachment',
    contentTypes: [contentType],
    errors: { file_not_found: 404 },
    timeoutMs: 60_000,
    call: (c, input, options) => c.bookmark.readDownload({ kind, storedName: input.stored_name }, options),
  });
}

/** The conversions' outputs: free, no credential needed. */
export const bookmarkDownloads: DownloadSpec[] = [
  bookmarkFile(XBEL_DECRYPT_DOWNLOAD, 'xbel-decrypt-download', 'A decrypted XBEL file', 'application/xml', {
    kind: DownloadKind.DOWNLOAD_KIND_DECRYPTED,
  }),
  bookmarkFile(XBEL_TO_HTML_DOWNLOAD, 'xbel-to-html-download', 'A bookmark HTML file', 'text/html', {
    kind: DownloadKind.DOWNLOAD_KIND_HTML,
  }),
  bookmarkFile(HTML_TO_XBEL_DOWNLOAD, 'html-to-xbel-download', 'An XBEL file', 'application/xml', {
    kind: DownloadKind.DOWNLOAD_KIND_XBEL_FROM_HTML,
  }),
];
