/**
 * The services a monitor's run calls, as the edge calls them: billing to hold and settle the run's
 * credits (and its account mail, to tell an account its monitors were paused), and the service of
 * each kind's operation (the RPC its route calls).
 */
import { lookup } from 'node:dns/promises';
import { isIPv6 } from 'node:net';
import { type AnyDefinition, type CallOptions, connectService, type ServiceClient, serviceConfig } from '@webutil/kit';
import { AccountMailServiceService } from '@webutil/proto/webutil/billing/v1/account_mail';
import { BillingServiceService } from '@webutil/proto/webutil/billing/v1/billing';
import { CrawlServiceService } from '@webutil/proto/webutil/crawl/v1/crawl';
import { MetaScanServiceService } from '@webutil/proto/webutil/metascan/v1/metascan';
import { RenderServiceService } from '@webutil/proto/webutil/render/v1/render';
import { TlsScanServiceService } from '@webutil/proto/webutil/tlsscan/v1/tlsscan';

export type { CallOptions, ServiceClient };

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
 * Every RPC a run makes is a read, or idempotent by the hold's name, except a crawl's start, which a
 * run tries once.
 */
const SERVICE_CONFIG = serviceConfig([{ service: 'webutil.crawl.v1.CrawlService', method: 'StartBrokenLinkCrawl' }]);

function connect<D extends AnyDefinition>(definition: D, address: string): ServiceClient<D> {
  return connectService(definition, address, SERVICE_CONFIG);
}
