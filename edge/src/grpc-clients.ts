import * as grpc from '@grpc/grpc-js';
import { type AnyDefinition, MAX_MESSAGE_BYTES, type RequestOf, type ResponseOf } from '@webutil/kit';

/** For calls nothing cancels (billing's, and a start that must answer whether its work stands). */
export const NEVER_CANCELLED: AbortSignal = new AbortController().signal;

export interface CallOptions {
  requestId: string;
  /** Milliseconds the service may take. */
  timeoutMs: number;
  /** Aborts the call, e.g. when the HTTP client went away. */
  signal: AbortSignal;
}

/**
 * A ts-proto service definition turned into calls: a unary RPC returns a promise of its reply, a
 * server-streaming RPC an async iterable of its messages.
 */
export type ServiceClient<D extends AnyDefinition> = {
  [K in keyof D]: D[K]['responseStream'] extends true
    ? (request: RequestOf<D[K]>, options: CallOptions) => AsyncIterable<ResponseOf<D[K]>>
    : (request: RequestOf<D[K]>, options: CallOptions) => Promise<ResponseOf<D[K]>>;
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
        retryPolicy: {
          maxAttempts: 4,
          initialBackoff: '0.2s',
          maxBackoff: '1s',
          backoffMultiplier: 2,
          retryableStatusCodes: ['UNAVAILABLE'],
        },
      },
    ],
  }),
};

export function connect<D extends AnyDefinition>(definition: D, address: string): ServiceClient<D> {
  const client = new grpc.Client(address, grpc.credentials.createInsecure(), CHANNEL_OPTIONS);
  const api: Record<string, unknown> = { close: () => client.close() };
  for (const [name, method] of Object.entries(definition)) {
    if (method.responseStream) {
      api[name] = (request: unknown, options: CallOptions) => serverStream(client, method, request, options);
      continue;
    }
    api[name] = (request: unknown, options: CallOptions) =>
      new Promise((resolve, reject) => {
        // A caller already gone gets no call at all: listening to a signal that has already
        // aborted would never fire, and the service would do the work for nobody.
        if (options.signal.aborted) {
          reject(Object.assign(new Error('the caller left before the call'), { code: grpc.status.CANCELLED }));
          return;
        }
        // grpc-js records the caller's stack in a new Error on every call, for the rare failure's
        // message; capturing it was a measurable share of the edge's CPU per request.
        const stackTraceLimit = Error.stackTraceLimit;
        Error.stackTraceLimit = 0;
        let call: grpc.ClientUnaryCall;
        try {
          call = client.makeUnaryRequest(
            method.path,
            method.requestSerialize,
            method.responseDeserialize,
            request,
            metadataOf(options),
            { deadline: Date.now() + options.timeoutMs },
            (err, response) => {
              options.signal.removeEventListener('abort', cancel);
              if (err) reject(err);
              else resolve(response);
            },
          );
        } finally {
          Error.stackTraceLimit = stackTraceLimit;
        }
        const cancel = () => call.cancel();
        options.signal.addEventListener('abort', cancel, { once: true });
      });
  }
  return api as ServiceClient<D>;
}

function metadataOf(options: CallOptions): grpc.Metadata {
  const metadata = new grpc.Metadata();
  metadata.set('x-request-id', options.requestId);
  return metadata;
}

/** The messages of a server-streaming call; leaving the loop early (or an abort) cancels the call. */
async function* serverStream(
  client: grpc.Client,
  method: AnyDefinition[string],
  request: unknown,
  options: CallOptions,
): AsyncIterable<unknown> {
  const call = client.makeServerStreamRequest(
    method.path,
    method.requestSerialize,
    method.responseDeserialize,
    request,
    metadataOf(options),
    { deadline: Date.now() + options.timeoutMs },
  );
  const cancel = () => call.cancel();
  if (options.signal.aborted) cancel();
  else options.signal.addEventListener('abort', cancel, { once: true });
  try {
    yield* call;
  } finally {
    options.signal.removeEventListener('abort', cancel);
    call.cancel(); // a no-op once the stream has ended
  }
}
