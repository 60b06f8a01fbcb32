import { expect } from 'chai';
import { AddressPolicy } from '../src/address-policy.js';
import { OutboundError, ServiceError } from '../src/index.js';
import { resolveTarget, targetFailure } from '../src/resolve-target.js';

describe('resolveTarget', () => {
  const strict = new AddressPolicy([]);

  it('returns the addresses of an allowed target', async () => {
    expect(await resolveTarget('127.0.0.1', new AddressPolicy(['127.0.0.0/8']))).to.deep.equal(['127.0.0.1']);
    expect(await resolveTarget('[::1]', new AddressPolicy(['::1/128']))).to.deep.equal(['::1']);
  });

  it('refuses a private target in one wording that never names the address a name resolved to', async () => {
    const literal = await resolveTarget('10.1.2.3', strict).catch((err: unknown) => err);
    expect(literal).to.be.instanceOf(OutboundError);
    expect((literal as OutboundError).message).to.equal(
      '10.1.2.3 is a private or reserved address, which is not fetched (ETARGETBLOCKED)',
    );
    const named = (await resolveTarget('localhost', strict).catch((err: unknown) => err)) as Error;
    expect(named.message).to.equal(
      'localhost resolves to a private or reserved address, which is not fetched (ETARGETBLOCKED)',
    );
    const failure = targetFailure(named);
    expect(failure).to.be.instanceOf(ServiceError);
    expect((failure as ServiceError).reason).to.equal('TARGET_BLOCKED');
  });

  it('asks the lookup it is given, keeps only allowed addresses (IPv4 first) and words its failures once', async () => {
    const policy = new AddressPolicy(['127.0.0.1/32', '::1/128']);
    // A resolver the caller chose (the render proxy asks its own DNS servers), as a table here.
    const table: Record<string, string[]> = { 'mixed.test': ['::1', '10.0.0.1', '127.0.0.1'], 'empty.test': [] };
    const lookup = async (host: string) => {
      const found = table[host];
      if (found) return found;
      throw Object.assign(new Error(`queryA ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    };
    expect(await resolveTarget('mixed.test', policy, lookup)).to.deep.equal(['127.0.0.1', '::1']);
    // The system resolver would not know these names: the lookup given is the one asked.
    const missing = (await resolveTarget('missing.test', policy, lookup).catch((err: unknown) => err)) as OutboundError;
    expect(missing).to.include({ kind: 'dns', code: 'ENOTFOUND' });
    expect(missing.message).to.equal('the host name does not resolve (ENOTFOUND)');
    const empty = (await resolveTarget('empty.test', policy, lookup).catch((err: unknown) => err)) as OutboundError;
    expect(empty.message).to.equal('the host name does not resolve (ENODATA)');
    table['inside.test'] = ['10.0.0.1'];
    const inside = (await resolveTarget('inside.test', policy, lookup).catch((err: unknown) => err)) as OutboundError;
    expect(inside.message).to.equal(
      'inside.test resolves to a private or reserved address, which is not fetched (ETARGETBLOCKED)',
    );
  });

  it('maps other network failures to TARGET_UNREACHABLE and leaves anything else alone', () => {
    const dns = new OutboundError('dns', 'ENOTFOUND', 'the host name does not resolve (ENOTFOUND)', 'http://x.test/');
    expect((targetFailure(dns) as ServiceError).reason).to.equal('TARGET_UNREACHABLE');
    const other = new Error('boom');
    expect(targetFailure(other)).to.equal(other);
  });
});
