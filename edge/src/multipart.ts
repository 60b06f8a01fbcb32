import { clientNetwork } from '@webutil/kit';
import busboy from 'busboy';
import type { Context } from 'koa';
import { z } from 'zod';
import { clientClosed, HttpError } from './envelope.js';
import { continueBody } from './http-server.js';

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
/** A file sent without a declared length starts in a buffer this large, doubled as it grows. */
const UNDECLARED_START_BYTES = 64 * 1024;
/** When a client over its uploads in flight may try again: an upload takes a second or two. */
const UPLOAD_RETRY_AFTER_SECONDS = 2;

const MB = (bytes: number) => `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MB`;

declare module 'koa' {
  interface DefaultContext {
    /** The uploads being read or served, per client network (multipart.ts). */
    uploadsInFlight: UploadsInFlight;
  }
}

/**
 * Uploads in flight per client network (IPv4 address, IPv6 /64; the client behind a trusted
 * proxy), from admission until the response is done: each holds up to its file in memory.
 */
export class UploadsInFlight {
  private readonly open = new Map<string, number>();

  constructor(readonly maxPerClient: number) {}

  /** Counts the request's upload until its response closes; over the bound, 429 too_many_uploads. */
  admit(ctx: Context): void {
    const network = clientNetwork(String(ctx.state.clientIp ?? ''));
    const count = (this.open.get(network) ?? 0) + 1;
    if (count > this.maxPerClient)
      throw new HttpError(
        429,
        'too_many_uploads',
        `this client has ${this.maxPerClient} uploads in flight already; send the next when one is answered`,
        undefined,
        { 'Retry-After': String(UPLOAD_RETRY_AFTER_SECONDS) },
      );
    this.open.set(network, count);
    ctx.res.once('close', () => {
      const left = (this.open.get(network) ?? 1) - 1;
      if (left > 0) this.open.set(network, left);
      else this.open.delete(network);
    });
  }
}

const missingFile = (rules: UploadRules) =>
  new HttpError(
    400,
    'invalid_request',
    `${rules.field} is required: attach it as a multipart/form-data file field named "${rules.field}"`,
  );

const fileTooLarge = (rules: UploadRules) =>
  new HttpError(413, 'payload_too_large', `the file is larger than ${MB(rules.maxBytes)} (${rules.maxBytes} bytes)`);

/**
 * What an upload's headers decide, before a byte of its body is read (and before `100 Continue`):
 * a body that is not a form, a declared length over the limit, a client with too many uploads in
 * flight. The body is read by readUpload once the caller is known to be allowed to pay for it.
 */
export function admitUpload(ctx: Context, rules: UploadRules): undefined {
  if (!ctx.is('multipart/form-data')) throw missingFile(rules);
  if (Number(ctx.get('content-length') || 0) > rules.maxBytes + FORM_OVERHEAD_BYTES) throw fileTooLarge(rules);
  ctx.uploadsInFlight.admit(ctx);
  return undefined;
}

/**
 * Reads an admitted multipart/form-data body with busboy (asking for it with `100 Continue` when
 * the client waits for that), holding the file once, in one buffer, and refusing it the moment it
 * passes the limit. After a refusal the rest of the body is discarded while the answer goes out
 * and the connection closes (http-server.ts: lingering close).
 */
export function readUpload(ctx: Context, rules: UploadRules): Promise<Form> {
  const missing = missingFile(rules);
  const tooLarge = fileTooLarge(rules);
  const req = ctx.req;
  // A client that left while the call was authorized: its request's close has passed, unheard.
  if (!req.complete && (req.destroyed || req.socket.destroyed)) return Promise.reject(clientClosed());
  continueBody(req, ctx.res);

  return new Promise<Form>((resolve, reject) => {
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
      req.resume();
      reject(err);
    };
    const onClose = () => {
      if (!req.complete) fail(clientClosed());
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
      const declared = Number(req.headers['content-length'] || 0);
      const bytes = new GrowingBuffer(declared > 0 ? Math.min(declared, rules.maxBytes) : UNDECLARED_START_BYTES);
      stream.on('data', (chunk: Buffer) => bytes.append(chunk));
      stream.on('limit', () => fail(tooLarge));
      stream.on('end', () => {
        file = { name: info.filename ?? '', contentType: info.mimeType, bytes: bytes.view() };
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

/**
 * The file's bytes, copied once from the parser's chunks into one buffer: sized by the declared
 * length (at most the limit) when there is one, else grown by doubling. Keeping the chunks and
 * joining them at the end would hold the file twice.
 */
class GrowingBuffer {
  private buffer: Buffer;
  private length = 0;

  constructor(capacity: number) {
    this.buffer = Buffer.allocUnsafe(capacity);
  }

  append(chunk: Buffer): void {
    if (this.length + chunk.length > this.buffer.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.length + chunk.length));
      this.buffer.copy(grown, 0, 0, this.length);
      this.buffer = grown;
    }
    chunk.copy(this.buffer, this.length);
    this.length += chunk.length;
  }

  /** The bytes written so far (a view, not a copy). */
  view(): Buffer {
    return this.buffer.subarray(0, this.length);
  }
}

function accepted(file: UploadedFile, rules: UploadRules): boolean {
  const name = file.name.toLowerCase();
  return (
    rules.extensions.some((extension) => name.endsWith(extension)) ||
    rules.contentTypes.includes(file.contentType.toLowerCase())
  );
}
