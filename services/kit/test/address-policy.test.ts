import { expect } from 'chai';
import { AddressPolicy, CidrList, canonicalIp, clientNetwork } from '../src/address-policy.js';

describe('AddressPolicy', () => {
  const strict = new AddressPolicy();

  for (const ip of [
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::1',
    '::',
    'fe80::1',
    'fc00::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '64:ff9b::a00:1',
    '2002:7f00:1::',
  ]) {
    it(`refuses ${ip} by default`, () => {
      expect(strict.allows(ip)).to.equal(false);
      expect(strict.refusal(ip)).to.be.a('string');
    });
  }

  // Every IANA special-purpose block of both families (and multicast, ::/96), by its first and
  // last address: the refusal names the block.
  const specialPurpose: [first: string, last: string, refusal: string][] = [
    ['0.0.0.0', '0.255.255.255', 'this-network'],
    ['10.0.0.0', '10.255.255.255', 'private'],
    ['100.64.0.0', '100.127.255.255', 'shared (CGNAT)'],
    ['127.0.0.0', '127.255.255.255', 'loopback'],
    ['169.254.0.0', '169.254.255.255', 'link-local'],
    ['172.16.0.0', '172.31.255.255', 'private'],
    ['192.0.0.0', '192.0.0.255', 'IETF protocol assignment'],
    ['192.0.2.0', '192.0.2.255', 'documentation'],
    ['192.31.196.0', '192.31.196.255', 'AS112'],
    ['192.52.193.0', '192.52.193.255', 'AMT'],
    ['192.88.99.0', '192.88.99.255', '6to4 relay anycast'],
    ['192.168.0.0', '192.168.255.255', 'private'],
    ['192.175.48.0', '192.175.48.255', 'AS112'],
    ['198.18.0.0', '198.19.255.255', 'benchmarking'],
    ['198.51.100.0', '198.51.100.255', 'documentation'],
    ['203.0.113.0', '203.0.113.255', 'documentation'],
    ['224.0.0.0', '239.255.255.255', 'multicast'],
    ['240.0.0.0', '255.255.255.254', 'reserved'],
    ['255.255.255.255', '255.255.255.255', 'broadcast'],
    ['::', '::', 'unspecified'],
    ['::1', '::1', 'loopback'],
    ['::0.0.0.2', '::255.255.255.255', 'IPv4-compatible'],
    ['::ffff:0:0:0', '::ffff:0:ffff:ffff', 'IPv4-translated'],
    ['64:ff9b::', '64:ff9b::ffff:ffff', 'NAT64'],
    ['64:ff9b:1::', '64:ff9b:1:ffff:ffff:ffff:ffff:ffff', 'NAT64 (local)'],
    ['100::', '100::ffff:ffff:ffff:ffff', 'discard-only'],
    ['100:0:0:1::', '100:0:0:1:ffff:ffff:ffff:ffff', 'dummy prefix'],
    ['2001::', '2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff', 'IETF protocol assignment'],
    ['2001:db8::', '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff', 'documentation'],
    ['2002::', '2002:ffff:ffff:ffff:ffff:ffff:ffff:ffff', '6to4'],
    ['2620:4f:8000::', '2620:4f:8000:ffff:ffff:ffff:ffff:ffff', 'AS112'],
    ['3fff::', '3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff', 'documentation'],
    ['5f00::', '5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'segment routing'],
    ['fc00::', 'fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'unique-local'],
    ['fe80::', 'febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'link-local'],
    ['ff00::', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'multicast'],
  ];
  for (const [first, last, refusal] of specialPurpose) {
    it(`refuses ${first} to ${last} as ${refusal}`, () => {
      for (const ip of [first, last, `[${first}]`]) expect(strict.refusal(ip), ip).to.equal(`${refusal} address`);
    });
  }

  it('reads ::a.b.c.d as the IPv4-compatible IPv6 address the URL parser and socket use, not as mapped', () => {
    const url = new URL('http://[::127.0.0.1]/');
    expect(url.hostname).to.equal('[::7f00:1]');
    for (const ip of ['::127.0.0.1', '::7f00:1', url.hostname, '::93.184.216.34', '::5db8:d822']) {
      expect(strict.refusal(ip), ip).to.equal('IPv4-compatible address');
    }
    expect(strict.allows('::1.2.3.256'), 'a malformed tail').to.equal(false);
    expect(canonicalIp('::127.0.0.1')).to.equal('::7f00:1');
  });

  for (const ip of ['::1:0:0:1', '4000::1', '8000::1', 'e000::1', '100:0:0:2::1']) {
    it(`refuses ${ip}: IPv6 outside global unicast (2000::/3)`, () =>
      expect(strict.refusal(ip)).to.equal('not a global unicast address'));
  }

  for (const ip of [
    '93.184.216.34',
    '1.1.1.1',
    '192.0.1.255',
    '192.0.3.0',
    '198.20.0.0',
    '223.255.255.255',
    '2606:4700:4700::1111',
    '2001:200::1',
    '2001:db9::1',
    '2620:4f:8001::1',
    '2003::1',
    '2a00:1450:4001::1',
    '::ffff:93.184.216.34',
  ]) {
    it(`allows public ${ip}`, () => expect(strict.allows(ip)).to.equal(true));
  }

  it('admits exactly what the allow-list names', () => {
    const policy = new AddressPolicy(['127.0.0.0/8']);
    expect(policy.allows('127.0.0.1')).to.equal(true);
    expect(policy.allows('::ffff:127.0.0.1')).to.equal(true);
    expect(policy.allows('10.0.0.1')).to.equal(false);
    expect(policy.allows('::1')).to.equal(false);
  });

  it('refuses what is not an address', () => expect(strict.allows('example.com')).to.equal(false));
});

describe('CidrList, canonicalIp and clientNetwork', () => {
  it('matches IPv4, IPv6 and IPv4-mapped addresses against their ranges', () => {
    const list = new CidrList(['10.0.0.0/8', '2001:db8::/32', '::ffff:192.0.2.0/120']);
    expect(list.has('10.1.2.3')).to.equal(true);
    expect(list.has('::ffff:10.1.2.3')).to.equal(true);
    expect(list.has('[2001:db8::1]')).to.equal(true);
    expect(list.has('192.0.2.7')).to.equal(true);
    expect(list.has('11.0.0.1')).to.equal(false);
    expect(list.has('2001:db9::1')).to.equal(false);
    expect(list.has('not-an-ip')).to.equal(false);
    expect(new CidrList([]).has('10.1.2.3')).to.equal(false);
  });

  it('writes an address one way: mapped IPv6 as IPv4, IPv6 compressed, garbage as undefined', () => {
    expect(canonicalIp('::ffff:198.51.100.4')).to.equal('198.51.100.4');
    expect(canonicalIp(' [2001:DB8:0:0::1] ')).to.equal('2001:db8::1');
    expect(canonicalIp('203.0.113.9')).to.equal('203.0.113.9');
    expect(canonicalIp('203.0.113.9, 10.0.0.1')).to.equal(undefined);
    expect(canonicalIp('')).to.equal(undefined);
  });

  it('groups IPv6 clients by /64 and maps IPv4-mapped addresses to IPv4', () => {
    expect(clientNetwork('203.0.113.9')).to.equal('203.0.113.9');
    expect(clientNetwork('2001:db8:1:2:aaaa::1')).to.equal('2001:db8:1:2::/64');
    expect(clientNetwork('2001:db8:1:2:bbbb:cccc:dddd:eeee')).to.equal('2001:db8:1:2::/64');
    expect(clientNetwork('2001:db8::5')).to.equal('2001:db8::/64');
    expect(clientNetwork('2001:DB8:0:0:ffff::9')).to.equal(clientNetwork('2001:db8::5'));
    expect(clientNetwork('::ffff:198.51.100.4')).to.equal('198.51.100.4');
  });
});
