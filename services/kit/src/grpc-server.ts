import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import { HealthImplementation } from 'grpc-health-check';
import { ServiceError, toGrpcError } from './errors.js';
import { createLogger, type Logger } from './logger.js';
import { observeRpc, serveMetrics } from './metrics.js';

/** What every handler receives besides its request. */
export interface CallContext {
  /** Crosses edge -> service in the x-request-id metadata. */
  requestId: string;
  log: Logger;
  /** Aborts when the caller cancels or the call's deadline passes. */
  signal: AbortSignal;
  /** Epoch milliseconds, or Infinity when the caller set no deadline. */
  deadline: number;
}

export type UnaryHandler<Req, Res> = (request: Req, ctx: CallContext) => Promise<Res>;
export type StreamHandler<Req, Res> = (
  request: Req,
  ctx: CallContext,
  send: (message: Res) => Promise<void>,
) => Promise<void>;

/** The shape ts-proto emits for one method of a grpc-js service definition. */
export interface MethodDefinition<Req, Res, RS extends boolean = boolean> {
  path: string;
  requestStream: false;
  responseStream: RS;
  requestSerialize: (value: Req) => Buffer;
  requestDeserialize: (value: Buffer) => Req;
  responseSerialize: (value: Res) => Buffer;
  responseDeserialize: (value: Buffer) => Res;
}

// biome-ignore lint/suspicious/noExplicitAny: serializers take their message as a parameter, so only `any` admits every method's types
export type AnyDefinition = Record<string, MethodDefinition<any, any>>;
export type RequestOf<M> = M extends MethodDefinition<infer Q, infer _R> ? Q : never;
export type ResponseOf<M> = M extends MethodDefinition<infer _Q, infer R> ? R : never;

/** One handler per RPC: unary RPCs return the response, server-streaming RPCs send messages. */
export type Handlers<D extends AnyDefinition> = {
  [K in keyof D]: D[K]['responseStream'] extends true
    ? StreamHandler<RequestOf<D[K]>, ResponseOf<D[K]>>
    : UnaryHandler<RequestOf<D[K]>, ResponseOf<D[K]>>;
};

export interface ServiceBinding {
  definition: grpc.ServiceDefinition;
  implementation: grpc.UntypedServiceImplementation;
}

export interface RunServiceOptions {
  /** Process name used in logs, health and metrics, e.g. "meta-scan". */
  name: string;
  host?: string;
  port: number;
  /** Paths under proto/ of the contracts served, for server reflection. */
  protoFiles: string[];
  bindings: ServiceBinding[];
  shutdownGraceMs?: number;
  metricsPort?: number;
  log?: Logger;
  /** Closes the service's own resources (stores, buses) after the last call drained. */
  onShutdown?: () => Promise<void>;
}

export interface RunningService {
  port: number;
  log: Logger;
  /** Graceful stop: readiness goes NOT_SERVING, in-flight calls drain, then resources close. */
  stop(): Promise<void>;
}

export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/**
 * Binds handlers to a ts-proto service definition, with deadlines, cancellation, logs and error
 * mapping. An RPC without a handler (its issue not built yet) answers UNIMPLEMENTED.
 */
export function bind<D extends AnyDefinition>(
  definition: D,
  handlers: Partial<Handlers<D>>,
  log: Logger,
): ServiceBinding {
  const implementation: grpc.UntypedServiceImplementation = {};
  for (const [method, def] of Object.entries(definition)) {
    const handler = (handlers[method as keyof D] ?? unimplemented) as
      | UnaryHandler<unknown, unknown>
      | StreamHandler<unknown, unknown>;
    const rpc = def.path.split('/').pop() ?? method;
    implementation[method] = def.responseStream
      ? streamCall(rpc, handler as StreamHandler<unknown, unknown>, log)
      : unaryCall(rpc, handler as UnaryHandler<unknown, unknown>, log);
  }
  return { definition: definition as unknown as grpc.ServiceDefinition, implementation };
}

const unimplemented = async (): Promise<never> => {
  throw new ServiceError(grpc.status.UNIMPLEMENTED, 'NOT_IMPLEMENTED', 'this operation is not available yet');
};

function contextOf(
  call: grpc.ServerUnaryCall<unknown, unknown> | grpc.ServerWritableStream<unknown, unknown>,
  rpc: string,
  log: Logger,
) {
  const requestId = String(call.metadata.get('x-request-id')[0] ?? randomUUID());
  const controller = new AbortController();
  const rawDeadline = call.getDeadline();
  const deadline = rawDeadline instanceof Date ? rawDeadline.getTime() : rawDeadline;
  let timer: NodeJS.Timeout | undefined;
  if (Number.isFinite(deadline)) {
    timer = setTimeout(
      () => controller.abort(new ServiceError(grpc.status.DEADLINE_EXCEEDED, 'DEADLINE_EXCEEDED', 'deadline exceeded')),
      Math.max(0, deadline - Date.now()),
    );
  }
  call.on('cancelled', () =>
    controller.abort(new ServiceError(grpc.status.CANCELLED, 'CANCELLED', 'cancelled by caller')),
  );
  const ctx: CallContext = { requestId, log: log.child({ requestId, rpc }), signal: controller.signal, deadline };
  return { ctx, done: () => clearTimeout(timer) };
}

