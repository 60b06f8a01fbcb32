import { randomUUID } from 'node:crypto';
import { status as grpcStatus } from '@grpc/grpc-js';
import { readGrpcError, type Logger } from '@webutil/kit';
import type { Context, Middleware } from 'koa';
import { z } from 'zod';
import { HttpError } from './envelope.js';
import type { CallOptions } from './grpc-clients.js';
import type { Clients } from './clients.js';
import { authorize, type Caller } from './credits.js';

/** A success as the spec presents it: status (200 unless set), JSON body, extra headers. */
export interface Presented {
  status?: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** One public route: everything between the HTTP request and the one RPC it maps to. */
export interface RouteSpec<I = any, R = any> {
  method: 'GET' | 'POST' | 'DELETE';
  /** Path below the version prefix, in @koa/router syntax, e.g. /broken-links/crawl/:job_id. */
  path: string;
  /** Operation name, for billing and logs. */
  operation: string;
  /** Credits a success spends (spec's table); 0 for free routes. */
  credits: number;
  /**
   * Which credentials the route serves: any (default; anonymous, session or API key), session
   * (account and key management), or ip (credentials ignored: sign-in, sign-up, the challenge).
   */
  callers?: 'any' | 'session' | 'ip';
  /** Browser callers need a challenge clearance; default: when the route spends credits. */
  challenge?: boolean;
  /** Validates query (GET) or JSON body (POST), merged with path parameters. */
  input: z.ZodType<I>;
  /** Deadline handed to the service. */
  timeoutMs: number;
  call(clients: Clients, input: I, options: CallOptions, caller: Caller): Promise<R>;
  present(response: R, ctx: Context): Presented;
  /** Machine reason from the service -> HTTP status, where the spec maps it per route. */
  errors?: Record<string, number>;
}

/** Identity helper so each table row infers its own input and response types. */
export const route = <I, R>(spec: RouteSpec<I, R>): RouteSpec<I, R> => spec;

const STATUS_BY_CODE: Partial<Record<grpcStatus, [number, string, string?]>> = {
  [grpcStatus.INVALID_ARGUMENT]: [400, 'invalid_request'],
  [grpcStatus.FAILED_PRECONDITION]: [400, 'failed_precondition'],
  [grpcStatus.OUT_OF_RANGE]: [400, 'invalid_request'],
  [grpcStatus.NOT_FOUND]: [404, 'not_found'],
  [grpcStatus.ALREADY_EXISTS]: [409, 'conflict'],
  [grpcStatus.PERMISSION_DENIED]: [403, 'forbidden'],
  [grpcStatus.UNAUTHENTICATED]: [401, 'unauthenticated'],
  [grpcStatus.RESOURCE_EXHAUSTED]: [429, 'rate_limited'],
  [grpcStatus.UNIMPLEMENTED]: [501, 'not_implemented', 'this operation is not available yet'],
  [grpcStatus.UNAVAILABLE]: [503, 'service_unavailable', 'the service is temporarily unavailable; try again shortly'],
  [grpcStatus.DEADLINE_EXCEEDED]: [504, 'timeout', 'the operation took too long'],
};

/** Turns a failed RPC into the HTTP failure the route's table row and the design prescribe. */
export function httpErrorFromCall(err: unknown, spec: RouteSpec): HttpError {
  const failure = readGrpcError(err);
  const [byCode, codeName, fixedMessage] = STATUS_BY_CODE[failure.code] ?? [500, 'internal_error', 'internal error'];
  const status = (failure.reason ? spec.errors?.[failure.reason] : undefined) ?? byCode;
  const code = failure.reason && failure.reason !== 'INTERNAL' ? failure.reason.toLowerCase() : codeName;
  // Services word their reasons for callers; transport failures and crashes get a fixed message.
  const message = failure.reason && failure.reason !== 'INTERNAL' ? failure.message : (fixedMessage ?? 'internal error');
  return new HttpError(status, code, message);
}

function validationMessage(error: z.ZodError): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid request';
  return issue.message;
}

/** Parses the route's input; every failure is the spec's 400 in the envelope. */
export function parseInput<I>(spec: RouteSpec<I>, ctx: Context & { params?: Record<string, string> }): I {
  const source = spec.method === 'GET' ? ctx.query : ctx.request.body;
  if (source !== undefined && (typeof source !== 'object' || source === null || Array.isArray(source))) {
    throw new HttpError(400, 'invalid_request', 'the JSON body must be an object');
  }
  const parsed = spec.input.safeParse({ ...(source as object | undefined), ...ctx.params });
  if (!parsed.success) throw new HttpError(400, 'invalid_request', validationMessage(parsed.error));
  return parsed.data;
}

/** Aborts when the HTTP client disconnects before the response is written. */
export function clientGone(ctx: Context): AbortSignal {
  const controller = new AbortController();
  ctx.res.once('close', () => {
    if (!ctx.res.writableFinished) controller.abort();
  });
  return controller.signal;
}

/** Logged as nginx does (499); the response goes nowhere. */
const clientClosed = () => new HttpError(499, 'client_closed_request', 'the client closed the connection');

/**
 * validate -> authorize (authenticate, challenge, rate limit, hold credits) -> the one RPC ->
 * commit on success, release on any failure (service error, service down, deadline, client gone).
 */
export function handler(spec: RouteSpec, clients: Clients, log: Logger): Middleware {
  return async (ctx) => {
    // Validation comes first, so a malformed request never holds credits.
    const input = parseInput(spec, ctx);
    const options: CallOptions = { requestId: String(ctx.state.requestId ?? randomUUID()), timeoutMs: spec.timeoutMs, signal: clientGone(ctx) };
    const hold = await authorize(clients.billing, spec, ctx, options.requestId, log);
    let presented: Presented;
    try {
      const response = await spec.call(clients, input, options, hold.caller);
      // A reply nobody can receive is not a success.
      if (options.signal.aborted) throw clientClosed();
      presented = spec.present(response, ctx);
    } catch (err) {
      await hold.settle('failure');
      if (options.signal.aborted) throw clientClosed();
      if (err instanceof HttpError) throw err;
      const httpError = httpErrorFromCall(err, spec);
      if (httpError.status >= 500) log.warn({ requestId: options.requestId, operation: spec.operation, err: readGrpcError(err) }, 'service call failed');
      throw httpError;
    }
    await hold.settle('success');
    ctx.status = presented.status ?? 200;
    ctx.body = presented.body;
    if (presented.headers) ctx.set(presented.headers);
  };
}
