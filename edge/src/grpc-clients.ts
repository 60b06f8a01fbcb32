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
  /** Where clients reach this API (PUBLIC_BASE_URL), for links a call hands out: a payment page's way back. */
  publicBaseUrl?: string;
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

/**
 * RPCs a second try could do twice: a crawl start queues a job and is billed, a sign-up or a
 * creation makes an account or a key, a webhook delivery reserved or a secret rotated is one more,
 * a claim, a challenge solution or a sign-in counts once. They
 * are tried once; a caller told 503 may retry. Everything else is a read, or idempotent by an id the
 * edge sends (a hold's reservation id, a settlement), and is retried on UNAVAILABLE
 * (docs/decisions/0251-queue-outages-answered-at-once.md).
 */
const TRIED_ONCE = /^(Start|Create|Claim|Reserve|Rotate|Solve|Count)[A-Z]|^Sign(Up|In)$/;

export function isRetried(methodName: string): boolean {
  return !TRIED_ONCE.test(methodName);
}

/** Channel options for a service: its non-idempotent methods get no retry policy. */
function channelOptions(definition: AnyDefinition): grpc.ChannelOptions {
  const once = Object.values(definition)
    .map((method) => method.path.split('/').filter(Boolean) as [string, string])
    .filter(([, method]) => !isRetried(method))
    .map(([service, method]) => ({ service, method }));
  return {
    'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
    'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
    // A restarted service should be reachable again within a second or two, not after
    // grpc-js's default back-off of up to two minutes.
    'grpc.initial_reconnect_backoff_ms': 100,
    'grpc.max_reconnect_backoff_ms': 1000,
    'grpc.keepalive_time_ms': 30_000,
    // A name that resolves to several replicas (a headless Service, an `ipv4:` list) is re-read at
    // most this often when a connection fails: a replaced pod is found within seconds.
    'grpc.dns_min_time_between_resolutions_ms': 2_000,
    'grpc.service_config': JSON.stringify({
      // Every address the name resolves to gets a connection and its share of calls; a dead
      // replica's connection leaves the rotation, so no edge is pinned to it (decision 0254).
      loadBalancingConfig: [{ round_robin: {} }],
      // Calls fail fast while a channel is between reconnect attempts; a few spaced retries of
      // UNAVAILABLE bridge a service restart (or reach another replica) instead of answering 503.
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
        ...(once.length > 0 ? [{ name: once }] : []),
      ],
    }),
  };
}

export function connect<D extends AnyDefinition>(definition: D, address: string): ServiceClient<D> {
  const client = new grpc.Client(address, grpc.credentials.createInsecure(), channelOptions(definition));
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
