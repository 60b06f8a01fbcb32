import { type ServiceError as GrpcServiceError, Metadata, status } from '@grpc/grpc-js';
import { ErrorInfo } from '@webutil/proto/google/rpc/error_details';
import { Status } from '@webutil/proto/google/rpc/status';

const DETAILS_KEY = 'grpc-status-details-bin';
const ERROR_INFO_TYPE = 'type.googleapis.com/google.rpc.ErrorInfo';
const DOMAIN = 'webutil';
const RETRY_AFTER = 'retry_after_seconds';

/**
 * A failure a handler means to report: a gRPC status code plus a machine reason
 * (e.g. TARGET_BLOCKED) that the edge maps to an HTTP status per route.
 */
export class ServiceError extends Error {
  constructor(
    readonly code: status,
    readonly reason: string,
    message: string,
    /** When the caller may try again (a full queue): the edge's Retry-After. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'ServiceError';
  }
}

export const invalidArgument = (reason: string, message: string) =>
  new ServiceError(status.INVALID_ARGUMENT, reason, message);
export const notFound = (reason: string, message: string) => new ServiceError(status.NOT_FOUND, reason, message);
export const failedPrecondition = (reason: string, message: string) =>
  new ServiceError(status.FAILED_PRECONDITION, reason, message);
export const deadlineExceeded = (reason: string, message: string) =>
  new ServiceError(status.DEADLINE_EXCEEDED, reason, message);
export const resourceExhausted = (reason: string, message: string, retryAfterSeconds?: number) =>
  new ServiceError(status.RESOURCE_EXHAUSTED, reason, message, retryAfterSeconds);
export const unauthenticated = (reason: string, message: string) =>
  new ServiceError(status.UNAUTHENTICATED, reason, message);
export const unavailable = (reason: string, message: string) => new ServiceError(status.UNAVAILABLE, reason, message);
export const cancelled = (reason: string, message: string) => new ServiceError(status.CANCELLED, reason, message);

/** Converts any thrown value into what grpc-js sends: code, message, and ErrorInfo details. */
export function toGrpcError(err: unknown): Partial<GrpcServiceError> {
  const e = err instanceof ServiceError ? err : new ServiceError(status.INTERNAL, 'INTERNAL', 'internal error');
  const facts: Record<string, string> = {};
  if (e.retryAfterSeconds !== undefined) facts[RETRY_AFTER] = String(e.retryAfterSeconds);
  const info = ErrorInfo.encode({ reason: e.reason, domain: DOMAIN, metadata: facts }).finish();
  const details = Status.encode({
    code: e.code,
    message: e.message,
    details: [{ typeUrl: ERROR_INFO_TYPE, value: Buffer.from(info) }],
  }).finish();
  const metadata = new Metadata();
  metadata.set(DETAILS_KEY, Buffer.from(details));
  return { code: e.code, details: e.message, metadata };
}

/** What a client learns from a failed call: the code, the message and the machine reason. */
export interface CallFailure {
  code: status;
  message: string;
  reason?: string;
  retryAfterSeconds?: number;
}

export function readGrpcError(err: unknown): CallFailure {
  const e = (err ?? {}) as Partial<GrpcServiceError>;
  const code = typeof e.code === 'number' ? e.code : status.UNKNOWN;
  const failure: CallFailure = { code, message: e.details ?? e.message ?? 'call failed' };
  const raw = typeof e.metadata?.get === 'function' ? e.metadata.get(DETAILS_KEY)[0] : undefined;
  if (raw instanceof Buffer) {
    try {
      const decoded = Status.decode(raw);
      const info = decoded.details.find((d) => d.typeUrl === ERROR_INFO_TYPE);
      if (info) {
        const errorInfo = ErrorInfo.decode(info.value);
        failure.reason = errorInfo.reason;
        const retryAfter = Number(errorInfo.metadata[RETRY_AFTER]);
        if (Number.isInteger(retryAfter) && retryAfter >= 0) failure.retryAfterSeconds = retryAfter;
      }
    } catch {
      // Undecodable details: the code and message still stand.
    }
  }
  return failure;
}
