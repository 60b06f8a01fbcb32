import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { account, Browser, creditsHeader, eventually, expectFailure, quota } from './billing-helpers.js';

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

/**
 * Time-driven billing rules through the REST edge, with billing's clock moved from the test:
 * hold expiry, the anonymous UTC day, monthly cycles, clearance lifetime, sign-in slow-down.
 */
describe('billing: time through the edge (movable clock)', function () {
  this.timeout(60_000);
  let site: FixtureSite;
  let stack: TestStack;
  const downCheck = (path: string) => `/v1/down-check?url=${encodeURIComponent(site.url(path))}`;

  before(async () => {
    site = await startFixtureSite();
    stack = await startTestStack({
      allowTargets: '127.0.0.0/8',
      clock: true,
      // Small proof-of-work puzzles: solving is a browser's job, verifying is what is tested.
      env: { RESERVATION_SWEEP_MS: '200', CHALLENGE_MAX_NUMBER: '5000' },
      envFor: { edge: { TRUSTED_PROXIES: '127.0.0.1/32' } },
    });
  });
  after(async () => {
    await stack?.stop();
    await site?.close();
  });

  it('a hold left by an edge that crashed between reserve and commit expires and returns its credits', async () => {
    const { apiKey } = await account(stack, 'STARTER', '--credits', '10');
    const seen = site.requests.length;
    const pending = stack.api(downCheck('/hang?crash'), { apiKey }).catch((err: Error) => err);
    // The call reached the target: the hold is taken. Then the edge dies before it can settle.
    await eventually(async () =>
      expect(site.requests.slice(seen).some((r) => r.path.startsWith('/hang?crash'))).to.equal(true),
    );
    await stack.kill('edge');
    expect(await pending).to.be.instanceOf(Error);
    await stack.start('edge');
    expect(await quota(stack, { apiKey })).to.include({ remaining: 9 });
    // Held for the route's deadline (30 s) plus the grace period (60 s), then returned.
    stack.advanceClock(80_000);
    await new Promise((r) => setTimeout(r, 1_000)); // several expiry sweeps run
    expect(await quota(stack, { apiKey })).to.include({ remaining: 9 });
    stack.advanceClock(15_000);
    await eventually(async () => expect(await quota(stack, { apiKey })).to.include({ remaining: 10 }));
  });

  it('the anonymous allowance is per IP per UTC day, and renews the next day', async () => {
    const browser = new Browser(stack, '198.51.100.7');
    await browser.passChallenge();
    for (let i = 0; i < 10; i++) {
      const res = await browser.fetch(downCheck('/ok'));
      expect(res.status).to.equal(200);
      expect(creditsHeader(res)).to.equal(9 - i);
    }
    const spent = await browser.fetch(downCheck('/ok'));
    const body = await expectFailure(spent, 402, 'insufficient_credits');
    expect(body.error?.creditsRequired).to.equal(1);
    expect(body.error?.message)
      .to.match(/cycle to renew/)
      .and.match(/daily/);
    expect(await quota(stack, { anonymous: true, headers: { 'x-forwarded-for': '198.51.100.7' } })).to.deep.equal({
      callerKind: 'anonymous',
      limit: 10,
      remaining: 0,
    });
    // Another IP has its own allowance.
    expect(await quota(stack, { anonymous: true, headers: { 'x-forwarded-for': '198.51.100.8' } })).to.include({
      remaining: 10,
    });

    stack.advanceClock(DAY);
    expect(await quota(stack, { anonymous: true, headers: { 'x-forwarded-for': '198.51.100.7' } })).to.include({
      remaining: 10,
    });
    // A day later the clearance (15 minutes) has long expired.
    await expectFailure(await browser.fetch(downCheck('/ok')), 401, 'challenge_expired');
    await browser.passChallenge();
    const renewed = await browser.fetch(downCheck('/ok'));
    expect(renewed.status).to.equal(200);
    expect(creditsHeader(renewed)).to.equal(9);
  });

  it('a clearance expires after 15 minutes', async () => {
    const browser = new Browser(stack, '198.51.100.9');
    await browser.passChallenge();
    expect((await browser.fetch(downCheck('/ok'))).status).to.equal(200);
    stack.advanceClock(14 * MINUTE);
    expect((await browser.fetch(downCheck('/ok'))).status).to.equal(200);
    stack.advanceClock(2 * MINUTE);
    const expired = await browser.fetch(downCheck('/ok'));
    await expectFailure(expired, 401, 'challenge_expired');
    expect(creditsHeader(expired)).to.equal(8);
  });

  it('monthly cycles renew the plan’s credits, top-ups persist, and cycle credits are spent first', async () => {
    const { email, apiKey } = await account(stack, 'STARTER', '--credits', '3', '--top-up', '5');
    for (let i = 0; i < 4; i++) expect((await stack.api(downCheck('/ok'), { apiKey })).status).to.equal(200);
    // 3 cycle credits went first, then 1 of the 5 top-ups.
    expect(await quota(stack, { apiKey })).to.deep.include({ limit: 3, remaining: 4 });
    expect(await stack.admin('show', '--email', email)).to.include({ cycleCredits: 0, topUpCredits: 4 });

    stack.advanceClock(32 * DAY);
    // The new cycle: 3 cycle credits again, plus the 4 top-ups that remain.
    expect(await quota(stack, { apiKey })).to.deep.include({ limit: 3, remaining: 7 });
    expect(await stack.admin('show', '--email', email)).to.include({ cycleCredits: 3, topUpCredits: 4 });
    // Unused cycle credits do not carry over; top-ups do.
    stack.advanceClock(32 * DAY);
    expect(await quota(stack, { apiKey })).to.include({ remaining: 7 });
  });

  it(
    'repeated failed sign-ins are slowed down: 429 with Retry-After, even for the right password, ' +
      'until the window ends',
    async () => {
      const email = `slow-${Date.now()}@example.test`;
      const password = 'correct horse battery';
      const owner = new Browser(stack, '203.0.113.20');
      expect((await owner.signUp(email, password)).status).to.equal(201);

      const guesser = new Browser(stack, '203.0.113.21');
      for (let i = 0; i < 5; i++)
        await expectFailure(await guesser.signIn(email, `wrong guess ${i}`), 401, 'invalid_credentials');
      const slowed = await guesser.signIn(email, password);
      await expectFailure(slowed, 429, 'sign_in_limit');
      const retryAfter = Number(slowed.headers.get('retry-after'));
      expect(retryAfter).to.be.within(1, 15 * 60);
      // Another client of the same account is not locked out by the guesser.
      expect((await new Browser(stack, '203.0.113.22').signIn(email, password)).status).to.equal(200);

      stack.advanceClock(retryAfter * 1000);
      expect((await guesser.signIn(email, password)).status).to.equal(200);
    },
  );
});
