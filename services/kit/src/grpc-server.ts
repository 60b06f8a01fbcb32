import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { ReflectionService } from '@grpc/reflection';
import { HealthImplementation } from 'grpc-health-check';
import { serveConnect } from './connect-server.js';
import { ServiceError } from './errors.js';
import { createLogger, type Logger } from './logger.js';
import { serveMetrics } from './metrics.js';
import { protoRoot } from './proto-root.js';
import { type StreamHandler, startCall, type UnaryHandler } from './rpc-call.js';

export { protoRoot } from './proto-root.js';
export type { CallContext, StreamHandler, UnaryHandler } from './rpc-call.js';

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

// Serializers take their message as a parameter, so only `any` admits every method's types.
// biome-ignore lint/suspicious/noExplicitAny: see the line above
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
  /** The same handlers by method name, which the Connect server calls too. */
  handlers: Record<string, UnaryHandler<unknown, unknown> | StreamHandler<unknown, unknown>>;
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
  /** Also serve the Connect protocol (JSON or binary over HTTP/1.1) on this port, for internal tools. */
  connectPort?: number;
  log?: Logger;
  /** Closes the service's own resources (stores, buses) after the last call drained. */
  onShutdown?: () => Promise<void>;
}

/** The process settings every service reads from `serviceEnv` (plus its own HOST and PORT), as runService options. */
export function processOptions(config: {
  HOST: string;
  PORT: number;
  SHUTDOWN_GRACE_MS: number;
  METRICS_PORT?: number;
  CONNECT_PORT?: number;
}): Pick<RunServiceOptions, 'host' | 'port' | 'shutdownGraceMs' | 'metricsPort' | 'connectPort'> {
  return {
    host: config.HOST,
    port: config.PORT,
    shutdownGraceMs: config.SHUTDOWN_GRACE_MS,
    metricsPort: config.METRICS_PORT,
    connectPort: config.CONNECT_PORT,
  };
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
  const bound: ServiceBinding['handlers'] = {};
  for (const [method, def] of Object.entries(definition)) {
    const handler = (handlers[method as keyof D] ?? unimplemented) as
      | UnaryHandler<unknown, unknown>
      | StreamHandler<unknown, unknown>;
    bound[method] = handler;
    const rpc = def.path.split('/').pop() ?? method;
    implementation[method] = def.responseStream
      ? streamCall(rpc, handler as StreamHandler<unknown, unknown>, log)
      : unaryCall(rpc, handler as UnaryHandler<unknown, unknown>, log);
  }
  return { definition: definition as unknown as grpc.ServiceDefinition, implementation, handlers: bound };
}

const unimplemented = async (): Promise<never> => {
  throw new ServiceError(grpc.status.UNIMPLEMENTED, 'NOT_IMPLEMENTED', 'this operation is not available yet');
};

function contextOf(
  call: grpc.ServerUnaryCall<unknown, unknown> | grpc.ServerWritableStream<unknown, unknown>,
  rpc: string,
  log: Logger,
) {
  const rawDeadline = call.getDeadline();
  const started = startCall(rpc, log, {
    requestId: call.metadata.get('x-request-id')[0]?.toString(),
    deadline: rawDeadline instanceof Date ? rawDeadline.getTime() : rawDeadline,
  });
  call.on('cancelled', () => started.cancel());
  return started;
}

function unaryCall(
  rpc: string,
  handler: UnaryHandler<unknown, unknown>,
  log: Logger,
): grpc.handleUnaryCall<unknown, unknown> {
  return (call, callback) => {
    const { ctx, end } = contextOf(call, rpc, log);
    handler(call.request, ctx).then(
      (response) => {
        end();
        callback(null, response);
      },
      (err: unknown) => callback(end(err)),
    );
  };
}

function streamCall(
  rpc: string,
  handler: StreamHandler<unknown, unknown>,
  log: Logger,
): grpc.handleServerStreamingCall<unknown, unknown> {
  return (call) => {
    const { ctx, end } = contextOf(call, rpc, log);
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
        end();
        call.end();
      },
      (err: unknown) => call.emit('error', end(err)),
    );
  };
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
    // Nothing serves channelz; left on, every call pays for its counters and timestamps.
    'grpc.enable_channelz': 0,
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
  const connect =
    opts.connectPort !== undefined
      ? await serveConnect({ host: opts.host ?? '0.0.0.0', port: opts.connectPort, bindings: opts.bindings, log })
      : undefined;
  log.info({ port, connectPort: connect?.port, services: serviceNames }, 'listening');

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
      await connect?.close();
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
