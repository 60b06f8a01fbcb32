import { expect } from 'chai';
import { FreeReadBounds, freeReadKind } from '../src/metering/free-read-bounds.js';

describe('free-read bounds', () => {
  it('counts each kind per client network per minute, and says when the window ends', () => {
    const bounds = new FreeReadBounds({ 'job-poll': 3, 'site-read': 2 });
    const at = 10 * 60_000 + 15_000; // 45 s before the next window
    for (let i = 0; i < 3; i++) expect(bounds.hit('job-poll', '198.51.100.7', at)).to.equal(undefined);
    expect(bounds.hit('job-poll', '198.51.100.7', at)).to.equal(45);
    // Another kind, another network: counted apart.
    expect(bounds.hit('site-read', '198.51.100.7', at)).to.equal(undefined);
    expect(bounds.hit('job-poll', '198.51.100.8', at)).to.equal(undefined);
    // One IPv6 /64 is one client.
    expect(bounds.hit('site-read', '2001:db8::1', at)).to.equal(undefined);
    expect(bounds.hit('site-read', '2001:db8::2', at)).to.equal(undefined);
    expect(bounds.hit('site-read', '2001:db8::3', at)).to.be.above(0);
    // The next minute starts afresh.
    expect(bounds.hit('job-poll', '198.51.100.7', at + 45_000)).to.equal(undefined);
  });

  it('holds job polls to their bound on both prefixes, the site reads only on the website’s alias', () => {
    expect(freeReadKind('job-poll', '/v1/broken-links/crawl/x')).to.equal('job-poll');
    expect(freeReadKind('job-poll', '/api/v1/broken-links/crawl/x')).to.equal('job-poll');
    expect(freeReadKind('site-read', '/api/v1/quota')).to.equal('site-read');
    expect(freeReadKind('site-read', '/v1/quota')).to.equal(undefined);
    expect(freeReadKind(undefined, '/api/v1/keys')).to.equal(undefined);
  });
});
