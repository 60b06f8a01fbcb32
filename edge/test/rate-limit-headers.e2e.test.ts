import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { account, creditsHeader, expectFailure } from './billing-helpers.js';

/** `"default";r=12;t=34` → { r: 12, t: 34 }. */
function rateLimit(res: Response): { r: number; t: number } {
  const value = res.headers.get('ratelimit') ?? '';
  const match = /^"default";r=(\d+);t=(\d+)$/.exec(value);
  expect(match, `RateLimit: ${value}`).to.not.equal(null);
  return { r: Number(match?.[1]), t: Number(match?.[2]) };
}

/** Windows are whole minutes of billing's clock (the real one here): keep a burst clear of a window's end. */
async function clearOfWindowEnd(): Promise<void> {
  if (Date.now() % 60_000 > 50_000) await new Promise((r) => setTimeout(r, 60_000 - (Date.now() % 60_000) + 100));
}

/**
 * The caller's request-rate window on every response, as draft-ietf-httpapi-ratelimit-headers
 * names it (RateLimit-Policy and RateLimit), through the REST edge: answered by billing, by the
 * edge's view of the caller, on refusals and on responses that authorized nothing.
 */
describe('rate-limit headers through the edge', function () {
  this.timeout(120_000);
  let site: FixtureSite;
  let stack: TestStack;

  before(async () => {
    site = await startFixtureSite();
    stack = await startTestStack({ allowTargets: '127.0.0.0/8' });
  });
  after(async () => {
    await stack?.stop();
    await site?.close();
  });

  it('counts down the caller’s window, then the 429 says rate_limited with Retry-After and r=0', async () => {
    const { apiKey } = await account(stack, 'STARTER', '--rate-limit', '5');
    await clearOfWindowEnd();
    const left: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await stack.api('/v1/quota', { apiKey });
      expect(res.status).to.equal(200);
      expect(res.headers.get('ratelimit-policy')).to.equal('"default";q=5;w=60');
      const { r, t } = rateLimit(res);
      expect(t).to.be.within(0, 60);
      left.push(r);
    }
    expect(left).to.deep.equal([4, 3, 2, 1, 0]);

    // Refused by the edge's view of the caller (a free read) and by billing (a paid call).
    const paid = `/v1/down-check?url=${encodeURIComponent(site.url('/ok'))}`;
    for (const path of ['/v1/quota', paid]) {
      const limited = await stack.api(path, { apiKey });
      await expectFailure(limited, 429, 'rate_limited');
      const retryAfter = Number(limited.headers.get('retry-after'));
      expect(retryAfter).to.be.within(1, 60);
      expect(limited.headers.get('ratelimit-policy')).to.equal('"default";q=5;w=60');
      const { r, t } = rateLimit(limited);
      expect(r).to.equal(0);
      // Both count to the end of the same window (the edge's and billing's clocks are one here).
      expect(Math.abs(t - retryAfter)).to.be.at.most(1);
      expect(creditsHeader(limited)).to.equal(3000);
    }
  });

  it('a paid call carries the window billing counted it in', async () => {
    const { apiKey } = await account(stack, 'STARTER', '--rate-limit', '50');
    await clearOfWindowEnd();
    const res = await stack.api(`/v1/down-check?url=${encodeURIComponent(site.url('/ok'))}`, { apiKey });
    expect(res.status).to.equal(200);
    expect(res.headers.get('ratelimit-policy')).to.equal('"default";q=50;w=60');
    expect(rateLimit(res).r).to.equal(49);
  });

  it('responses that authorized nothing carry the window: an unknown route, a bad key, a malformed body', async () => {
    await clearOfWindowEnd();
    const headers = { 'X-Forwarded-For': '198.51.100.77' };
    const unknown = await stack.api('/v1/no-such-route', { anonymous: true, headers });
    await expectFailure(unknown, 404, 'not_found');
    expect(unknown.headers.get('ratelimit-policy')).to.match(/^"default";q=\d+;w=60$/);
    const first = rateLimit(unknown).r;

    const badKey = await stack.api('/v1/quota', { apiKey: 'wu_live_not_a_real_key', headers });
    await expectFailure(badKey, 401, 'invalid_api_key');
    // A refused credential counts against its client network, as an anonymous caller's request.
    expect(rateLimit(badKey).r).to.be.below(first);

    const malformed = await stack.api('/v1/down-check', { anonymous: true, headers });
    expect(malformed.status).to.equal(400);
    // Counted in the edge's view of the anonymous caller (which hears of the bad key's request
    // from billing within the view's lifetime).
    expect(rateLimit(malformed).r).to.be.below(first);
  });
});