function finish(ctx: CallContext, rpc: string, started: number, err: unknown): Partial<grpc.ServiceError> | null {
  const ms = performance.now() - started;
  if (err === undefined) {
    observeRpc(rpc, 'OK', ms);
    ctx.log.info({ ms: Math.round(ms), code: 'OK' }, 'rpc done');
    return null;
  }
  const failure = toGrpcError(err);
  const codeName = grpc.status[failure.code ?? grpc.status.UNKNOWN] ?? 'UNKNOWN';
  observeRpc(rpc, codeName, ms);
  if (err instanceof ServiceError)
    ctx.log.info({ ms: Math.round(ms), code: codeName, reason: err.reason }, 'rpc failed');
  else ctx.log.error({ ms: Math.round(ms), code: codeName, err }, 'rpc crashed');
  return failure;
}

function unaryCall(
  rpc: string,
  handler: UnaryHandler<unknown, unknown>,
  log: Logger,
): grpc.handleUnaryCall<unknown, unknown> {
  return (call, callback) => {
    const started = performance.now();
    const { ctx, done } = contextOf(call, rpc, log);
    handler(call.request, ctx).then(
      (response) => {
        done();
        finish(ctx, rpc, started, undefined);
        callback(null, response);
      },
      (err: unknown) => {
        done();
        callback(finish(ctx, rpc, started, err));
      },
    );
  };
}

function streamCall(
  rpc: string,
  handler: StreamHandler<unknown, unknown>,
  log: Logger,
): grpc.handleServerStreamingCall<unknown, unknown> {
  return (call) => {
    const started = performance.now();
    const { ctx, done } = contextOf(call, rpc, log);
    // A cancelled call never drains: the send that waits for it fails with the cancellation instead.
    const send = (message: unknown) =>
      new Promise<void>((resolve, reject) => {
        if (ctx.signal.aborted) return reject(ctx.signal.reason);
        if (call.write(message)) return resolve();
        const settle = () => {
          call.off('drain', settle);
          ctx.signal.removeEventListener('abort', settle);
          if (ctx.signal.aborted) reject(ctx.signal.reason);
          else resolve();
        };
        call.once('drain', settle);
        ctx.signal.addEventListener('abort', settle, { once: true });
      });
    handler(call.request, ctx, send).then(
      () => {
        done();
        finish(ctx, rpc, started, undefined);
        call.end();
      },
      (err: unknown) => {
        done();
        call.emit('error', finish(ctx, rpc, started, err));
      },
    );
  };
}

/** Directory holding the .proto sources, shipped for server reflection. */
export function protoRoot(): string {
  const require = createRequire(import.meta.url);
  return path.dirname(require.resolve('@webutil/proto/package.json'));
}

/**
 * Starts a gRPC server with the standard health service (overall, `liveness`, `readiness` and
 * one entry per served service) and server reflection, and stops it gracefully on SIGTERM/SIGINT.
 */
export async function runService(opts: RunServiceOptions): Promise<RunningService> {
  const log = opts.log ?? createLogger(opts.name);
  const server = new grpc.Server({
    'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
    'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
  });
  const serviceNames = opts.bindings.map((b) => Object.values(b.definition)[0]?.path.split('/')[1] ?? '');
  const health = new HealthImplementation({
    '': 'SERVING',
    liveness: 'SERVING',
    readiness: 'SERVING',
    ...Object.fromEntries(serviceNames.map((s) => [s, 'SERVING'])),
  });
  health.addToServer(server);
  const definitions = protoLoader.loadSync(opts.protoFiles, {
    includeDirs: [protoRoot()],
    keepCase: false,
    longs: String,
    enums: String,
    defaults: true,
  });
  new ReflectionService(definitions).addToServer(server);
  for (const b of opts.bindings) server.addService(b.definition, b.implementation);

  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(`${opts.host ?? '0.0.0.0'}:${opts.port}`, grpc.ServerCredentials.createInsecure(), (err, bound) =>
      err ? reject(err) : resolve(bound),
    ),
  );
  const metrics = opts.metricsPort !== undefined ? await serveMetrics(opts.metricsPort) : undefined;
  log.info({ port, services: serviceNames }, 'listening');

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      log.info('shutting down: draining in-flight calls');
      health.setStatus('readiness', 'NOT_SERVING');
      health.setStatus('', 'NOT_SERVING');
      await new Promise<void>((resolve) => {
        const force = setTimeout(() => {
          log.warn('grace period over: cancelling remaining calls');
          server.forceShutdown();
          resolve();
        }, opts.shutdownGraceMs ?? 10_000);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      });
      metrics?.close();
      await opts.onShutdown?.();
      log.info('stopped');
    })());
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      void stop().then(() => process.exit(0));
    });
  }
  return { port, log, stop };
}
