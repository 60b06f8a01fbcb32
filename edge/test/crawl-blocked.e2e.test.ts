import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { creditsHeader, expectFailure } from './billing-helpers.js';
import { post } from './crawl-helpers.js';

/** A stack with the default outbound policy: nothing internal may be checked or crawled. */
describe('link checks and crawls of internal addresses (default policy)', function () {
  this.timeout(60_000);
  let stack: TestStack;
  let site: FixtureSite;

  before(async () => {
    site = await startFixtureSite();
    stack = await startTestStack();
  });
  after(async () => {
    await stack?.stop();
    await site?.close();
  });

  for (const path of ['/v1/broken-links', '/v1/broken-links/crawl', '/v1/link-extract/crawl']) {
    it(`POST ${path} refuses loopback entry URLs with 400 target_blocked, spending and sending nothing`, async () => {
      const before = creditsHeader(await stack.api('/v1/quota'));
      for (const url of [site.url('/ok'), `localhost:${site.port}/`, 'http://127.0.0.2/']) {
        const res = await stack.api(path, post({ url }));
        const body = await expectFailure(res, 400, 'target_blocked');
        expect(body.error?.message).to.match(/(is|resolves to) a private or reserved address/);
        // A name's resolved address is not echoed back (it would map our internal network).
        if (url.startsWith('localhost')) expect(body.error?.message).to.not.match(/127\.0\.0\.1|::1/);
        expect(creditsHeader(res)).to.equal(before);
      }
      expect(site.requests).to.deep.equal([]);
    });
  }
});
