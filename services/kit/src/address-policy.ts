import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** Parses an address as text (brackets allowed); IPv4-mapped IPv6 becomes the IPv4 it carries. */
function parse(text: string): Address | undefined {
  const bare = text.trim().replace(/^\[(.*)\]$/, '$1');
  return ipaddr.isValid(bare) ? ipaddr.process(bare) : undefined;
}

/**
 * The canonical text of an address (IPv4-mapped IPv6 as plain IPv4, IPv6 compressed), or
 * undefined when the text is not an address.
 */
export function canonicalIp(text: string): string | undefined {
  return parse(text)?.toString();
}

/**
 * The unit per-client limits count by: an IPv4 address, or the /64 of an IPv6 address (one
 * subscriber's usual allocation, which it can rotate addresses within at will). Text that is
 * not an address is returned as it is.
 */
export function clientNetwork(ip: string): string {
  const addr = parse(ip);
  if (!addr) return ip;
  if (addr.kind() === 'ipv4') return addr.toString();
  return `${ipaddr.IPv6.networkAddressFromCIDR(`${addr.toString()}/64`).toString()}/64`;
}

/** A set of CIDR ranges; an IPv4-mapped IPv6 address matches as the IPv4 address it carries. */
export class CidrList {
  private readonly ranges: [Address, number][];

  constructor(cidrs: readonly string[]) {
    this.ranges = cidrs.map((cidr) => {
      const [addr, bits] = ipaddr.parseCIDR(cidr);
      return addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()
        ? [(addr as ipaddr.IPv6).toIPv4Address(), bits - 96]
        : [addr, bits];
    });
  }

  has(ip: string): boolean {
    const addr = parse(ip);
    return addr !== undefined && this.ranges.some(([net, bits]) => net.kind() === addr.kind() && addr.match(net, bits));
  }
}

/**
 * Which IP addresses outbound requests may reach. Only globally routable unicast addresses
 * are allowed by default; loopback, private, link-local (cloud metadata), CGNAT, multicast,
 * unspecified, reserved and the IPv6 forms that embed IPv4 (mapped, 6to4, NAT64, Teredo)
 * are refused, unless an explicit CIDR allow-list admits them (tests, on-prem installs).
 */
export class AddressPolicy {
  private readonly allowed: CidrList;

  constructor(allowCidrs: readonly string[] = []) {
    this.allowed = new CidrList(allowCidrs);
  }

  /** Returns why the address is refused, or undefined when it may be reached. */
  refusal(ip: string): string | undefined {
    const addr = parse(ip);
    if (!addr) return 'not an IP address';
    if (this.allowed.has(ip)) return undefined;
    const range = addr.range();
    return range === 'unicast' ? undefined : `${range} address`;
  }

  allows(ip: string): boolean {
    return this.refusal(ip) === undefined;
  }
}
