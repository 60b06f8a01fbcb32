import { randomUUID } from 'node:crypto';
import { type Logger, readGrpcError } from '@webutil/kit';
import type { Context, Middleware } from 'koa';
import type { z } from 'zod';
import { httpErrorFromCall } from './call-errors.js';
import type { Clients } from './clients.js';
import { type OpenedFile, openFile, sendFile } from './downloads.js';
import { clientClosed, HttpError, setHeaders, successBody } from './envelope.js';
import { type CallOptions, NEVER_CANCELLED } from './grpc-clients.js';
import {
  claimIdempotencyKey,
  IDEMPOTENT_REPLAYED_HEADER,
  type IdempotencyClaim,
  idempotencyKeyOf,
  requestFingerprint,
  takesIdempotencyKey,
} from './idempotency.js';
import type { Metering } from './metering/index.js';
import { admitUpload, readUpload } from './multipart.js';
import { issueCode } from './rest/common.js';
import { type Presentable, presenter } from './rest/message.js';
import {
  type ExportAnswer,
  type Price,
  type RawBody,
  type RouteSpec,
  sizedCredits,
  takesJsonBody,
} from './route-spec.js';
import { answersFromSamples, sandboxClientsFor } from './sandbox/clients.js';

/**
 * Parses the route's input; every failure is a 4xx in the envelope, before anything is held. An
 * upload's comes once its body is read; any other input is parsed at once (thrown, not rejected),
 * without a promise of its own on every request.
 */
export function parseInput<In extends z.ZodObject>(
  spec: Pick<RouteSpec<In>, 'method' | 'input' | 'upload' | 'rawBody'>,
  ctx: Context & { params?: Record<string, string> },
): z.output<In> | Promise<z.output<In>> {
  if (spec.upload) return readUpload(ctx, spec.upload).then((source) => validInput(spec, ctx, source));
  if (spec.rawBody) return validInput(spec, ctx, rawInput(spec.rawBody, ctx));
  if (takesJsonBody(spec) && ctx.request.is('application/json', '+json') === false) {
    throw new HttpError(415, 'unsupported_media_type', 'send the body as JSON, with Content-Type: application/json');
  }
  return validInput(spec, ctx, spec.method === 'GET' ? ctx.query : ctx.request.body);
}

/** A raw body's input: the body as read (app.ts's rawBody), and the headers the route names. */
function rawInput(rules: RawBody, ctx: Context): Record<string, string | undefined> {
  const input: Record<string, string | undefined> = { payload: ctx.state.rawBody as string | undefined };
  for (const [field, header] of Object.entries(rules.headers)) input[field] = ctx.get(header) || undefined;
  return input;
}

function validInput<In extends z.ZodObject>(
  spec: Pick<RouteSpec<In>, 'input'>,
  ctx: Context & { params?: Record<string, string> },
  source: unknown,
): z.output<In> {
  if (source !== undefined && (typeof source !== 'object' || source === null || Array.isArray(source))) {
    throw new HttpError(400, 'invalid_request', 'the JSON body must be an object');
  }
  const parsed = spec.input.safeParse({ ...(source as object | undefined), ...ctx.params });
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new HttpError(400, (issue && issueCode(issue)) ?? 'invalid_request', issue?.message ?? 'invalid request');
}

/**
 * The HTTP client has hung up: its socket closed, or it sent its FIN ('end'), which comes before
 * the close (a client that hung up while its body was read has closed the socket already).
 */
export function clientLeft(ctx: Context): boolean {
  const socket = ctx.req.socket;
  return socket.destroyed || socket.readableEnded;
}

/** Aborts when the HTTP client disconnects before the response is written. */
export function clientGone(ctx: Context): AbortSignal {
  const controller = new AbortController();
  if (clientLeft(ctx)) {
    controller.abort();
    return controller.signal;
  }
  const socket = ctx.req.socket;
  const gone = () => {
    if (!ctx.res.writableFinished) controller.abort();
  };
  socket.once('end', gone);
  ctx.res.once('close', () => {
    socket.off('end', gone);
    gone();
  });
  return controller.signal;
}

/**
 * The service call's options; the client-gone signal is made when the call first reads it (a
 * quota read answered by the edge itself never does), and then already aborted if the client left.
 * With `withdraw`, a client leaving does not cancel the call once made: it asks for the withdrawal.
 */
class RouteCallOptions implements CallOptions {
  private watched: AbortSignal | undefined;

  constructor(
    private readonly ctx: Context,
    readonly requestId: string,
    readonly timeoutMs: number,
    private readonly withdraw?: (requestId: string) => Promise<unknown>,
  ) {}

