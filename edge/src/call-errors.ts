import { status as grpcStatus } from '@grpc/grpc-js';
import { readGrpcError } from '@webutil/kit';
import { type Denial, Refusal } from '@webutil/proto/webutil/billing/v1/billing';
import type { Context } from 'koa';
import { cookie, SESSION_COOKIE } from './caller.js';
import { HttpError, setCredits, setRateLimit } from './envelope.js';
import type { RouteSpec } from './route-spec.js';

/** A gRPC status -> HTTP status and code, when the route's row does not say otherwise (decision 0001). */
export const STATUS_BY_CODE: Partial<Record<grpcStatus, [number, string, string?]>> = {
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

/**
 * Retry-After for a service that is unavailable and gave no figure of its own: a replaced process
 * is serving again within a few seconds (docs/decisions/0103-crash-policy.md).
 */
export const UNAVAILABLE_RETRY_AFTER_S = 5;

/** Turns a failed RPC into the HTTP failure the route's table row and the design prescribe. */
export function httpErrorFromCall(err: unknown, spec: Pick<RouteSpec, 'errors'>): HttpError {
  const failure = readGrpcError(err);
  // Services word their reasons for callers; transport failures and crashes get a fixed code and message.
  const reason = failure.reason !== 'INTERNAL' ? failure.reason : undefined;
  // A service that is full says so with a reason; without one, RESOURCE_EXHAUSTED is grpc-js's own
  // (a reply over the message size limit): our failure, not the caller's rate.
  const transportLimit = failure.code === grpcStatus.RESOURCE_EXHAUSTED && !reason;
  const [byCode, codeName, fixedMessage] = (!transportLimit && STATUS_BY_CODE[failure.code]) || [
    500,
    'internal_error',
    'internal error',
  ];
  const code = reason ? reason.toLowerCase() : codeName;
  const message = reason ? failure.message : (fixedMessage ?? 'internal error');
  // A service that says when to come back (a full queue) is quoted in Retry-After; a service that
  // cannot answer at all (down, restarting) gets the edge's own figure.
  const retryAfter =
    failure.retryAfterSeconds ?? (failure.code === grpcStatus.UNAVAILABLE ? UNAVAILABLE_RETRY_AFTER_S : undefined);
  const headers: Record<string, string> = retryAfter === undefined ? {} : { 'Retry-After': String(retryAfter) };
  return new HttpError(spec.errors?.[code] ?? byCode, code, message, undefined, headers);
}

const STATUS_BY_REFUSAL: Record<Refusal, number> = {
  [Refusal.REFUSAL_UNAUTHENTICATED]: 401,
  [Refusal.REFUSAL_FORBIDDEN]: 403,
  [Refusal.REFUSAL_INSUFFICIENT_CREDITS]: 402,
  [Refusal.REFUSAL_RATE_LIMITED]: 429,
  [Refusal.REFUSAL_UNSPECIFIED]: 403,
  [Refusal.UNRECOGNIZED]: 403,
};

/** A billing refusal as the HTTP failure, with X-Credits-Remaining, Retry-After and creditsRequired. */
export function httpErrorFromDenial(ctx: Context, denial: Denial | undefined, creditsRequired: number): HttpError {
  // Without a known caller the header is left to the credits-header middleware.
  if (denial?.remaining !== undefined) setCredits(ctx, denial.remaining);
  if (denial?.rate) setRateLimit(ctx, denial.rate);
  if (!denial) return new HttpError(500, 'internal_error', 'internal error');
  const status = STATUS_BY_REFUSAL[denial.refusal];
  const headers: Record<string, string> = {};
  if (status === 429 && denial.retryAfterSeconds !== undefined)
    headers['Retry-After'] = String(denial.retryAfterSeconds);
  // A cookie whose session ended is dropped so the browser stops sending it.
  if (denial.reason === 'INVALID_SESSION') headers['Set-Cookie'] = cookie(ctx, SESSION_COOKIE, '', 0);
  return new HttpError(
    status,
    denial.reason.toLowerCase(),
    denial.message,
    status === 402 ? creditsRequired : undefined,
    headers,
  );
}
