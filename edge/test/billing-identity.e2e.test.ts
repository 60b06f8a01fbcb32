import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { account, Browser, creditsHeader, expectFailure, json, quota } from './billing-helpers.js';

const PASSWORD = 'a long enough password';
/** Proof of work is a browser's job; tests solve a smaller puzzle, the same way. */
const EASY_CHALLENGE = { CHALLENGE_MAX_NUMBER: '5000' };
let emails = 0;
const email = () => `person${++emails}-${Date.now()}@example.test`;

/** Every byte billing's embedded store holds: the database file and its WAL. */
function storeBytes(stack: TestStack): Buffer {
  return Buffer.concat(
    readdirSync(stack.dataDir)
      .filter((f) => f.startsWith('billing.sqlite'))
      .map((f) => readFileSync(path.join(stack.dataDir, f))),
  );
}

describe('billing: identity through the edge', function () {
  this.timeout(60_000);
  let site: FixtureSite;
  // Trusts 127.0.0.1 (the ingress) and 10.0.0.0/8 (proxies behind it): X-Forwarded-For names the client.
  let stack: TestStack;
  const downCheck = (p: string) => `/v1/down-check?url=${encodeURIComponent(site.url(p))}`;

  before(async () => {
    site = await startFixtureSite();
    stack = await startTestStack({
      allowTargets: '127.0.0.0/8',
      env: EASY_CHALLENGE,
      envFor: { edge: { TRUSTED_PROXIES: '127.0.0.1/32,10.0.0.0/8' } },
    });
  });
  after(async () => {
    await stack?.stop();
    await site?.close();
  });

  describe('API keys', () => {
    it('an unknown key is 401 invalid_api_key', async () => {
      for (const key of ['wu_live_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'wu_live_short', 'sk_test_something']) {
        const res = await stack.api(downCheck('/ok'), { apiKey: key });
        await expectFailure(res, 401, 'invalid_api_key');
        expect(res.headers.get('www-authenticate')).to.match(/^Bearer/);
        expect(creditsHeader(res)).to.equal(0);
      }
    });

    it('a malformed Authorization header is 401 invalid_authorization', async () => {
      for (const value of [
        'Basic dXNlcjpwYXNz',
        'Bearer',
        'Bearer two words',
        stack.apiKey,
        `Token ${stack.apiKey}`,
        'Bearer wu_live_ä',
      ]) {
        const res = await stack.api(downCheck('/ok'), { headers: { authorization: value } });
        await expectFailure(res, 401, 'invalid_authorization');
        expect(creditsHeader(res)).to.equal(0);
      }
    });

    it('API key callers skip the challenge; browsers without a clearance get 401 challenge_required', async () => {
      expect((await stack.api(downCheck('/ok'))).status).to.equal(200);
      const res = await new Browser(stack, '192.0.2.10').fetch(downCheck('/ok'));
      await expectFailure(res, 401, 'challenge_required');
      expect(creditsHeader(res)).to.equal(10);
    });

    it(
      'are created from a signed-in session (shown once), ' +
        'listed with name, prefix, created and last used, and revoked',
      async () => {
        const { email: address } = await account(stack, 'STARTER', '--password', PASSWORD);
        const browser = new Browser(stack, '192.0.2.11');
        expect((await browser.signIn(address, PASSWORD)).status).to.equal(200);

        const created = await browser.post('/v1/keys', { name: 'ci server' });
        const body = await json(created);
        expect(created.status, JSON.stringify(body)).to.equal(201);
        const key: string = body.data.key;
        expect(key).to.match(/^wu_live_[A-Za-z0-9_-]{32}$/); // 24 random bytes = 192 bits
        expect(body.data).to.include({
          name: 'ci server',
          prefix: key.slice(0, 12),
          lastUsedAt: null,
          revokedAt: null,
        });

        const used = await stack.api(downCheck('/ok'), { apiKey: key });
        expect(used.status).to.equal(200);
        expect(creditsHeader(used)).to.equal(2999);

        const listed = await json(await browser.fetch('/v1/keys'));
        const entries = listed.data.keys as Record<string, unknown>[];
        const entry = entries.find((k) => k.id === body.data.id)!;
        expect(entry).to.have.all.keys(
          'id',
          'name',
          'prefix',
          'createdAt',
          'lastUsedAt',
          'revokedAt',
          'creditLimit',
          'expiresAt',
          'allowedOperations',
          'creditsSpentThisCycle',
          'mode',
        );
        expect(entry).to.include({ name: 'ci server', prefix: key.slice(0, 12), revokedAt: null, mode: 'live' });
        expect(entry.lastUsedAt).to.be.a('string');
        expect(JSON.stringify(listed)).to.not.include(key);

        const revoked = await browser.fetch(`/v1/keys/${body.data.id}`, { method: 'DELETE' });
        expect(revoked.status).to.equal(200);
        expect((await json(revoked)).data.revokedAt).to.be.a('string');
        await expectFailure(await stack.api(downCheck('/ok'), { apiKey: key }), 401, 'revoked_api_key');
        await expectFailure(
          await browser.fetch('/v1/keys/no-such-key', { method: 'DELETE' }),
          404,
          'api_key_not_found',
        );
      },
    );

    it(
      'the Free plan cannot create keys (403 plan_required), ' +
        'and a key stops working when its account falls back to Free',
      async () => {
        const browser = new Browser(stack, '192.0.2.12');
        const address = email();
        expect((await browser.signUp(address, PASSWORD)).status).to.equal(201);
        await expectFailure(await browser.post('/v1/keys', { name: 'mine' }), 403, 'plan_required');

        const { email: downgraded, apiKey } = await account(stack, 'STARTER');
        expect((await stack.api(downCheck('/ok'), { apiKey })).status).to.equal(200);
        await stack.admin('set-plan', '--email', downgraded, '--plan', 'FREE');
        await expectFailure(await stack.api(downCheck('/ok'), { apiKey }), 403, 'plan_required');
      },
    );

    it('key routes need a signed-in session, not an API key', async () => {
      await expectFailure(await stack.api('/v1/keys'), 401, 'session_required');
      await expectFailure(await stack.api('/v1/keys', { anonymous: true }), 401, 'session_required');
    });

    it('the store holds only a hash of each key, never the key itself (nor session tokens)', async () => {
      const { email: address, apiKey: minted } = await account(stack, 'GROWTH', '--password', PASSWORD);
      const browser = new Browser(stack, '192.0.2.13');
      const signedIn = await browser.signIn(address, PASSWORD);
      expect(signedIn.status).to.equal(200);
      const created = (await json(await browser.post('/v1/keys', { name: 'second' }))).data.key as string;
      expect((await stack.api(downCheck('/ok'), { apiKey: created })).status).to.equal(200);
      const bytes = storeBytes(stack);
      for (const key of [minted, created, stack.apiKey]) {
        expect(bytes.includes(key), 'plaintext key in the store').to.equal(false);
        expect(bytes.includes(key.slice(8)), 'random part of the key in the store').to.equal(false);
        expect(bytes.includes(createHash('sha256').update(key).digest('hex')), 'its hash is what is stored').to.equal(
          true,
        );
      }
      const token = browser.cookies.get('wu_session')!;
      expect(bytes.includes(token), 'plaintext session token in the store').to.equal(false);
      expect(stack.logs.some((line) => line.includes(created) || line.includes(minted))).to.equal(false);
    });
  });

  describe('sessions', () => {
    it(
      'sign-up redeems a freshly solved challenge, creates a Free account ' +
        'and signs in with an HttpOnly, SameSite cookie',
      async () => {
        const browser = new Browser(stack, '192.0.2.20');
        const address = email();
        await expectFailure(
          await browser.post('/v1/auth/sign-up', { email: address, password: PASSWORD }),
          401,
          'challenge_required',
        );
        // The reusable 15-minute clearance does not buy accounts: each sign-up redeems a solution.
        await browser.passChallenge();
        await expectFailure(
          await browser.post('/v1/auth/sign-up', { email: address, password: PASSWORD }),
          401,
          'challenge_required',
        );
        const payload = await browser.solve();
        const res = await browser.post('/v1/auth/sign-up', { email: address, password: PASSWORD, payload });
        expect(res.status).to.equal(201);
        await expectFailure(
          await browser.post('/v1/auth/sign-up', { email: email(), password: PASSWORD, payload }),
          401,
          'challenge_failed',
        );
        const body = await json(res);
        expect(body.data.account).to.include({ email: address, plan: 'FREE' });
        expect(body.data.csrfToken).to.be.a('string').with.length.above(20);
        const cookie = res.headers.getSetCookie().find((c) => c.startsWith('wu_session='))!;
        expect(cookie)
          .to.match(/; HttpOnly/)
          .and.match(/; SameSite=Lax/)
          .and.match(/; Path=\//)
          .and.match(/; Max-Age=1209600/);
        expect(cookie).to.not.match(/Secure/); // plain HTTP here
        const me = await json(await browser.fetch('/v1/auth/me'));
        expect(me.data.account.email).to.equal(address);
        expect(me.data.csrfToken).to.equal(body.data.csrfToken);
        expect(
          await quota(stack, {
            anonymous: true,
            headers: { cookie: `wu_session=${browser.cookies.get('wu_session')}` },
          }),
        ).to.deep.equal({
          callerKind: 'session',
          plan: 'FREE',
          limit: 100,
          remaining: 100,
        });
      },
    );

    it('a session caller spends its plan credits on metered routes (with a clearance)', async () => {
      const browser = new Browser(stack, '192.0.2.21');
      expect((await browser.signUp(email(), PASSWORD)).status).to.equal(201);
      await browser.passChallenge();
      const res = await browser.fetch(downCheck('/ok'));
      expect(res.status).to.equal(200);
      expect(creditsHeader(res)).to.equal(99);
    });

    it('refuses a taken email, a weak password, and wrong credentials', async () => {
      const browser = new Browser(stack, '192.0.2.22');
      const address = email();
      expect((await browser.signUp(address, PASSWORD)).status).to.equal(201);
      await expectFailure(
        await new Browser(stack, '192.0.2.23').signUp(address.toUpperCase(), PASSWORD),
        409,
        'email_taken',
      );
      await expectFailure(await new Browser(stack, '192.0.2.23').signUp(email(), 'short'), 400, 'weak_password');
      await expectFailure(await browser.signIn(address, 'not the password'), 401, 'invalid_credentials');
      await expectFailure(await browser.signIn(`nobody-${address}`, PASSWORD), 401, 'invalid_credentials');
      expect((await browser.signIn(address, PASSWORD)).status).to.equal(200);
    });

    it('state-changing session requests need the CSRF token (403 csrf_failed without it)', async () => {
      const { email: address } = await account(stack, 'STARTER', '--password', PASSWORD);
      const browser = new Browser(stack, '192.0.2.24');
      expect((await browser.signIn(address, PASSWORD)).status).to.equal(200);
      await expectFailure(await browser.post('/v1/keys', { name: 'x' }, { csrf: false }), 403, 'csrf_failed');
      await expectFailure(
        await browser.post('/v1/keys', { name: 'x' }, { csrf: false, headers: { 'x-csrf-token': 'forged' } }),
        403,
        'csrf_failed',
      );
      const created = await json(await browser.post('/v1/keys', { name: 'x' }));
      await expectFailure(
        await browser.fetch(`/v1/keys/${created.data.id}`, { method: 'DELETE', csrf: false }),
        403,
        'csrf_failed',
      );
      await expectFailure(await browser.post('/v1/auth/sign-out', {}, { csrf: false }), 403, 'csrf_failed');
      // Reading needs no token.
      expect((await browser.fetch('/v1/keys', { csrf: false })).status).to.equal(200);
    });

    it('sign-out ends the session server-side and clears the cookie', async () => {
      const browser = new Browser(stack, '192.0.2.25');
      expect((await browser.signUp(email(), PASSWORD)).status).to.equal(201);
      const token = browser.cookies.get('wu_session')!;
      const out = await browser.post('/v1/auth/sign-out');
      expect(out.status).to.equal(200);
      expect(browser.cookies.has('wu_session')).to.equal(false);
      await expectFailure(await browser.fetch('/v1/auth/me'), 401, 'session_required');
      // The old cookie, replayed, is refused and cleared.
      const replayed = await stack.api('/v1/auth/me', { anonymous: true, headers: { cookie: `wu_session=${token}` } });
      await expectFailure(replayed, 401, 'invalid_session');
      expect(
        replayed.headers.getSetCookie().some((c) => c.startsWith('wu_session=;') && c.includes('Max-Age=0')),
      ).to.equal(true);
    });

    it('cookies are Secure when a trusted proxy says the request came over HTTPS', async () => {
      const browser = new Browser(stack, '192.0.2.26');
      const res = await browser.post(
        '/v1/auth/sign-up',
        { email: email(), password: PASSWORD, payload: await browser.solve() },
        { headers: { 'x-forwarded-proto': 'https' } },
      );
      expect(res.status).to.equal(201);
      expect(res.headers.getSetCookie().find((c) => c.startsWith('wu_session='))).to.match(/; Secure/);
    });
  });

  describe('the proof-of-work challenge', () => {
    it('serves an ALTCHA challenge, uncached', async () => {
      const res = await new Browser(stack, '192.0.2.30').fetch('/v1/challenge');
      expect(res.headers.get('cache-control')).to.equal('no-store');
      const body = await json(res);
      expect(body.data.provider).to.equal('altcha');
      expect(body.data.challenge).to.have.all.keys('algorithm', 'challenge', 'maxnumber', 'salt', 'signature');
      expect(body.data.challenge.algorithm).to.equal('SHA-256');
      expect(body.data.challenge.salt).to.match(/\?expires=\d+&$/);
    });

    it('a solution is accepted once: a replay is 401 challenge_failed', async () => {
      const browser = new Browser(stack, '192.0.2.31');
      const payload = await browser.solve();
      const first = await browser.post('/v1/challenge', { payload });
      expect(first.status).to.equal(200);
      const cookie = first.headers.getSetCookie().find((c) => c.startsWith('wu_clearance='))!;
      // Strict: another site's navigation to a metered GET route does not carry it.
      expect(cookie)
        .to.match(/; HttpOnly/)
        .and.match(/; SameSite=Strict/)
        .and.match(/; Max-Age=900/);
      await expectFailure(await browser.post('/v1/challenge', { payload }), 401, 'challenge_failed');
      await expectFailure(
        await new Browser(stack, '192.0.2.32').post('/v1/challenge', { payload }),
        401,
        'challenge_failed',
      );
    });

    it('a wrong or forged solution is 401 challenge_failed', async () => {
      const browser = new Browser(stack, '192.0.2.33');
      const solved = JSON.parse(Buffer.from(await browser.solve(), 'base64').toString());
      const wrong = Buffer.from(JSON.stringify({ ...solved, number: solved.number + 1 })).toString('base64');
      await expectFailure(await browser.post('/v1/challenge', { payload: wrong }), 401, 'challenge_failed');
      const forged = Buffer.from(JSON.stringify({ ...solved, signature: '0'.repeat(64) })).toString('base64');
      await expectFailure(await browser.post('/v1/challenge', { payload: forged }), 401, 'challenge_failed');
      await expectFailure(await browser.post('/v1/challenge', { payload: 'not base64 json' }), 401, 'challenge_failed');
      await expectFailure(await browser.post('/v1/challenge', {}), 400, 'invalid_request');
    });

    it('a clearance is bound to the IP that earned it', async () => {
      const browser = new Browser(stack, '192.0.2.34');
      await browser.passChallenge();
      expect((await browser.fetch(downCheck('/ok'))).status).to.equal(200);
      const elsewhere = await stack.api(downCheck('/ok'), {
        anonymous: true,
        headers: { cookie: `wu_clearance=${browser.cookies.get('wu_clearance')}`, 'x-forwarded-for': '192.0.2.35' },
      });
      await expectFailure(elsewhere, 401, 'challenge_failed');
    });
  });

  describe('client IP and X-Forwarded-For', () => {
    it(
      'behind a trusted proxy, the rightmost untrusted X-Forwarded-For entry is the client; ' +
        'spoofed entries to its left are ignored',
      async () => {
        const browser = new Browser(stack, '198.18.0.1, 192.0.2.40');
        await browser.passChallenge();
        expect((await browser.fetch(downCheck('/ok'))).status).to.equal(200);
        expect(await quota(stack, { anonymous: true, headers: { 'x-forwarded-for': '192.0.2.40' } })).to.include({
          remaining: 9,
        });
        expect(await quota(stack, { anonymous: true, headers: { 'x-forwarded-for': '198.18.0.1' } })).to.include({
          remaining: 10,
        });
      },
    );

    it('through a chain of trusted proxies, each skipped: the first untrusted hop from the right counts', async () => {
      // A client at 192.0.2.50 claims 203.0.113.9; two proxies of the trusted 10/8 add their peers.
      const browser = new Browser(stack, '203.0.113.9, 192.0.2.50, 10.1.2.3, 10.9.8.7');
      await browser.passChallenge();
      expect((await browser.fetch(downCheck('/ok'))).status).to.equal(200);
      const remaining = async (xff: string) =>
        (await quota(stack, { anonymous: true, headers: { 'x-forwarded-for': xff } })).remaining;
      expect(await remaining('192.0.2.50')).to.equal(9);
      expect(await remaining('203.0.113.9, 192.0.2.50, 10.200.0.1')).to.equal(9);
      for (const other of ['203.0.113.9', '10.9.8.7', '10.1.2.3']) expect(await remaining(other), other).to.equal(10);
    });

    it('from a peer that is not a trusted proxy, X-Forwarded-For is ignored: spoofing it gains nothing', async () => {
      const plain = await startTestStack({ allowTargets: '127.0.0.0/8', env: EASY_CHALLENGE });
      try {
        const browser = new Browser(plain, '203.0.113.77');
        await browser.passChallenge();
        for (let i = 0; i < 10; i++) expect((await browser.fetch(downCheck('/ok'))).status).to.equal(200);
        await expectFailure(await browser.fetch(downCheck('/ok')), 402, 'insufficient_credits');
        for (const spoofed of ['203.0.113.78', '198.51.100.1, 203.0.113.79']) {
          const res = await plain.api(downCheck('/ok'), {
            anonymous: true,
            headers: { 'x-forwarded-for': spoofed, cookie: `wu_clearance=${browser.cookies.get('wu_clearance')}` },
          });
          await expectFailure(res, 402, 'insufficient_credits');
          expect(await quota(plain, { anonymous: true, headers: { 'x-forwarded-for': spoofed } })).to.include({
            remaining: 0,
          });
        }
      } finally {
        await plain.stop();
      }
    });
  });
});

describe('billing: Cloudflare Turnstile (against a local stand-in of siteverify)', function () {
  this.timeout(60_000);
  let site: FixtureSite;
  let stack: TestStack;
  let verifier: http.Server;
  const verifications: URLSearchParams[] = [];

  before(async () => {
    site = await startFixtureSite();
    // Accepts every token starting with "good-", any number of times, so replay protection
    // observed here is billing's own.
    verifier = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        const form = new URLSearchParams(body);
        verifications.push(form);
        const ok =
          req.url === '/siteverify' &&
          form.get('secret') === 'turnstile-secret' &&
          form.get('response')?.startsWith('good-');
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify(
            ok
              ? { success: true, hostname: 'webutil.test' }
              : { success: false, 'error-codes': ['invalid-input-response'] },
          ),
        );
      });
    });
    await new Promise<void>((resolve) => verifier.listen(0, '127.0.0.1', resolve));
    const { port } = verifier.address() as AddressInfo;
    stack = await startTestStack({
      allowTargets: '127.0.0.0/8',
      envFor: {
        edge: { TRUSTED_PROXIES: '127.0.0.1/32' },
        billing: {
          TURNSTILE_SECRET: 'turnstile-secret',
          TURNSTILE_SITE_KEY: 'site-key-1',
          TURNSTILE_VERIFY_URL: `http://127.0.0.1:${port}/siteverify`,
        },
      },
    });
  });
  after(async () => {
    await stack?.stop();
    await site?.close();
    await new Promise((r) => verifier?.close(r));
  });

  it('GET /v1/challenge names the Turnstile site key', async () => {
    const body = await json(await new Browser(stack, '192.0.2.50').fetch('/v1/challenge'));
    expect(body.data).to.deep.equal({ provider: 'turnstile', siteKey: 'site-key-1' });
  });

  it('a verified token buys a clearance once; the secret and client IP go to siteverify', async () => {
    const browser = new Browser(stack, '192.0.2.51');
    const res = await browser.post('/v1/challenge', { turnstileToken: 'good-token-1' });
    expect(res.status).to.equal(200);
    const last = verifications.at(-1)!;
    expect(last.get('secret')).to.equal('turnstile-secret');
    expect(last.get('response')).to.equal('good-token-1');
    expect(last.get('remoteip')).to.equal('192.0.2.51');
    expect((await browser.fetch(`/v1/down-check?url=${encodeURIComponent(site.url('/ok'))}`)).status).to.equal(200);
    await expectFailure(
      await browser.post('/v1/challenge', { turnstileToken: 'good-token-1' }),
      401,
      'challenge_failed',
    );
  });

  it('a token siteverify refuses, or a proof-of-work payload, is 401 challenge_failed', async () => {
    const browser = new Browser(stack, '192.0.2.52');
    await expectFailure(await browser.post('/v1/challenge', { turnstileToken: 'bad-token' }), 401, 'challenge_failed');
    await expectFailure(
      await browser.post('/v1/challenge', { payload: Buffer.from('{}').toString('base64') }),
      401,
      'challenge_failed',
    );
  });

  it('sign-up redeems a Turnstile token of its own, once', async () => {
    const body = (email: string, turnstileToken: string) => ({ email, password: PASSWORD, turnstileToken });
    const browser = new Browser(stack, '192.0.2.53');
    expect((await browser.post('/v1/auth/sign-up', body(email(), 'good-sign-up-1'))).status).to.equal(201);
    await expectFailure(
      await browser.post('/v1/auth/sign-up', body(email(), 'good-sign-up-1')),
      401,
      'challenge_failed',
    );
    await expectFailure(await browser.post('/v1/auth/sign-up', body(email(), 'bad-token')), 401, 'challenge_failed');
  });
});