  get signal(): AbortSignal {
    this.watched ??= this.watch();
    return this.watched;
  }

  get publicBaseUrl(): string {
    return this.ctx.publicBaseUrl;
  }

  private watch(): AbortSignal {
    const gone = clientGone(this.ctx);
    const { withdraw, requestId } = this;
    if (!withdraw || gone.aborted) return gone;
    gone.addEventListener('abort', () => void withdraw(requestId).catch(() => undefined), { once: true });
    return NEVER_CANCELLED;
  }
}

export function callOptions(
  ctx: Context,
  timeoutMs: number,
  withdraw?: (requestId: string) => Promise<unknown>,
): CallOptions {
  return new RouteCallOptions(ctx, String(ctx.state.requestId ?? randomUUID()), timeoutMs, withdraw);
}

/**
 * validate -> authorize (authenticate, challenge, rate limit, hold credits) -> [read the upload]
 * -> [claim the Idempotency-Key: a retry of a call that succeeded gets its answer, nothing spent]
 * -> the one RPC (a route priced by size holds its sized price once the call has read its input,
 * before it creates anything: decision 0351) -> present -> commit on success, before answering
 * (even if the client left once the service had done the work), release on any failure (a refused
 * upload body, service error, service down, deadline, a client gone before the work was done).
 */
export function handler(spec: RouteSpec, clients: Clients, metering: Metering, log: Logger): Middleware {
  const present = presenter(spec.output);
  const envelope = spec.envelope ?? 'data';
  const idempotent = takesIdempotencyKey(spec);
  const sampled = sandboxClientsFor(clients);
  return async (ctx) => {
    // Validation comes first, so a malformed request never holds credits. An upload is judged by
    // its headers here; its body is read only once the caller may pay for it.
    const input = spec.upload ? admitUpload(ctx, spec.upload) : await parseInput(spec, ctx);
    const format = spec.exports && exportFormat(ctx, spec.exports, spec.exportOnly);
    const idempotencyKey = idempotent ? idempotencyKeyOf(ctx) : undefined;
    const { withdraw } = spec;
    // The clients the call is made with: the services', or the sandbox's samples (decision 0207).
    let called = clients;
    const options = callOptions(ctx, spec.timeoutMs, withdraw && ((id) => withdraw(called, id)));
    let hold = await metering.authorize(spec, ctx, options.requestId);
    // A route priced by size holds its first block's price until the call has read its input.
    // A job that settles its own price (decision 0490) gets the hold's name; the hold is handed to it.
    let jobHold: string | undefined;
    const price: Price = async (units, job) => {
      if (!spec.perBlock) throw new Error(`${spec.operation} has no price by size`);
      hold = await metering.reprice(hold, spec, ctx, options.requestId, sizedCredits(spec, units), job?.holdMs);
      jobHold = job ? hold.ownReservation : undefined;
      return jobHold === undefined ? undefined : { reservationId: jobHold };
    };
    const sandbox = answersFromSamples(spec, hold.caller, ctx.params);
    if (sandbox) called = sampled;
    let body: object;
    let file: { opened: OpenedFile; name: string } | undefined;
    let exported: ReturnType<ExportAnswer['render']> | undefined;
    let headers: Record<string, string> | undefined;
    let claim: IdempotencyClaim | undefined;
    let target: string | undefined;
    try {
      const parsed = input ?? (await parseInput(spec, ctx));
      target = usageTarget(parsed);
      // A sandbox answer is the same on every call: a retry needs nothing kept to be answered alike.
      if (idempotencyKey !== undefined && !sandbox) {
        // Claimed once the caller is known (its keys are its own) and its request read whole.
        const fingerprint = requestFingerprint(spec.operation, parsed);
        const outcome = await claimIdempotencyKey(
          clients.billing,
          hold.caller,
          idempotencyKey,
          fingerprint,
          spec,
          options.requestId,
        );
        if ('replay' in outcome) {
          // The first call's answer; this one spends nothing. A format asked for is rendered from it.
          hold.release();
          ctx.status = outcome.replay.status;
          ctx.set(outcome.replay.headers);
          ctx.set(IDEMPOTENT_REPLAYED_HEADER, 'true');
          if (format && spec.exports) {
            const kept = JSON.parse(outcome.replay.body) as Record<string, unknown>;
            sendExport(ctx, spec.exports.render(format, envelope === 'data' ? kept.data : kept, parsed));
          } else {
            ctx.type = 'application/json';
            ctx.body = outcome.replay.body;
          }
          return;
        }
        claim = outcome.claim;
      }
      const reply = await spec.call(called, parsed, options, hold.caller, price);
      headers = spec.headers?.(reply, ctx);
      // Presented even when the answer is the file: an idempotent retry replays this JSON answer.
      const fields = present((spec.present ? spec.present(reply, ctx) : reply) as Presentable<unknown>);
      body = successBody(fields, envelope);
      // Rendered before the call is billed: an export that cannot be had (a crawl not done) spends nothing.
      if (format && spec.exports) exported = spec.exports.render(format, fields, parsed);
      if (spec.file && acceptsExactly(ctx, spec.file.contentType(reply))) {
        // The file is opened before the render is billed: a caller who gets no file pays nothing.
        file = { opened: await openFile(spec.file.read(called, reply, options)), name: spec.file.name(reply) };
        headers = { ...headers, ...spec.file.headers(reply) };
      }
    } catch (err) {
      hold.release();
      claim?.free();
      if (clientLeft(ctx)) throw clientClosed();
      if (err instanceof HttpError) throw err;
      const httpError = httpErrorFromCall(err, spec);
      if (httpError.status >= 500)
        log.warn(
          { requestId: options.requestId, operation: spec.operation, err: readGrpcError(err) },
          'service call failed',
        );
      throw httpError;
    }
    // The service did the work (a job created, a file written): it is billed even when the
    // client has left meanwhile. A client that left earlier had its call cancelled (or its work
    // withdrawn) instead. Billed before the answer goes out (decision 0255): a success billing
    // did not record is a 503, its credits returned and its work withdrawn.
    try {
      // A hold handed to the job is the job's to settle when it ends; any other is spent now.
      if (jobHold === undefined || hold.handOver?.() !== jobHold) await hold.settle(target);
    } catch (err) {
      claim?.free();
      void file?.opened.rest.return?.().catch(() => undefined);
      if (withdraw) void withdraw(clients, options.requestId).catch(() => undefined);
      throw err;
    }
    if (claim) {
      // Kept once charged and before the answer goes out, so a retry that follows it is replayed,
      // never run again, and never replays a call that was not charged.
      await claim
        .keep(spec.status ?? 200, body, headers)
        .catch((err: unknown) =>
          log.warn({ requestId: options.requestId, err: readGrpcError(err) }, 'keeping an idempotent answer failed'),
        );
    }
    if (clientLeft(ctx)) throw clientClosed();
    ctx.status = spec.status ?? 200;
    if (headers) setHeaders(ctx, headers);
    if (file) sendFile(ctx, file.opened, file.name, 'inline', log);
    else if (exported) sendExport(ctx, exported);
    else ctx.body = body;
  };
}

