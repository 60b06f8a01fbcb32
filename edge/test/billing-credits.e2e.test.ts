import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { account, creditsHeader, eventually, expectFailure, json, quota } from './billing-helpers.js';
import { stalledUpload } from './stalled-upload.js';

/**
 * Credits through the REST edge against the real store: holds are atomic, only successes spend,
 * every failure class returns its hold, and holds nobody settles expire.
 */
describe('billing: credits through the edge', function () {
  this.timeout(120_000);
  let site: FixtureSite;
  let stack: TestStack;
  let deadline: { apiKey: string; response: Promise<Response> };

  const downCheck = (path: string) => `/v1/down-check?url=${encodeURIComponent(site.url(path))}`;

  before(async () => {
    site = await startFixtureSite();
    stack = await startTestStack({
      allowTargets: '127.0.0.0/8',
      // The crawl service reads a never-ending page for longer than link-extract's 45 s deadline.
      envFor: { crawl: { PAGE_TIMEOUT_MS: '120000' } },
    });
    // The deadline case takes the route's full 45 s; it runs while the other tests do.
    const { apiKey } = await account(stack, 'STARTER', '--credits', '5');
    deadline = {
      apiKey,
      response: stack.api(`/v1/link-extract?url=${encodeURIComponent(site.url('/never-ends'))}`, { apiKey }),
    };
  });
  after(async () => {
    await stack?.stop();
    await site?.close();
  });

  it(
    '200 concurrent 1-credit requests against a balance of 100: exactly 100 succeed, 100 get 402, ' +
      'the balance ends at 0',
    async () => {
      const { apiKey } = await account(stack, 'STARTER', '--credits', '100', '--rate-limit', '100000');
      const responses = await Promise.all(Array.from({ length: 200 }, () => stack.api(downCheck('/ok'), { apiKey })));
      const statuses = responses.map((r) => r.status);
      expect(statuses.filter((s) => s === 200)).to.have.length(100);
      expect(statuses.filter((s) => s === 402)).to.have.length(100);
      for (const res of responses.filter((r) => r.status === 402)) {
        const body = await expectFailure(res, 402, 'insufficient_credits');
        expect(body.error?.creditsRequired).to.equal(1);
        expect(body.error?.message)
          .to.match(/top-up pack/)
          .and.match(/cycle to renew/);
        expect(creditsHeader(res)).to.equal(0);
      }
      for (const res of responses.filter((r) => r.status === 200)) {
        expect((await json(res)).data.httpsStatus).to.equal(200);
        expect(creditsHeader(res)).to.be.within(0, 99);
      }
      expect(await quota(stack, { apiKey })).to.deep.include({
        callerKind: 'apikey',
        plan: 'STARTER',
        limit: 100,
        remaining: 0,
      });
      // The burst's holds went to billing batched, several per call.
      expect(stack.logs.some((l) => l.startsWith('[billing]') && l.includes('"rpc":"AuthorizeBatch"'))).to.equal(true);
    },
  );

  it('mixed 1- and 2-credit routes, concurrently: never more than the balance, never negative', async function () {
    // POST /v1/broken-links (2 credits) belongs to the crawl service's issue.
    const probe = await stack.api('/v1/broken-links', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: site.url('/ok') }),
    });
    if (probe.status === 404) this.skip();
    const { apiKey } = await account(stack, 'STARTER', '--credits', '100', '--rate-limit', '100000');
    const calls = Array.from({ length: 120 }, (_, i) =>
      i % 2 === 0
        ? stack.api(downCheck('/ok'), { apiKey }).then((res) => ({ cost: 1, res }))
        : stack
            .api('/v1/broken-links', {
              apiKey,
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ url: site.url('/ok') }),
            })
            .then((res) => ({ cost: 2, res })),
    );
    const results = await Promise.all(calls);
    const spent = results.filter((r) => r.res.status === 200).reduce((sum, r) => sum + r.cost, 0);
    for (const { cost, res } of results.filter((r) => r.res.status !== 200)) {
      const body = await expectFailure(res, 402, 'insufficient_credits');
      expect(body.error?.creditsRequired).to.equal(cost);
    }
    const { remaining } = await quota(stack, { apiKey });
    expect(spent + remaining).to.equal(100);
    expect(remaining).to.be.within(0, 1);
    if (results.some((r) => r.cost === 1 && r.res.status === 402)) expect(remaining).to.equal(0);
  });

  describe('every failure class spends nothing', () => {
    let apiKey: string;
    const balance = async () => (await quota(stack, { apiKey })).remaining;

    before(async () => {
      ({ apiKey } = await account(stack, 'STARTER', '--credits', '50'));
    });

    it('a validation 400 holds nothing', async () => {
      const res = await stack.api('/v1/down-check', { apiKey });
      await expectFailure(res, 400, 'invalid_request');
      expect(creditsHeader(res)).to.equal(50);
      expect(await balance()).to.equal(50);
    });

    it('a service error (the target answers 404) returns the hold', async () => {
      const res = await stack.api(`/v1/link-extract?url=${encodeURIComponent(site.url('/status/404'))}`, { apiKey });
      await expectFailure(res, 400, 'target_http_error');
      expect(creditsHeader(res)).to.equal(50);
      expect(await balance()).to.equal(50);
    });

    it('a client that disconnects mid-request gets its hold back', async () => {
      const before = await balance();
      const seen = site.requests.length;
      const controller = new AbortController();
      const pending = stack
        .api(downCheck('/hang?disconnect'), { apiKey, signal: controller.signal })
        .catch((err: Error) => err);
      // The request reached the target, so the hold was taken.
      await eventually(async () =>
        expect(site.requests.slice(seen).some((r) => r.path.startsWith('/hang?disconnect'))).to.equal(true),
      );
      expect(await balance()).to.equal(before - 1);
      controller.abort();
      expect(await pending).to.be.instanceOf(Error);
      await eventually(async () => expect(await balance()).to.equal(before));
      await eventually(async () =>
        expect(stack.logs.some((l) => l.startsWith('[edge]') && l.includes('"status":499'))).to.equal(true),
      );
    });

    it('a deadline exceeded (link-extract’s 45 s) returns the hold', async () => {
      const res = await deadline.response;
      await expectFailure(res, 504, 'timeout');
      expect(creditsHeader(res)).to.equal(5);
      expect(await quota(stack, { apiKey: deadline.apiKey })).to.include({ remaining: 5 });
    });

    it('a service that is down returns the hold', async () => {
      await stack.kill('meta-scan');
      try {
        const res = await stack.api(downCheck('/ok'), { apiKey });
        await expectFailure(res, 503, 'service_unavailable');
        expect(creditsHeader(res)).to.equal(50);
        expect(await balance()).to.equal(50);
      } finally {
        await stack.start('meta-scan');
      }
      const res = await stack.api(downCheck('/ok'), { apiKey });
      expect(res.status).to.equal(200);
      expect(creditsHeader(res)).to.equal(49);
    });
  });

  describe('the edge’s view of a caller', () => {
    it('returns a failed call’s credits before the caller’s next call: a retry is not refused for them', async () => {
      const { apiKey } = await account(stack, 'STARTER', '--credits', '1');
      const unreachable = `/v1/meta-scan?url=${encodeURIComponent('http://127.0.0.1:1/')}`;
      // Each failure's refund is settled after its response; the next call must still find the credit.
      for (let i = 0; i < 5; i++)
        await expectFailure(await stack.api(unreachable, { apiKey }), 500, 'target_unreachable');
      const res = await stack.api(downCheck('/ok'), { apiKey });
      expect(res.status).to.equal(200);
      expect(creditsHeader(res)).to.equal(0);
    });

    it('quota reads use billing’s last word for at most CALLER_VIEW_MS (1 s): a top-up shows within it', async () => {
      const { email, apiKey } = await account(stack, 'STARTER', '--credits', '10');
      expect(await quota(stack, { apiKey })).to.include({ remaining: 10 });
      await stack.admin('add-top-up', '--email', email, '--credits', '5');
      const toppedUp = Date.now();
      await eventually(async () => expect(await quota(stack, { apiKey })).to.include({ remaining: 15 }), 5_000);
      // The bound, with room for a loaded machine; a view that never expired would fail here.
      expect(Date.now() - toppedUp).to.be.below(4_000);
    });

    it('reads credits after the caller’s refunds on their way: its quota, the site’s, a 404’s header', async () => {
      const port = Number(new URL(stack.edgeUrl).port);
      const billing = stack.pid('billing');
      if (billing === undefined) throw new Error('the stack has no billing process');
      for (const path of ['/v1/quota', '/api/v1/quota', '/v1/no-such-route']) {
        const { apiKey } = await account(stack, 'STARTER', '--credits', '10', '--rate-limit', '100000');
        // Two uploads whose bodies never come: each holds a credit until its client leaves.
        const uploads = [1, 2].map(() => stalledUpload(port, apiKey));
        await eventually(async () => expect((await quota(stack, { apiKey })).remaining).to.equal(8), 10_000);
        // Past CALLER_VIEW_MS: the read below asks billing rather than the edge's view.
        await new Promise((resolve) => setTimeout(resolve, 1_200));
        process.kill(billing, 'SIGSTOP');
        let read: Promise<Response>;
        try {
          // The first refund's settlement waits at billing; the second is queued behind it, unsent
          // when the read is made, so a read sent at once would reach billing before it.
          for (const upload of uploads) {
            upload.destroy();
            await new Promise((resolve) => setTimeout(resolve, 150));
          }
          read = stack.api(path, { apiKey });
          await new Promise((resolve) => setTimeout(resolve, 200));
        } finally {
          process.kill(billing, 'SIGCONT');
        }
        expect(creditsHeader(await read), path).to.equal(10);
      }
    });

    it('moves with what this edge spends: a quota read right after a call shows it', async () => {
      const { apiKey } = await account(stack, 'STARTER', '--credits', '10');
      expect(await quota(stack, { apiKey })).to.include({ remaining: 10 });
      expect((await stack.api(downCheck('/ok'), { apiKey })).status).to.equal(200);
      expect(await quota(stack, { apiKey })).to.include({ remaining: 9 });
    });
  });

  describe('X-Credits-Remaining on every response', () => {
    it('on successes, 400s, 404s, 405s and malformed bodies, for the caller', async () => {
      const { apiKey } = await account(stack, 'STARTER', '--credits', '7');
      const cases: [string, RequestInit, number][] = [
        [downCheck('/ok'), {}, 200],
        ['/v1/down-check', {}, 400],
        ['/v1/no-such-route', {}, 404],
        ['/nowhere', {}, 404],
        ['/v1/down-check', { method: 'DELETE' }, 405],
        [
          '/v1/broken-links',
          { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"url": ' },
          400,
        ],
      ];
      for (const [path, init, status] of cases) {
        const res = await stack.api(path, { ...init, apiKey });
        expect(res.status, path).to.equal(status);
        expect(creditsHeader(res), path).to.equal(6);
      }
    });

    it('is 0 for an unknown key, and the anonymous allowance without one', async () => {
      const unknown = await stack.api('/v1/no-such-route', { apiKey: 'wu_live_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' });
      expect(creditsHeader(unknown)).to.equal(0);
      const anonymous = await stack.api('/v1/no-such-route', { anonymous: true });
      expect(creditsHeader(anonymous)).to.equal(10);
    });
  });

  describe('GET /v1/quota', () => {
    it('is free and uncached, and reports plan, cycle limit and cycle credits plus top-ups', async () => {
      const { apiKey } = await account(stack, 'GROWTH', '--top-up', '25');
      for (let i = 0; i < 3; i++) {
        const res = await stack.api('/v1/quota', { apiKey });
        expect(res.headers.get('cache-control')).to.equal('no-store');
        const body = await json(res);
        expect(body).to.deep.equal({
          success: true,
          data: { callerKind: 'apikey', plan: 'GROWTH', limit: 15_000, remaining: 15_025 },
        });
      }
    });

    it('reads the anonymous allowance of the caller’s IP without a credential or challenge', async () => {
      const body = await json(await stack.api('/v1/quota', { anonymous: true }));
      expect(body.data).to.deep.equal({ callerKind: 'anonymous', limit: 10, remaining: 10 });
    });

    it('counts for rate limiting: 429 rate_limited with Retry-After past the plan’s requests per minute', async () => {
      const { apiKey } = await account(stack, 'STARTER', '--rate-limit', '5');
      // Windows are whole minutes of billing's clock (the real one in this stack): keep the burst
      // clear of a window's end.
      if (Date.now() % 60_000 > 57_000) await new Promise((r) => setTimeout(r, 60_000 - (Date.now() % 60_000) + 100));
      // Staggered, so some reads reach billing, some the edge's view of the caller while others are
      // still on their way to billing, and some the view afterwards: exactly five pass either way.
      const statuses = (
        await Promise.all(
          Array.from({ length: 12 }, (_, i) =>
            new Promise((r) => setTimeout(r, i % 4)).then(() => stack.api('/v1/quota', { apiKey })),
          ),
        )
      ).map((r) => r.status);
      expect(statuses.filter((status) => status === 200)).to.have.length(5);
      expect(statuses.filter((status) => status === 429)).to.have.length(7);
      const limited = await stack.api(downCheck('/ok'), { apiKey });
      await expectFailure(limited, 429, 'rate_limited');
      expect(Number(limited.headers.get('retry-after'))).to.be.within(1, 60);
      expect(creditsHeader(limited)).to.equal(3000);
    });
  });
});
