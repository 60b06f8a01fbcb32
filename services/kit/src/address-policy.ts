import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/**
 * Writes an IPv6 address's dotted IPv4 tail as two hex groups: ipaddr.js 2.x reads
 * `::a.b.c.d` (IPv4-compatible, ::/96) as `::ffff:a.b.c.d` (IPv4-mapped), while the URL
 * parser and the socket read it as `::xxxx:yyyy`. Returns undefined for a malformed tail.
 */
function hexTail(text: string): string | undefined {
  const [, head, quad] = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(text) ?? [];
  if (head === undefined || quad === undefined) return text;
  if (!ipaddr.IPv4.isValidFourPartDecimal(quad)) return undefined;
  const [a = 0, b = 0, c = 0, d = 0] = ipaddr.IPv4.parse(quad).octets;
  return `${head}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
}

/** Parses an address as text (brackets allowed); IPv4-mapped IPv6 becomes the IPv4 it carries. */
function parse(text: string): Address | undefined {
  const bare = hexTail(text.trim().replace(/^\[(.*)\]$/, '$1'));
  return bare !== undefined && ipaddr.isValid(bare) ? ipaddr.process(bare) : undefined;
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
 * The IANA special-purpose address registries (IPv4 and IPv6, as of 2025), plus multicast and
 * the deprecated IPv4-compatible IPv6 block (::/96): ranges no outbound request may reach,
 * whether or not the registry marks them globally reachable (the few that are, such as
 * 192.0.0.9 or 2001:1::1, serve no web site).
 */
export const SPECIAL_PURPOSE_RANGES: readonly (readonly [cidr: string, name: string])[] = [
  ['0.0.0.0/8', 'this-network'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'shared (CGNAT)'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'IETF protocol assignment'],
  ['192.0.2.0/24', 'documentation'],
  ['192.31.196.0/24', 'AS112'],
  ['192.52.193.0/24', 'AMT'],
  ['192.88.99.0/24', '6to4 relay anycast'],
  ['192.168.0.0/16', 'private'],
  ['192.175.48.0/24', 'AS112'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation'],
  ['203.0.113.0/24', 'documentation'],
  ['224.0.0.0/4', 'multicast'],
  ['255.255.255.255/32', 'broadcast'],
  ['240.0.0.0/4', 'reserved'],
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['::/96', 'IPv4-compatible'],
  ['::ffff:0:0:0/96', 'IPv4-translated'],
  ['64:ff9b::/96', 'NAT64'],
  ['64:ff9b:1::/48', 'NAT64 (local)'],
  ['100::/64', 'discard-only'],
  ['100:0:0:1::/64', 'dummy prefix'],
  ['2001::/23', 'IETF protocol assignment'],
  ['2001:db8::/32', 'documentation'],
  ['2002::/16', '6to4'],
  ['2620:4f:8000::/48', 'AS112'],
  ['3fff::/20', 'documentation'],
  ['5f00::/16', 'segment routing'],
  ['fc00::/7', 'unique-local'],
  ['fe80::/10', 'link-local'],
  ['ff00::/8', 'multicast'],
];

// First match names the refusal, so a narrow block comes before the wider one holding it.
const SPECIAL_RANGES = SPECIAL_PURPOSE_RANGES.map(([cidr, name]) => [...ipaddr.parseCIDR(cidr), name] as const);
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/**
 * Which IP addresses outbound requests may reach: only globally routable unicast addresses
 * by default. The IANA special-purpose ranges of both families are refused by name; what
 * passes them must still be IPv4 unicast (ipaddr.js) or IPv6 global unicast (2000::/3), so
 * a block IANA adds later that sits outside those is refused too. An IPv4-mapped IPv6
 * address is judged as the IPv4 address it carries. An explicit CIDR allow-list admits
 * ranges before all that (tests, on-prem installs).
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
    const special = SPECIAL_RANGES.find(([net, bits]) => net.kind() === addr.kind() && addr.match(net, bits));
    if (special) return `${special[2]} address`;
    if (addr.kind() === 'ipv6') return addr.match(GLOBAL_UNICAST_V6) ? undefined : 'not a global unicast address';
    const range = addr.range();
    return range === 'unicast' ? undefined : `${range} address`;
  }

  allows(ip: string): boolean {
    return this.refusal(ip) === undefined;
  }
}