/** What a call worked on, for the account's usage: its `url` or `domain` field, when it has one. */
function usageTarget(input: unknown): string | undefined {
  if (typeof input !== 'object' || input === null) return undefined;
  const { url, domain } = input as { url?: unknown; domain?: unknown };
  return typeof url === 'string' ? url : typeof domain === 'string' ? domain : undefined;
}

/**
 * The `format` query parameter of a route with exports: absent (unless `required`, on an export
 * operation), or one of its formats (a 400 before anything is held otherwise).
 */
export function exportFormat(
  ctx: Context,
  exports: Pick<ExportAnswer, 'formats'>,
  required = false,
): string | undefined {
  const value = ctx.query.format;
  if (value === undefined && !required) return undefined;
  if (typeof value !== 'string' || !exports.formats.includes(value))
    throw new HttpError(400, 'invalid_format', `format must be one of ${exports.formats.join(', ')}`);
  return value;
}

/** An export as a download: its type, a file name, kept out of shared caches. */
function sendExport(ctx: Context, file: ReturnType<ExportAnswer['render']>): void {
  ctx.attachment(file.fileName);
  ctx.type = file.contentType;
  ctx.set({ 'Cache-Control': 'private, no-store', 'X-Content-Type-Options': 'nosniff' });
  ctx.body = file.body;
}

/**
 * The Accept header names this content type itself (not a wildcard) with a non-zero quality: a
 * client that asks for `image/png` gets the bytes; a wildcard or no Accept keeps the JSON answer.
 */
export function acceptsExactly(ctx: Context, type: string): boolean {
  const accept = ctx.get('accept');
  if (!accept) return false;
  return accept.split(',').some((entry) => {
    const [name, ...params] = entry.split(';').map((part) => part.trim().toLowerCase());
    const q = params.find((param) => param.startsWith('q='));
    return name === type && (q === undefined || Number(q.slice(2)) > 0);
  });
}
