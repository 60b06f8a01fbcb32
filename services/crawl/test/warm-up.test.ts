import { createLogger } from '@webutil/kit';
import { expect } from 'chai';
import { readConfig } from '../src/config.js';
import { warmUp } from '../src/warm-up.js';

describe('warm-up crawl', () => {
  it('crawls its own loopback site once per crawl kind, though the settings allow no private address', async () => {
    const settings = readConfig({ DATA_DIR: '/nonexistent' });
    expect(settings.WEBUTIL_ALLOW_TARGETS).to.deep.equal([]);
    // Home, 30 pages with 6 files each over two origins, a redirect and a missing page.
    const links = await warmUp(settings, createLogger('test', 'silent'));
    expect(links).to.have.length(2);
    for (const count of links) expect(count).to.be.above(200);
  });
});
