/** The bookmark service's XBEL routes: a multipart upload in, a download link out. */
import { z } from 'zod';
import { type UploadRules, uploadedFile } from '../multipart.js';

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

export const xbelDecryptInput = z.object({
  file: xbelFile,
  // A password is taken as typed: no trimming.
  key: z
    .string({ error: 'key is required' })
    .min(1, 'key is required')
    .meta({ description: 'The passphrase the file was encrypted with; required even for a plain file.' }),
});

export const XbelResult = z
  .strictObject({
    downloadUrl: z.url().meta({
      description: 'Absolute URL of the output file: no credential, no credit, valid 30 minutes, then 404.',
    }),
    fileName: z.string().meta({ description: 'Suggested download name.', example: 'bookmarks-decrypted.xbel' }),
    message: z.string().meta({ description: 'What was done, for people.' }),
  })
  .meta({ id: 'XbelResult' });
