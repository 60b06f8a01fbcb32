import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createFileRegistry, type DescMethod, fromBinary, type Registry, toBinary } from '@bufbuild/protobuf';
import { FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';
import { ConnectError, type ConnectRouter, type HandlerContext } from '@connectrpc/connect';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import type * as grpc from '@grpc/grpc-js';
import { readGrpcError } from './errors.js';
import type { ServiceBinding } from './grpc-server.js';
import type { Logger } from './logger.js';
import { protoRoot } from './proto-root.js';
import { type StartedCall, type StreamHandler, startCall, type UnaryHandler } from './rpc-call.js';

/**
 * The Connect protocol beside gRPC, for internal tools: JSON (or binary protobuf) over HTTP/1.1,
 *   curl -H 'content-type: application/json' -d '{}' http://<host>:<CONNECT_PORT>/<package.Service>/<Method>
 * It calls the very handlers gRPC calls. Connect speaks protobuf-es messages, described by the
 * descriptor set the build generates from the same protos (proto/gen/descriptors.binpb); they cross
 * to the handlers' ts-proto messages by their binary encoding, which both read and write.
 */
export async function serveConnect(options: {
  host: string;
  port: number;
  bindings: ServiceBinding[];
  log: Logger;
}): Promise<{ port: number; close(): Promise<void> }> {
  const registry = createFileRegistry(
    fromBinary(FileDescriptorSetSchema, readFileSync(path.join(protoRoot(), 'gen/descriptors.binpb'))),
  );
  const routes = (router: ConnectRouter) => {
    for (const binding of options.bindings) addService(router, registry, binding, options.log);
  };
  const server = http.createServer(connectNodeAdapter({ routes, readMaxBytes: 64 * 1024 * 1024 }));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      server.closeIdleConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

function addService(router: ConnectRouter, registry: Registry, binding: ServiceBinding, log: Logger): void {
  const methods = Object.entries(binding.definition);
  const serviceName = methods[0]?.[1].path.split('/')[1] ?? '';
  const service = registry.getService(serviceName);
  if (!service) throw new Error(`the descriptor set has no service ${serviceName}: rebuild proto/`);
  const implementation: Record<string, unknown> = {};
  for (const [key, definition] of methods) {
    const method = service.methods.find((m) => definition.path === `/${serviceName}/${m.name}`);
    const handler = binding.handlers[key];
    if (!method || !handler) continue;
    const request = (message: Parameters<typeof toBinary>[1]) =>
      definition.requestDeserialize(Buffer.from(toBinary(method.input, message)));
    const response = (message: unknown) => fromBinary(method.output, definition.responseSerialize(message));
    implementation[method.localName] = definition.responseStream
      ? streamMethod(method, handler as StreamHandler<unknown, unknown>, request, response, log)
      : unaryMethod(method, handler as UnaryHandler<unknown, unknown>, request, response, log);
  }
  // Built method by method from the descriptor set, so its type is only known at run time.
  router.service(service, implementation as Parameters<ConnectRouter['service']>[1]);
}

type ToHandler = (message: never) => unknown;
type FromHandler = (message: unknown) => unknown;

function begin(method: DescMethod, context: HandlerContext, log: Logger): StartedCall {
  const timeout = context.timeoutMs();
  const call = startCall(method.name, log, {
    requestId: context.requestHeader.get('x-request-id') ?? undefined,
    deadline: timeout === undefined ? Number.POSITIVE_INFINITY : Date.now() + timeout,
  });
  if (context.signal.aborted) call.cancel();
  else context.signal.addEventListener('abort', () => call.cancel(), { once: true });
  return call;
}

/** The same code, message and reason a gRPC caller would get. */
function connectError(failure: Partial<grpc.ServiceError> | null): ConnectError {
  const { code, message, reason } = readGrpcError(failure);
  const metadata = reason ? { 'x-error-reason': reason } : undefined;
  return new ConnectError(message, code as number, metadata);
}

function unaryMethod(
  method: DescMethod,
  handler: UnaryHandler<unknown, unknown>,
  request: ToHandler,
  response: FromHandler,
  log: Logger,
) {
  return async (message: never, context: HandlerContext) => {
    const call = begin(method, context, log);
    try {
      const result = await handler(request(message), call.ctx);
      call.end();
      return response(result);
    } catch (err) {
      throw connectError(call.end(err));
    }
  };
}

/** A send-style handler as the async generator Connect wants; each send waits for the message to be taken. */
function streamMethod(
  method: DescMethod,
  handler: StreamHandler<unknown, unknown>,
  request: ToHandler,
  response: FromHandler,
  log: Logger,
) {
  return async function* (message: never, context: HandlerContext) {
    const call = begin(method, context, log);
    const pending: unknown[] = [];
    let wake: (() => void) | undefined;
    let taken: (() => void) | undefined;
    let finished = false;
    let failure: unknown;
    const send = (out: unknown) =>
      new Promise<void>((resolve, reject) => {
        if (call.ctx.signal.aborted) return reject(call.ctx.signal.reason);
        pending.push(response(out));
        taken = resolve;
        wake?.();
      });
    handler(request(message), call.ctx, send).then(
      () => {
        finished = true;
        wake?.();
      },
      (err: unknown) => {
        finished = true;
        failure = err;
        wake?.();
      },
    );
    try {
      for (;;) {
        if (pending.length > 0) {
          yield pending.shift();
          taken?.();
          continue;
        }
        if (finished) break;
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      }
    } finally {
      // A consumer that stopped early cancels the handler.
      if (!finished) call.cancel();
    }
    if (failure !== undefined) throw connectError(call.end(failure));
    call.end();
  };
}
