/**
 * The services a monitor's run calls, as the edge calls them: billing to hold and settle the run's
 * credits (and its account mail, to tell an account its monitors were paused), and the service of
 * each kind's operation (the RPC its route calls).
 */
import { lookup } from 'node:dns/promises';
import { isIPv6 } from 'node:net';
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
  /** Told which replica answered a unary call (its address as grpc-js names it, e.g. 10.0.0.7:50055). */
  onPeer?: (peer: string) => void;
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
  /** A down-check's re-check: a meta-scan replica other than the one that answered (decision 0486). */
  metaScanOtherThan(peer: string | undefined): Promise<ServiceClient<typeof MetaScanServiceService>>;
  /** The clients metaScanOtherThan opened, one per replica address. */
  metaScanReplicas: Map<string, ServiceClient<typeof MetaScanServiceService>>;
}

export interface RunAddresses {
  billing: string;
  metaScan: string;
  tlsScan: string;
  crawl: string;
  render: string;
}

export function connectRunClients(addresses: RunAddresses): RunClients {
  const metaScan = connect(MetaScanServiceService, addresses.metaScan);
  const metaScanReplicas = new Map<string, ServiceClient<typeof MetaScanServiceService>>();
  return {
    billing: connect(BillingServiceService, addresses.billing),
    accountMail: connect(AccountMailServiceService, addresses.billing),
    metaScan,
    tlsScan: connect(TlsScanServiceService, addresses.tlsScan),
    crawl: connect(CrawlServiceService, addresses.crawl),
    render: connect(RenderServiceService, addresses.render),
    metaScanReplicas,
    metaScanOtherThan: async (peer) => {
      const other = otherReplica(await replicaAddresses(addresses.metaScan).catch(() => []), peer);
      // One replica (or none known apart from it, or the peer unknown): the balanced channel, later.
      if (other === undefined) return metaScan;
      let client = metaScanReplicas.get(other);
      if (!client) {
        client = connect(MetaScanServiceService, `ipv${isIPv6(hostOf(other)) ? 6 : 4}:${other}`);
        metaScanReplicas.set(other, client);
      }
      return client;
    },
  };
}

export function closeRunClients(clients: RunClients): void {
  for (const client of [
    clients.billing,
    clients.accountMail,
    clients.metaScan,
    clients.tlsScan,
    clients.crawl,
    clients.render,
    ...clients.metaScanReplicas.values(),
  ]) {
    client.close();
  }
}

/** `ip:port`, or `[ip6]:port`, as grpc-js names a subchannel's address (and getPeer answers). */
const addressOf = (ip: string, port: string) => (isIPv6(ip) ? `[${ip}]:${port}` : `${ip}:${port}`);
const hostOf = (address: string) => address.replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1');

/**
 * Every replica address a gRPC target names: an `ipv4:`/`ipv6:` list as given, or each address its host
 * resolves to (`dns:///host:port`, the chart's headless Service, or `host:port`).
 */
export async function replicaAddresses(
  target: string,
  resolve: (host: string) => Promise<string[]> = async (host) =>
    (await lookup(host, { all: true })).map((found) => found.address),
): Promise<string[]> {
  const list = /^ipv[46]:(.*)$/.exec(target);
  if (list) return (list[1] as string).split(',').map((address) => address.trim());
  const hostPort = target.replace(/^dns:(\/\/[^/]*\/)?/, '');
  const match = /^(.*):(\d+)$/.exec(hostPort);
  if (!match) return [];
  const host = (match[1] as string).replace(/^\[(.*)\]$/, '$1');
  const port = match[2] as string;
  return [...new Set(await resolve(host))].map((ip) => addressOf(ip, port));
}

/** A replica address other than `peer` (at random among them), or undefined when there is none. */
export function otherReplica(addresses: string[], peer: string | undefined, random = Math.random): string | undefined {
  if (peer === undefined) return undefined;
  const others = addresses.filter((address) => address !== peer);
  if (others.length === 0 || others.length === addresses.length) return undefined;
  return others[Math.floor(random() * others.length)];
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
            const call = client.makeUnaryRequest(
              method.path,
              method.requestSerialize,
              method.responseDeserialize,
              request,
              metadata(options),
              { deadline: Date.now() + options.timeoutMs },
              (err, response) => {
                if (options.onPeer) options.onPeer(call.getPeer());
                if (err) reject(err);
                else resolve(response);
              },
            );
          });
  }
  return api as ServiceClient<D>;
}
