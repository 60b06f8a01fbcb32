/** The bookmark service's XBEL routes: a multipart upload in, a download link out. */
import * as bookmark from '@webutil/proto/webutil/bookmark/v1/bookmark.fields';
import { z } from 'zod';
import { type UploadRules, uploadedFile } from '../../multipart.js';
import { restObject } from '../../rest/from-proto.js';

/** The spec's upload rules for both XBEL routes. */
export const XBEL_UPLOAD: UploadRules = {
  field: 'file',
  maxBytes: 10 * 1024 * 1024,
  extensions: ['.xbel'],
  contentTypes: ['application/octet-stream'],
};

const xbelFile = uploadedFile(
  'The XBEL file, at most 10 MB, with the .xbel extension or sent as application/octet-stream.',
);

export const xbelToHtmlInput = z.object({ file: xbelFile });

/** html-to-xbel: a browser's bookmark HTML export, at most 10 MB. */
export const HTML_UPLOAD: UploadRules = {
  field: 'file',
  maxBytes: 10 * 1024 * 1024,
  extensions: ['.html', '.htm'],
  contentTypes: ['application/octet-stream', 'text/html'],
};

export const htmlToXbelInput = z.object({
  file: uploadedFile(
    'A bookmark HTML export (Netscape format) from any browser, at most 10 MB, with the .html or .htm ' +
      'extension or sent as text/html or application/octet-stream.',
  ),
});

export const xbelDecryptInput = z.object({
  file: xbelFile,
  // A password is taken as typed: no trimming.
  key: z
    .string({ error: 'key is required' })
    .min(1, 'key is required')
    .meta({ description: 'The passphrase the file was encrypted with; required even for a plain file.' }),
  salt: z.string({ error: 'salt must be a string' }).max(4096, 'salt is too long').optional().meta({
    description:
      'For a Floccus file of an older release whose JSON has no salt (it was derived from the file name): the salt.',
  }),
});

/** The same three fields answer both routes (ConvertXbelToHtmlResponse has them too). */
export const XbelResult = restObject(bookmark.DecryptXbelResponse, {
  id: 'XbelResult',
  fields: {
    storedName: {
      as: 'downloadUrl',
      value: z.url(),
      description: 'Absolute URL of the output file: no credential, no credit, valid 30 minutes, then 404.',
    },
    fileName: { description: 'Suggested download name.', example: 'bookmarks-decrypted.xbel' },
    message: { description: 'What was done, for people.' },
  },
});
