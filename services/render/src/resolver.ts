import dns from 'node:dns';
import net from 'node:net';
import { type AddressPolicy, invalidArgument, OutboundError, type ServiceError } from '@webutil/kit';

/** A host name's addresses. */
export type Resolve = (host: string) => Promise<string[]>;

/**
 * The system resolver (getaddrinfo: /etc/hosts, then DNS), or, when servers are configured, those
 * DNS servers asked directly (A and AAAA), e.g. a resolver reserved for the browser's egress.
 */
export function resolverFor(servers: readonly string[]): Resolve {
  const ask = servers.length === 0 ? systemLookup : dnsLookup(servers);
  // RFC 6761: localhost names are loopback whatever a DNS server says, as Chromium treats them.
  return (host) => (/(^|\.)localhost\.?$/i.test(host) ? Promise.resolve(['127.0.0.1', '::1']) : ask(host));
}

async function systemLookup(host: string): Promise<string[]> {
  return (await dns.promises.lookup(host, { all: true, verbatim: true })).map((a) => a.address);
}

function dnsLookup(servers: readonly string[]): Resolve {
  const resolver = new dns.promises.Resolver({ timeout: 5_000, tries: 2 });
  resolver.setServers([...servers]);
  return async (host) => {
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
    const found = [...(v4.status === 'fulfilled' ? v4.value : []), ...(v6.status === 'fulfilled' ? v6.value : [])];
    if (found.length > 0) return found;
    throw v4.status === 'rejected' ? v4.reason : new Error(`no address for ${host}`);
  };
}

/**
 * The one address a connection to `host` may use: an IP literal the policy allows, or the first
 * allowed address the name resolves to. Resolving once and dialling exactly this address is what
 * defeats DNS rebinding: nothing resolves the name again between the check and the connection.
 * Throws an OutboundError of kind `blocked` or `dns`; the message names only what the caller gave,
 * never the private address a name resolved to.
 */
export async function allowedAddress(host: string, policy: AddressPolicy, resolve: Resolve): Promise<string> {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  if (net.isIP(bare)) {
    if (policy.allows(bare)) return bare;
    throw new OutboundError('blocked', 'ETARGETBLOCKED', `${bare} is a private or reserved address`, bare);
  }
  let addresses: string[];
  try {
    addresses = await resolve(bare);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'ENOTFOUND';
    throw new OutboundError('dns', code, `${bare} does not resolve (${code})`, bare);
  }
  const allowed = addresses.find((address) => policy.allows(address));
  if (allowed) return allowed;
  throw new OutboundError('blocked', 'ETARGETBLOCKED', `${bare} resolves to a private or reserved address`, bare);
}

/** A refused or failed connection to the target, as the error callers get (400 either way). */
export function targetFailure(err: OutboundError): ServiceError {
  return invalidArgument(err.kind === 'blocked' ? 'TARGET_BLOCKED' : 'TARGET_UNREACHABLE', err.message);
}
