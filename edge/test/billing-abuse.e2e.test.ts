import { scryptSync } from 'node:crypto';
import path from 'node:path';
import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { account, Browser, creditsHeader, expectFailure, json } from './billing-helpers.js';

const PASSWORD = 'a long enough password';
let emails = 0;
const email = () => `abuse${++emails}-${Date.now()}@example.test`;
let hosts = 0;
/** A client address no other test uses (the stack trusts 127.0.0.1, so X-Forwarded-For names it). */
const freshIp = () => `198.18.${Math.floor(++hosts / 250)}.${(hosts % 250) + 1}`;

/**
 * Rate windows are whole UTC minutes: a check of per-minute counting that failed because the
 * minute rolled over while it ran is run once more (it cannot roll over twice).
 */
async function inOneMinute(check: () => Promise<void>): Promise<void> {
  const minute = () => Math.floor(Date.now() / 60_000);
  const started = minute();
  try {
    await check();
  } catch (err) {
    if (minute() === started) throw err;
    await check();
  }
}

/**
 * Identity abuse through the REST edge: locking an owner out, farming Free accounts, spending a
 * signed-in user's credits from another site, unmetered refusals, and old password hashes.
 */
describe('billing: abuse of identity through the edge', function () {
  this.timeout(120_000);
  let site: FixtureSite;
  let stack: TestStack;
  const downCheck = (p: string) => `/v1/down-check?url=${encodeURIComponent(site.url(p))}`;

  before(async () => {
    site = await startFixtureSite();
    stack = await startTestStack({
      allowTargets: '127.0.0.0/8',
      env: { CHALLENGE_MAX_NUMBER: '5000' },
      envFor: { edge: { TRUSTED_PROXIES: '127.0.0.1/32' } },
    });
  });
  after(async () => {
    await stack?.stop();
    await site?.close();
  });

  describe('sign-in cannot lock the owner out', () => {
    it('past 5 failures only the guesser’s network waits (429), and its refused attempts count nowhere', async () => {
      const address = email();
      expect((await new Browser(stack, freshIp()).signUp(address, PASSWORD)).status).to.equal(201);
      const guesser = new Browser(stack, freshIp());
      for (let i = 0; i < 5; i++)
        await expectFailure(await guesser.signIn(address, `wrong ${i}`), 401, 'invalid_credentials');
      for (let i = 0; i < 16; i++) {
        const refused = await guesser.signIn(address, `wrong again ${i}`);
        await expectFailure(refused, 429, 'sign_in_limit');
        expect(Number(refused.headers.get('retry-after'))).to.be.within(1, 15 * 60);
      }
      // 21 wrong passwords from one address: the owner, elsewhere, signs in at once.
      expect((await new Browser(stack, freshIp()).signIn(address, PASSWORD)).status).to.equal(200);
    });

    it(
      'past 20 failures from anywhere, every sign-in to the account redeems a fresh challenge: ' +
        'a cost per guess, not a lock',
      async () => {
        const address = email();
        const owner = new Browser(stack, freshIp());
        expect((await owner.signUp(address, PASSWORD)).status).to.equal(201);
        for (let n = 0; n < 4; n++) {
          const guesser = new Browser(stack, freshIp());
          for (let i = 0; i < 5; i++)
            await expectFailure(await guesser.signIn(address, `wrong ${n}.${i}`), 401, 'invalid_credentials');
        }
        const late = new Browser(stack, freshIp());
        await expectFailure(await late.signIn(address, 'one more guess'), 401, 'challenge_required');
        await expectFailure(await owner.signIn(address, PASSWORD), 401, 'challenge_required');
        const solved = await owner.solve();
        expect((await owner.signIn(address, PASSWORD, solved)).status).to.equal(200);
        // Single use: the owner's solution does not let anyone else in.
        await expectFailure(await late.signIn(address, PASSWORD, solved), 401, 'challenge_failed');
        // A guess that paid its challenge is checked like any other.
        await expectFailure(
          await late.signIn(address, 'one more guess', await late.solve()),
          401,
          'invalid_credentials',
        );
      },
    );
  });

  describe('sign-up cannot farm Free credits', () => {
    it('each client network opens at most 3 accounts per UTC day (IPv6: per /64); refusals do not count', async () => {
      const from = (ip: string) => new Browser(stack, ip);
      const taken = email();
      expect((await from('2001:db8:60::1').signUp(taken, PASSWORD)).status).to.equal(201);
      // Refused sign-ups create nothing and count nothing.
      await expectFailure(await from('2001:db8:60::2').signUp(taken, PASSWORD), 409, 'email_taken');
      await expectFailure(await from('2001:db8:60::3').signUp(email(), 'short'), 400, 'weak_password');
      expect((await from('2001:db8:60::4').signUp(email(), PASSWORD)).status).to.equal(201);
      expect((await from('2001:db8:60:0:ffff::5').signUp(email(), PASSWORD)).status).to.equal(201);
      const capped = await from('2001:db8:60::6').signUp(email(), PASSWORD);
      await expectFailure(capped, 429, 'sign_up_limit');
      expect(Number(capped.headers.get('retry-after'))).to.be.within(1, 86_400);
      // The network's neighbours and the accounts it made are unaffected.
      expect((await from('2001:db8:61::1').signUp(email(), PASSWORD)).status).to.equal(201);
      expect((await from('2001:db8:60::1').signIn(taken, PASSWORD)).status).to.equal(200);
    });

    it('a solution buys one sign-up; the clearance cookie buys none', async () => {
      const browser = new Browser(stack, freshIp());
      await browser.passChallenge();
      await expectFailure(
        await browser.post('/v1/auth/sign-up', { email: email(), password: PASSWORD }),
        401,
        'challenge_required',
      );
      const payload = await browser.solve();
      expect((await browser.post('/v1/auth/sign-up', { email: email(), password: PASSWORD, payload })).status).to.equal(
        201,
      );
      await expectFailure(
        await new Browser(stack, freshIp()).post('/v1/auth/sign-up', { email: email(), password: PASSWORD, payload }),
        401,
        'challenge_failed',
      );
    });
  });

  it(
    'a session’s credit-spending GET needs its CSRF token: ' +
      'a cross-site navigation carrying the cookie spends nothing',
    async () => {
      const browser = new Browser(stack, freshIp());
      expect((await browser.signUp(email(), PASSWORD)).status).to.equal(201);
      await browser.passChallenge();
      const seen = site.requests.length;
      // What a link or redirect on another site sends: the cookies, no X-CSRF-Token.
      const navigated = await browser.fetch(downCheck('/ok?navigated'), { csrf: false });
      await expectFailure(navigated, 403, 'csrf_failed');
      expect(creditsHeader(navigated)).to.equal(100);
      const extract = `/v1/link-extract?url=${encodeURIComponent(site.url('/ok?navigated'))}`;
      await expectFailure(await browser.fetch(extract, { csrf: false }), 403, 'csrf_failed');
      expect(site.requests.length, 'the target was not fetched').to.equal(seen);
      // Free reads need no token; the page's own call (with the token) spends as usual.
      const free = await browser.fetch('/v1/quota', { csrf: false });
      expect((await json(free)).data).to.include({ callerKind: 'session', remaining: 100 });
      const own = await browser.fetch(downCheck('/ok'));
      expect(own.status).to.equal(200);
      expect(creditsHeader(own)).to.equal(99);
    },
  );

  describe('refused requests are rate-counted', () => {
    it('unknown API keys count against the client network: past 30 a minute, 429 instead of 401', async () => {
      await inOneMinute(async () => {
        const ip = freshIp();
        const badKey = { apiKey: `wu_live_${'A'.repeat(32)}`, headers: { 'x-forwarded-for': ip } };
        for (let i = 0; i < 30; i++)
          await expectFailure(await stack.api(downCheck('/ok'), badKey), 401, 'invalid_api_key');
        const limited = await stack.api(downCheck('/ok'), badKey);
        await expectFailure(limited, 429, 'rate_limited');
        expect(Number(limited.headers.get('retry-after'))).to.be.within(1, 60);
        expect(creditsHeader(limited)).to.equal(0);
        // The network's anonymous callers share that count; a valid key there does not.
        await expectFailure(
          await stack.api('/v1/quota', { anonymous: true, headers: { 'x-forwarded-for': ip } }),
          429,
          'rate_limited',
        );
        expect((await stack.api('/v1/quota', { headers: { 'x-forwarded-for': ip } })).status).to.equal(200);
      });
    });

    it('CSRF failures count against the session’s account', async () => {
      const browser = new Browser(stack, freshIp());
      expect((await browser.signUp(email(), PASSWORD)).status).to.equal(201); // Free: 30 a minute
      await inOneMinute(async () => {
        let refused = 0;
        let res = await browser.post('/v1/auth/sign-out', {}, { csrf: false });
        while (res.status === 403 && refused < 40) {
          refused++;
          res = await browser.post('/v1/auth/sign-out', {}, { csrf: false });
        }
        await expectFailure(res, 429, 'rate_limited');
        expect(refused).to.equal(30);
        await expectFailure(await browser.fetch('/v1/auth/me'), 429, 'rate_limited');
      });
    });

    it('requests refused before billing (unknown routes, malformed bodies) count too', async () => {
      await inOneMinute(async () => {
        const headers = { 'x-forwarded-for': freshIp() };
        for (let i = 0; i < 15; i++) {
          await expectFailure(await stack.api('/v1/no-such-route', { anonymous: true, headers }), 404, 'not_found');
          const malformed = await stack.api('/v1/broken-links', {
            anonymous: true,
            method: 'POST',
            headers: { ...headers, 'content-type': 'application/json' },
            body: '{"url":',
          });
          await expectFailure(malformed, 400, 'invalid_json');
        }
        await expectFailure(await stack.api('/v1/quota', { anonymous: true, headers }), 429, 'rate_limited');
      });
    });
  });

  it('a password hash made with old scrypt parameters becomes Argon2id at the next successful sign-in', async () => {
    const { email: address } = await account(stack, 'STARTER', '--password', PASSWORD);
    const db = new Database(path.join(stack.dataDir, 'billing.sqlite'));
    try {
      const stored = () =>
        (db.prepare('SELECT password_hash FROM accounts WHERE email = ?').get(address) as { password_hash: string })
          .password_hash;
      expect(stored()).to.match(/^\$argon2id\$v=19\$/); // what the operator CLI writes today
      const salt = Buffer.from('0123456789abcdef');
      const key = scryptSync(PASSWORD.normalize('NFKC'), salt, 32, { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 2 ** 20 });
      const legacy = ['scrypt', 2 ** 15, 8, 1, salt.toString('base64url'), key.toString('base64url')].join('$');
      db.prepare('UPDATE accounts SET password_hash = ? WHERE email = ?').run(legacy, address);

      await expectFailure(
        await new Browser(stack, freshIp()).signIn(address, 'not the password'),
        401,
        'invalid_credentials',
      );
      expect(stored(), 'a failed sign-in changes nothing').to.equal(legacy);
      expect((await new Browser(stack, freshIp()).signIn(address, PASSWORD)).status).to.equal(200);
      const upgraded = stored();
      expect(upgraded).to.match(/^\$argon2id\$v=19\$/);
      expect(upgraded.split('$')[3]?.split(',').sort()).to.deep.equal(['m=19456', 'p=1', 't=2']);
      expect((await new Browser(stack, freshIp()).signIn(address, PASSWORD)).status).to.equal(200);
      expect(stored(), 'a current hash is kept').to.equal(upgraded);
    } finally {
      db.close();
    }
  });
});
