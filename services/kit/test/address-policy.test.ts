import { expect } from 'chai';
import { AddressPolicy } from '../src/address-policy.js';

describe('AddressPolicy', () => {
  const strict = new AddressPolicy();

  for (const ip of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fc00::1', 'ff02::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:10.0.0.1', '64:ff9b::a00:1', '2002:7f00:1::']) {
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
