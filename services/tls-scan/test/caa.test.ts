import { type FixtureDns, startFixtureDns } from '@webutil/scripts/fixture-dns';
import { expect } from 'chai';
import { caaNames, lookupCaa, MAX_CAA_NAMES } from '../src/caa.js';

describe('CAA lookup against a DNS server', function () {
  this.timeout(20_000);
  let dns: FixtureDns;
  const live = () => new AbortController().signal;

  before(async () => {
    dns = await startFixtureDns();
    dns.setCaa('example.test', [
      { tag: 'issue', value: 'letsencrypt.org' },
      { tag: 'issuewild', value: ';' },
    ]);
    dns.setCaa('pinned.shop.example.test', [{ tag: 'issue', value: 'pki.goog', critical: true }]);
  });
  after(() => dns?.close());

  it('reads the records of the name itself', async () => {
    expect(await lookupCaa('pinned.shop.example.test', [dns.server], 2_000, live())).to.deep.equal({
      domain: 'pinned.shop.example.test',
      records: [{ critical: true, tag: 'issue', value: 'pki.goog' }],
    });
  });

  it('climbs to the closest parent with records', async () => {
    const policy = await lookupCaa('www.shop.example.test', [dns.server], 2_000, live());
    expect(policy).to.deep.equal({
      domain: 'example.test',
      records: [
        { critical: false, tag: 'issue', value: 'letsencrypt.org' },
        { critical: false, tag: 'issuewild', value: ';' },
      ],
    });
  });

  it('is an empty set when no name up the tree has any', async () => {
    expect(await lookupCaa('nothing.invalid', [dns.server], 2_000, live())).to.deep.equal({
      domain: undefined,
      records: [],
    });
  });

  it('is unknown when the server does not answer in time', async () => {
    dns.setCaa('slow.test', []);
    dns.set('slow.test', ['127.0.0.1'], { delayMs: 3_000 });
    const started = Date.now();
    expect(await lookupCaa('slow.test', [dns.server], 500, live())).to.equal(undefined);
    expect(Date.now() - started).to.be.below(5_000); // liveness: the deadline, not the server's delay
  });

  it("does not ask the system's resolver about a single-label name such as localhost", async () => {
    expect(await lookupCaa('localhost', [], 2_000, live())).to.equal(undefined);
  });

  it('asks a resolver of its own about a single-label name all the same', async () => {
    dns.setCaa('intranet', [{ tag: 'issue', value: 'ca.intranet' }]);
    expect(await lookupCaa('intranet', [dns.server], 2_000, live())).to.deep.equal({
      domain: 'intranet',
      records: [{ critical: false, tag: 'issue', value: 'ca.intranet' }],
    });
  });

  it('asks at most MAX_CAA_NAMES names, and is unknown past them when none had records', async () => {
    const deep = `${Array.from({ length: 12 }, (_, i) => `l${i}`).join('.')}.test`;
    expect(caaNames(deep)).to.have.length(MAX_CAA_NAMES);
    const asked = dns.queries.length;
    expect(await lookupCaa(deep, [dns.server], 2_000, live())).to.equal(undefined);
    expect(dns.queries.slice(asked).filter((q) => q.startsWith('CAA '))).to.have.length(MAX_CAA_NAMES);
  });

  it('stops when the scan is cancelled', async () => {
    dns.set('stalled.test', ['127.0.0.1'], { delayMs: 5_000 });
    const cancel = new AbortController();
    const lookup = lookupCaa('stalled.test', [dns.server], 10_000, cancel.signal);
    setTimeout(() => cancel.abort(), 50);
    expect(await lookup).to.equal(undefined);
  });
});
