import dns from 'node:dns';
import type { LookupHost } from '@webutil/kit';

/**
 * The lookup the render's target checks use: the system resolver (the kit's default, undefined
 * here) unless DNS servers are configured, e.g. a resolver reserved for the browser's egress; then
 * those servers are asked directly (A and AAAA).
 */
export function lookupVia(servers: readonly string[]): LookupHost | undefined {
  if (servers.length === 0) return undefined;
  const resolver = new dns.promises.Resolver({ timeout: 5_000, tries: 2 });
  resolver.setServers([...servers]);
  return async (host) => {
    // RFC 6761: localhost names are loopback whatever a DNS server says, as Chromium treats them.
    if (/(^|\.)localhost\.?$/i.test(host)) return ['127.0.0.1', '::1'];
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(host), resolver.resolve6(host)]);
    const found = [...(v4.status === 'fulfilled' ? v4.value : []), ...(v6.status === 'fulfilled' ? v6.value : [])];
    if (found.length === 0 && v4.status === 'rejected') throw v4.reason;
    return found;
  };
}
