import dns from 'node:dns/promises';
import net from 'node:net';
import type { AddressPolicy } from './address-policy.js';
import { invalidArgument, type ServiceError } from './errors.js';
import { blockedError, OutboundError, outboundError } from './safe-http.js';

/**
 * A host name's addresses. Rejects (with a Node error code such as ENOTFOUND) when the name does
 * not resolve; an empty list counts as no address.
 */
export type LookupHost = (host: string) => Promise<string[]>;

/** The system resolver (getaddrinfo: /etc/hosts, then DNS), every address in its order. */
const systemLookup: LookupHost = async (host) =>
  (await dns.lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/**
 * The lookup a service's target checks and connections use: the system resolver (undefined here:
 * the kit's default) unless DNS servers are configured, e.g. a resolver reserved for egress (or a
 * test's fixture DNS); then those servers are asked directly (A and AAAA).
 */
export function lookupVia(servers: readonly string[]): LookupHost | undefined {
  if (servers.length === 0) return undefined;
  const resolver = new dns.Resolver({ timeout: 5_000, tries: 2 });
  resolver.setServers([...servers]);
  return async (host) => {
    // RFC 6761: localhost names are loopback whatever a DNS server says, as browsers treat them.
    if (/(^|\.)localhost\.?$/i.test(host)) return ['127.0.0.1', '::1'];
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
    const found = [...(v4.status === 'fulfilled' ? v4.value : []), ...(v6.status === 'fulfilled' ? v6.value : [])];
    if (found.length === 0 && v4.status === 'rejected') throw v4.reason;
    return found;
  };
}

/**
 * Resolves a target's host (a name or an IP literal, bracketed or not) and applies the outbound
 * policy before any connection is made, so a route can answer at once (and spend nothing) for a
 * name that does not resolve or a private target. Returns the addresses the policy allows, IPv4
 * first: a caller that connects itself (the SSL scan, the render proxy) dials one of them, so a
 * name that resolves differently later cannot move it inside; SafeHttp checks again at connect
 * time. `lookup` is the system resolver unless the caller asks other DNS servers. Throws an
 * OutboundError of kind `dns` or `blocked` in the kit's one wording, which never names the
 * address a name resolved to.
 */
export async function resolveTarget(
  hostname: string,
  policy: AddressPolicy,
  lookup: LookupHost = systemLookup,
): Promise<[string, ...string[]]> {
  const host = hostname.replace(/^\[|\]$/g, '');
  let addresses: string[];
  if (net.isIP(host)) addresses = [host];
  else {
    try {
      addresses = await lookup(host);
    } catch (err) {
      throw outboundError('dns', (err as NodeJS.ErrnoException).code ?? 'ENOTFOUND', undefined, host);
    }
    if (addresses.length === 0) throw outboundError('dns', 'ENODATA', undefined, host);
  }
  const allowed = addresses
    .filter((a) => policy.allows(a))
    .sort((a, b) => Number(net.isIPv6(a)) - Number(net.isIPv6(b)));
  const [first, ...rest] = allowed;
  if (first === undefined) {
    const refused = blockedError(host, !net.isIP(host));
    throw outboundError('blocked', 'ETARGETBLOCKED', refused.message, host);
  }
  return [first, ...rest];
}

/**
 * A failure to reach the target as the service error callers get: TARGET_BLOCKED for a private or
 * reserved target, TARGET_UNREACHABLE for every other network failure, in the kit's wording.
 * Anything that is not an OutboundError is returned unchanged.
 */
export function targetFailure(err: OutboundError): ServiceError;
export function targetFailure(err: unknown): ServiceError | unknown;
export function targetFailure(err: unknown): ServiceError | unknown {
  if (!(err instanceof OutboundError)) return err;
  return invalidArgument(err.kind === 'blocked' ? 'TARGET_BLOCKED' : 'TARGET_UNREACHABLE', err.message);
}
