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

  for (const ip of ['93.184.216.34', '1.1.1.1', '2606:4700:4700::1111', '::ffff:93.184.216.34']) {
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
