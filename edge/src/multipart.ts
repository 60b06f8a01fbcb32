import type { IncomingMessage } from 'node:http';
import busboy from 'busboy';
import type { Context } from 'koa';
import { z } from 'zod';
import { HttpError } from './envelope.js';

/** What a route accepts as its one uploaded file. */
export interface UploadRules {
  /** The form field holding the file. */
  field: string;
  maxBytes: number;
  /** A file is accepted when its name ends with one of these (any case) ... */
  extensions: string[];
  /** ... or when it was sent with one of these content types. */
  contentTypes: string[];
}

export interface UploadedFile {
  /** As the client named it; possibly empty. */
  name: string;
  contentType: string;
  bytes: Buffer;
}

/** The uploaded file in a route's input schema; in the contract, a binary form field. */
export const uploadedFile = (description: string) =>
  z
    .custom<UploadedFile>((value) => value instanceof Object && Buffer.isBuffer((value as UploadedFile).bytes))
    .meta({
      type: 'string',
      format: 'binary',
      description,
    });

/** The form: the file under its field name, and the text fields. */
export type Form = Record<string, string | UploadedFile>;

/** Room for the multipart framing and the text fields around the file. */
const FORM_OVERHEAD_BYTES = 64 * 1024;
const MAX_FIELD_BYTES = 8 * 1024;
const MAX_PARTS = 16;
/**
 * After a refusal the rest of the body is read and thrown away, up to this much, so that the
 * client finishes sending and reads the answer (closing on a client still sending makes its
 * HTTP library report a broken connection instead of the 413); past it the connection is cut.
 */
const DISCARD_BYTES = 16 * 1024 * 1024;

const MB = (bytes: number) => `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MB`;

/**
 * Reads a multipart/form-data body with busboy, holding at most the file's limit in memory: a
 * declared length over the limit is refused before the body is parsed, and a streamed file is
 * refused the moment it passes the limit; either way the rest is discarded unparsed (bounded).
 */
export function readUpload(ctx: Context, rules: UploadRules): Promise<Form> {
  const missing = new HttpError(
    400,
    'invalid_request',
    `${rules.field} is required: attach it as a multipart/form-data file field named "${rules.field}"`,
  );
  if (!ctx.is('multipart/form-data')) return Promise.reject(missing);
  const tooLarge = new HttpError(
    413,
    'payload_too_large',
    `the file is larger than ${MB(rules.maxBytes)} (${rules.maxBytes} bytes)`,
  );
  if (Number(ctx.get('content-length') || 0) > rules.maxBytes + FORM_OVERHEAD_BYTES) {
    discardRest(ctx.req);
    return Promise.reject(tooLarge);
  }

  return new Promise<Form>((resolve, reject) => {
    const req = ctx.req;
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers,
        // Browsers send file names as raw UTF-8.
        defParamCharset: 'utf8',
        limits: {
          fileSize: rules.maxBytes,
          files: 1,
          fields: MAX_PARTS,
          parts: MAX_PARTS,
          fieldSize: MAX_FIELD_BYTES,
        },
      });
    } catch {
      reject(new HttpError(400, 'invalid_request', 'the multipart/form-data body has no boundary'));
      return;
    }
    const fields: Record<string, string> = {};
    let file: UploadedFile | undefined;
    let settled = false;
    const fail = (err: HttpError) => {
      if (settled) return;
      settled = true;
      req.unpipe(parser);
      discardRest(req);
      reject(err);
    };
    const onClose = () => {
      if (!req.complete) fail(new HttpError(499, 'client_closed_request', 'the client closed the connection'));
    };

    parser.on('file', (name, stream, info) => {
      // Refused at its first byte: a file under another name would otherwise be read without limit.
      // (A second file is busboy's filesLimit.)
      if (name !== rules.field) {
        stream.resume();
        fail(
          new HttpError(
            400,
            'invalid_request',
            `unexpected file field ${JSON.stringify(name)}: send the file in the field "${rules.field}"`,
          ),
        );
        return;
      }
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('limit', () => fail(tooLarge));
      stream.on('end', () => {
        file = { name: info.filename ?? '', contentType: info.mimeType, bytes: Buffer.concat(chunks) };
      });
    });
    parser.on('field', (name, value, info) => {
      if (info.valueTruncated)
        fail(new HttpError(400, 'invalid_request', `${name} is longer than ${MAX_FIELD_BYTES} bytes`));
      else fields[name] = value;
    });
    for (const event of ['partsLimit', 'filesLimit', 'fieldsLimit'] as const) {
      parser.on(event, () =>
        fail(new HttpError(400, 'invalid_request', `the form has more than ${MAX_PARTS} fields or more than one file`)),
      );
    }
    parser.on('error', (err: Error) =>
      fail(new HttpError(400, 'invalid_request', `the multipart/form-data body is malformed: ${err.message}`)),
    );
    parser.on('close', () => {
      req.off('close', onClose);
      if (settled) return;
      settled = true;
      // A browser sends an empty file input as a nameless, empty part.
      if (!file || (file.name === '' && file.bytes.length === 0)) reject(missing);
      else if (!accepted(file, rules))
        reject(
          new HttpError(
            400,
            'invalid_request',
            `${rules.field} must have the ${rules.extensions.join(' or ')} extension ` +
              `or be sent as ${rules.contentTypes.join(' or ')}`,
          ),
        );
      else resolve({ ...fields, [rules.field]: file });
    });
    req.once('close', onClose);
    req.pipe(parser);
  });
}

function accepted(file: UploadedFile, rules: UploadRules): boolean {
  const name = file.name.toLowerCase();
  return (
    rules.extensions.some((extension) => name.endsWith(extension)) ||
    rules.contentTypes.includes(file.contentType.toLowerCase())
  );
}

function discardRest(req: IncomingMessage): void {
  let discarded = 0;
  req.on('data', (chunk: Buffer) => {
    discarded += chunk.length;
    if (discarded > DISCARD_BYTES) req.destroy();
  });
  req.resume();
}
