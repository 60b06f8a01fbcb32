export { AddressPolicy, canonicalIp, CidrList } from './address-policy.js';
export { env, loadConfig, serviceEnv } from './config.js';
export {
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
  type CallFailure,
} from './errors.js';
export {
  bind,
  MAX_MESSAGE_BYTES,
  protoRoot,
  runService,
  type AnyDefinition,
  type CallContext,
  type Handlers,
  type MethodDefinition,
  type RequestOf,
  type ResponseOf,
  type RunningService,
  type ServiceBinding,
} from './grpc-server.js';
export { createLogger, type Logger } from './logger.js';
export { header, OutboundError, SafeHttp, type FetchOptions, type OutboundFailureKind, type SafeResponse } from './safe-http.js';
export { parseTargetUrl } from './target-url.js';
