import { expect } from 'chai';
import { otherReplica, replicaAddresses } from '../src/clients.js';

describe('a down-check’s re-check goes to another meta-scan replica (decision 0486)', () => {
  const resolver = (table: Record<string, string[]>) => async (host: string) => table[host] ?? [];

  it('reads the replica addresses of every target form the services are given', async () => {
    expect(await replicaAddresses('ipv4:127.0.0.1:5001,127.0.0.1:5002')).to.deep.equal([
      '127.0.0.1:5001',
      '127.0.0.1:5002',
    ]);
    const dns = resolver({ 'meta-headless': ['10.0.0.7', '10.0.0.8', '10.0.0.7'], 'v6-host': ['fd00::1'] });
    expect(await replicaAddresses('dns:///meta-headless:50055', dns)).to.deep.equal([
      '10.0.0.7:50055',
      '10.0.0.8:50055',
    ]);
    expect(await replicaAddresses('dns://8.8.8.8/meta-headless:50055', dns)).to.have.length(2);
    expect(await replicaAddresses('meta-headless:50055', dns)).to.have.length(2);
    expect(await replicaAddresses('v6-host:50055', dns)).to.deep.equal(['[fd00::1]:50055']);
    expect(await replicaAddresses('no port here', dns)).to.deep.equal([]);
  });

  it('picks a replica other than the one that answered; none when there is no other or the answerer is unknown', () => {
    const three = ['10.0.0.7:50055', '10.0.0.8:50055', '10.0.0.9:50055'];
    for (let i = 0; i < 50; i++) {
      const pick = otherReplica(three, '10.0.0.8:50055');
      expect(pick).to.be.oneOf(['10.0.0.7:50055', '10.0.0.9:50055']);
    }
    expect(otherReplica(three, '10.0.0.8:50055', () => 0)).to.equal('10.0.0.7:50055');
    expect(otherReplica(three, '10.0.0.8:50055', () => 0.99)).to.equal('10.0.0.9:50055');
    // One replica: the same one (later), through the balanced channel.
    expect(otherReplica(['10.0.0.7:50055'], '10.0.0.7:50055')).to.equal(undefined);
    // An answerer that is not among the addresses (a ClusterIP, a pod gone since): no basis to pick.
    expect(otherReplica(three, '10.9.9.9:50055')).to.equal(undefined);
    expect(otherReplica(three, undefined)).to.equal(undefined);
  });
});
