import ipaddr from 'ipaddr.js';

/**
 * Which IP addresses outbound requests may reach. Only globally routable unicast addresses
 * are allowed by default; loopback, private, link-local (cloud metadata), CGNAT, multicast,
 * unspecified, reserved and the IPv6 forms that embed IPv4 (mapped, 6to4, NAT64, Teredo)
 * are refused, unless an explicit CIDR allow-list admits them (tests, on-prem installs).
 */
export class AddressPolicy {
  private readonly allowed: [ipaddr.IPv4 | ipaddr.IPv6, number][];

  constructor(allowCidrs: readonly string[] = []) {
    this.allowed = allowCidrs.map((cidr) => {
      const [addr, bits] = ipaddr.parseCIDR(cidr);
      return [normalize(addr), bits];
    });
  }

  /** Returns why the address is refused, or undefined when it may be reached. */
  refusal(ip: string): string | undefined {
    if (!ipaddr.isValid(ip)) return 'not an IP address';
    const addr = normalize(ipaddr.parse(ip));
    if (this.allowed.some(([net, bits]) => net.kind() === addr.kind() && addr.match(net, bits))) return undefined;
    const range = addr.range();
    return range === 'unicast' ? undefined : `${range} address`;
  }

  allows(ip: string): boolean {
    return this.refusal(ip) === undefined;
  }
}

/** IPv4-mapped IPv6 (::ffff:a.b.c.d) is judged as the IPv4 address it carries. */
function normalize(addr: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | ipaddr.IPv6 {
  return addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress() ? (addr as ipaddr.IPv6).toIPv4Address() : addr;
}
