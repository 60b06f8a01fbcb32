import { Readable } from 'node:stream';
import type { Logger } from '@webutil/kit';
import type { Context, Middleware } from 'koa';
import { httpErrorFromCall } from './call-errors.js';
import type { Clients } from './clients.js';
import { HttpError } from './envelope.js';
import type { Metering } from './metering/index.js';
import { callOptions, parseInput } from './pipeline.js';
import type { DownloadSpec, FilePart } from './route-spec.js';
import { answersFromSamples, sandboxClientsFor } from './sandbox/clients.js';

/**
 * validate -> authorize (free: identify and rate-count) -> the streaming RPC -> the file. The first
 * message decides the answer: a failure before it (not found, expired, refused name) is the error
 * envelope; after it the bytes stream through with the headers it named.
 */
export function downloadHandler(spec: DownloadSpec, clients: Clients, metering: Metering, log: Logger): Middleware {
  const metered = { ...spec, credits: 0, challenge: false };
  return async (ctx) => {
    const input = await parseInput({ method: 'GET', input: spec.input }, ctx);
    const options = callOptions(ctx, spec.timeoutMs);
    // Free: authorize only identifies and rate-limits the caller; no credits are held.
    await metering.authorize(metered, ctx, options.requestId);
    let file: OpenedFile;
    try {
      // A sample's name is answered with the sandbox's fixed bytes (decision 0207).
      const called = answersFromSamples(metered, undefined, ctx.params) ? sandboxClientsFor(clients) : clients;
      file = await openFile(spec.call(called, input, options));
    } catch (err) {
      throw err instanceof HttpError ? err : httpErrorFromCall(err, spec);
    }
    sendFile(ctx, file, String(input[spec.nameParam]), spec.disposition, log, spec.cacheControl);
  };
}

export interface OpenedFile {
  /** The first message: the file's type and size, and its first bytes. */
  head: FilePart;
  rest: AsyncIterator<FilePart>;
}

/** A streamed file's first message; a failure before it (not found, expired) rejects. */
export async function openFile(parts: AsyncIterable<FilePart>): Promise<OpenedFile> {
  const rest = parts[Symbol.asyncIterator]();
  const first = await rest.next();
  if (first.done) throw new HttpError(500, 'internal_error', 'the service sent no file');
  return { head: first.value, rest };
}

/** Answers with an opened file: its type, length and name, then its bytes as they come. */
export function sendFile(
  ctx: Context,
  { head, rest }: OpenedFile,
  name: string,
  disposition: 'inline' | 'attachment',
  log: Logger,
  cacheControl = 'private, no-store',
): void {
  ctx.attachment(head.fileName || name, { type: disposition });
  ctx.type = head.contentType;
  ctx.set({
    'Content-Length': head.sizeBytes,
    // By default the file is gone in minutes and only its holder knows the name: kept out of shared caches.
    'Cache-Control': cacheControl,
    'X-Content-Type-Options': 'nosniff',
  });
  ctx.body = Readable.from(bytesOf(head, rest, ctx, log));
}

/** The file's bytes; a failure midway cuts the response short (the length tells the client it is incomplete). */
async function* bytesOf(
  head: FilePart,
  rest: AsyncIterator<FilePart>,
  ctx: Context,
  log: Logger,
): AsyncIterable<Uint8Array> {
  if (head.chunk.byteLength) yield head.chunk;
  try {
    for (let part = await rest.next(); !part.done; part = await rest.next()) {
      if (part.value.chunk.byteLength) yield part.value.chunk;
    }
  } catch (err) {
    log.warn({ requestId: ctx.state.requestId, err }, 'download broke off midway');
    throw err;
  } finally {
    await rest.return?.();
  }
}
