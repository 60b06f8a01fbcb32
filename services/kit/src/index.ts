export { AddressPolicy, CidrList, canonicalIp, clientNetwork } from './address-policy.js';
export { CallerSlots } from './caller-slots.js';
export { env, loadConfig, serviceEnv } from './config.js';
export {
  type CallFailure,
  cancelled,
  deadlineExceeded,
  failedPrecondition,
  invalidArgument,
  notFound,
  readGrpcError,
  resourceExhausted,
  ServiceError,
  toGrpcError,
  unauthenticated,
  unavailable,
} from './errors.js';
export { type Admission, FairQueue, type Sharer } from './fair-queue.js';
export { exitOnFatalErrors, FATAL_EXIT_CODE } from './fatal-errors.js';
export {
  type AnyDefinition,
  bind,
  type CallContext,
  type Handlers,
  MAX_MESSAGE_BYTES,
  type MethodDefinition,
  processOptions,
  protoRoot,
  type RequestOf,
  type ResponseOf,
  type RunningService,
  runService,
  type ServiceBinding,
} from './grpc-server.js';
export { header } from './http-header.js';
export { letterGrade } from './letter-grade.js';
export { createLogger, type Logger } from './logger.js';
export { counter, gauge, histogram, serveMetrics } from './metrics.js';
export { moduleWorker } from './module-worker.js';
export { type LookupHost, lookupVia, resolveTarget, targetFailure } from './resolve-target.js';
export { accountSubject, REVOCATIONS_SUBJECT } from './revocations.js';
export {
  type ConnectionPhases,
  type FetchOptions,
  type OriginHeaders,
  OutboundError,
  type OutboundFailureKind,
  outboundError,
  SafeHttp,
  type SafeResponse,
} from './safe-http.js';
export { type CallOptions, connectService, type ServiceClient, serviceConfig } from './service-client.js';
export { type AddedColumn, type SqliteDatabase, setUpSqlite } from './sqlite.js';
export { parseTargetHost, type TargetHost } from './target-host.js';
export { parseTargetUrl } from './target-url.js';
