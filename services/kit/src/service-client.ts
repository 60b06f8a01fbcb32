/**
 * A service of this deployment called from another service, as the edge calls it: one gRPC client
 * per service definition, each unary RPC a promise and each streaming one an async iterable.
 */
import * as grpc from '@grpc/grpc-js';
import { type AnyDefinition, MAX_MESSAGE_BYTES, type RequestOf, type ResponseOf } from './grpc-server.js';

export interface CallOptions {
  requestId: string;
  timeoutMs: number;
  /** Told which replica answered a unary call (its address as grpc-js names it, e.g. 10.0.0.7:50055). */
  onPeer?: (peer: string) => void;
}

/** A service definition turned into calls: a unary RPC gives a promise, a streaming one an async iterable. */
export type ServiceClient<D extends AnyDefinition> = {
  [K in keyof D]: D[K]['responseStream'] extends true
    ? (request: RequestOf<D[K]>, options: CallOptions) => AsyncIterable<ResponseOf<D[K]>>
    : (request: RequestOf<D[K]>, options: CallOptions) => Promise<ResponseOf<D[K]>>;
} & { close(): void };

/**
 * A name resolving to several replicas gets a connection to each, round robin; UNAVAILABLE is
 * retried (a replica restarting). `notRetried` names RPCs that must be tried once (not idempotent).
 */
export function serviceConfig(notRetried: { service: string; method: string }[] = []): string {
  return JSON.stringify({
    loadBalancingConfig: [{ round_robin: {} }],
    methodConfig: [
      {
        name: [{}],
        retryPolicy: {
          maxAttempts: 3,
          initialBackoff: '0.2s',
          maxBackoff: '1s',
          backoffMultiplier: 2,
          retryableStatusCodes: ['UNAVAILABLE'],
        },
      },
      ...(notRetried.length > 0 ? [{ name: notRetried }] : []),
    ],
  });
}

export function connectService<D extends AnyDefinition>(
  definition: D,
  address: string,
  config: string = serviceConfig(),
): ServiceClient<D> {
  const client = new grpc.Client(address, grpc.credentials.createInsecure(), {
    'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
    'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
    'grpc.initial_reconnect_backoff_ms': 100,
    'grpc.max_reconnect_backoff_ms': 1000,
    'grpc.service_config': config,
  });
  const api: Record<string, unknown> = { close: () => client.close() };
  for (const [name, method] of Object.entries(definition)) {
    const metadata = (options: CallOptions) => {
      const entries = new grpc.Metadata();
      entries.set('x-request-id', options.requestId);
      return entries;
    };
    api[name] = method.responseStream
      ? (request: unknown, options: CallOptions) =>
          client.makeServerStreamRequest(
            method.path,
            method.requestSerialize,
            method.responseDeserialize,
            request,
            metadata(options),
            { deadline: Date.now() + options.timeoutMs },
          )
      : (request: unknown, options: CallOptions) =>
          new Promise((resolve, reject) => {
            const call = client.makeUnaryRequest(
              method.path,
              method.requestSerialize,
              method.responseDeserialize,
              request,
              metadata(options),
              { deadline: Date.now() + options.timeoutMs },
              (err, response) => {
                options.onPeer?.(call.getPeer());
                if (err) reject(err);
                else resolve(response);
              },
            );
          });
  }
  return api as ServiceClient<D>;
}
