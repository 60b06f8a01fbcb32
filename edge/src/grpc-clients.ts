import * as grpc from '@grpc/grpc-js';
import { MAX_MESSAGE_BYTES, type AnyDefinition, type RequestOf, type ResponseOf } from '@webutil/kit';

export interface CallOptions {
  requestId: string;
  /** Milliseconds the service may take. */
  timeoutMs: number;
  /** Aborts the call, e.g. when the HTTP client went away. */
  signal: AbortSignal;
}

/** A ts-proto service definition turned into promise-returning unary calls. */
export type ServiceClient<D extends AnyDefinition> = {
  [K in keyof D]: (request: RequestOf<D[K]>, options: CallOptions) => Promise<ResponseOf<D[K]>>;
} & { close(): void };

const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
  'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
  // A restarted service should be reachable again within a second or two, not after
  // grpc-js's default back-off of up to two minutes.
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 1000,
  'grpc.keepalive_time_ms': 30_000,
  // Calls fail fast while a channel is between reconnect attempts; a few spaced retries of
  // UNAVAILABLE bridge a service restart instead of answering 503 for the next second.
  'grpc.service_config': JSON.stringify({
    methodConfig: [
      {
        name: [{}],
        retryPolicy: { maxAttempts: 4, initialBackoff: '0.2s', maxBackoff: '1s', backoffMultiplier: 2, retryableStatusCodes: ['UNAVAILABLE'] },
      },
    ],
  }),
};

export function connect<D extends AnyDefinition>(definition: D, address: string): ServiceClient<D> {
  const client = new grpc.Client(address, grpc.credentials.createInsecure(), CHANNEL_OPTIONS);
  const api: Record<string, unknown> = { close: () => client.close() };
  for (const [name, method] of Object.entries(definition)) {
    api[name] = (request: unknown, options: CallOptions) =>
      new Promise((resolve, reject) => {
        const metadata = new grpc.Metadata();
        metadata.set('x-request-id', options.requestId);
        const call = client.makeUnaryRequest(
          method.path,
          method.requestSerialize,
          method.responseDeserialize,
          request,
          metadata,
          { deadline: Date.now() + options.timeoutMs },
          (err, response) => {
            options.signal.removeEventListener('abort', cancel);
            if (err) reject(err);
            else resolve(response);
          },
        );
        const cancel = () => call.cancel();
        options.signal.addEventListener('abort', cancel, { once: true });
      });
  }
  return api as ServiceClient<D>;
}
