/**
 * The services a monitor's run calls, as the edge calls them: billing to hold and settle the run's
 * credits (and its account mail, to tell an account its monitors were paused), and the service of
 * each kind's operation (the RPC its route calls).
 */
import * as grpc from '@grpc/grpc-js';
import { type AnyDefinition, MAX_MESSAGE_BYTES, type RequestOf, type ResponseOf } from '@webutil/kit';
import { AccountMailServiceService } from '@webutil/proto/webutil/billing/v1/account_mail';
import { BillingServiceService } from '@webutil/proto/webutil/billing/v1/billing';
import { CrawlServiceService } from '@webutil/proto/webutil/crawl/v1/crawl';
import { MetaScanServiceService } from '@webutil/proto/webutil/metascan/v1/metascan';
import { RenderServiceService } from '@webutil/proto/webutil/render/v1/render';
import { TlsScanServiceService } from '@webutil/proto/webutil/tlsscan/v1/tlsscan';

export interface CallOptions {
  requestId: string;
  timeoutMs: number;
}

/** A service definition turned into calls: a unary RPC gives a promise, a streaming one an async iterable. */
export type ServiceClient<D extends AnyDefinition> = {
  [K in keyof D]: D[K]['responseStream'] extends true
    ? (request: RequestOf<D[K]>, options: CallOptions) => AsyncIterable<ResponseOf<D[K]>>
    : (request: RequestOf<D[K]>, options: CallOptions) => Promise<ResponseOf<D[K]>>;
} & { close(): void };

export interface RunClients {
  billing: ServiceClient<typeof BillingServiceService>;
  /** Billing's account mail (same address): the out-of-credits notice. */
  accountMail: ServiceClient<typeof AccountMailServiceService>;
  metaScan: ServiceClient<typeof MetaScanServiceService>;
  tlsScan: ServiceClient<typeof TlsScanServiceService>;
  crawl: ServiceClient<typeof CrawlServiceService>;
  render: ServiceClient<typeof RenderServiceService>;
}

export interface RunAddresses {
  billing: string;
  metaScan: string;
  tlsScan: string;
  crawl: string;
  render: string;
}

export function connectRunClients(addresses: RunAddresses): RunClients {
  return {
    billing: connect(BillingServiceService, addresses.billing),
    accountMail: connect(AccountMailServiceService, addresses.billing),
    metaScan: connect(MetaScanServiceService, addresses.metaScan),
    tlsScan: connect(TlsScanServiceService, addresses.tlsScan),
    crawl: connect(CrawlServiceService, addresses.crawl),
    render: connect(RenderServiceService, addresses.render),
  };
}

export function closeRunClients(clients: RunClients): void {
  for (const client of Object.values(clients)) client.close();
}

/**
 * A name resolving to several replicas gets a connection to each, round robin: a down-check's
 * re-check goes to the next meta-scan replica. UNAVAILABLE is retried (a replica restarting);
 * every RPC a run makes is a read, or idempotent by the hold's name, except a crawl's start,
 * which a run tries once.
 */
const SERVICE_CONFIG = JSON.stringify({
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
    { name: [{ service: 'webutil.crawl.v1.CrawlService', method: 'StartBrokenLinkCrawl' }] },
  ],
});

function connect<D extends AnyDefinition>(definition: D, address: string): ServiceClient<D> {
  const client = new grpc.Client(address, grpc.credentials.createInsecure(), {
    'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
    'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
    'grpc.initial_reconnect_backoff_ms': 100,
    'grpc.max_reconnect_backoff_ms': 1000,
    'grpc.service_config': SERVICE_CONFIG,
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
            client.makeUnaryRequest(
              method.path,
              method.requestSerialize,
              method.responseDeserialize,
              request,
              metadata(options),
              { deadline: Date.now() + options.timeoutMs },
              (err, response) => (err ? reject(err) : resolve(response)),
            );
          });
  }
  return api as ServiceClient<D>;
}
