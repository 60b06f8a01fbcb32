import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { SHARED_NATS_URL } from '@webutil/scripts/nats-under-test';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { account, Browser, creditsHeader, expectFailure, json, quota } from './billing-helpers.js';

/**
 * The edge's view of a caller and its credit leases outlast every test here (CALLER_VIEW_MS):
 * what ends them at once is billing's notice over NATS. A revoked key, a password set by the
 * operator and a plan changed to Free hold from the next request on, on every edge.
 */
describe('revocations reach the edge at once (over NATS)', function () {
  this.timeout(120_000);
  const VIEW_MS = 60_000;
  const PASSWORD = 'correct horse battery';
  let site: FixtureSite;
  let stack: TestStack;

  before(async () => {
    site = await startFixtureSite();
    stack = await startTestStack({
      allowTargets: '127.0.0.0/8',
      envFor: {
        edge: { CALLER_VIEW_MS: String(VIEW_MS), NATS_URL: SHARED_NATS_URL },
        billing: { NATS_URL: SHARED_NATS_URL },
      },
    });
  });
  after(async () => {
    await stack?.stop();
    await site?.close();
  });

  const downCheck = (apiKey: string) =>
    stack.api(`/v1/down-check?url=${encodeURIComponent(site.url('/ok'))}`, { apiKey });

  /** A new Starter account whose key has made ten paid calls: the last ones are paid from a lease. */
  async function busyKey(): Promise<{ email: string; apiKey: string }> {
    // The edge counts a leased call in the caller's rate window: start well inside a minute.
    const second = new Date().getSeconds();
    if (second > 45) await new Promise((r) => setTimeout(r, (61 - second) * 1000));
    const created = await account(
      stack,
      'STARTER',
      '--credits',
      '5000',
      '--rate-limit',
      '100000',
      '--password',
      PASSWORD,
    );
    for (let i = 1; i <= 10; i++) {
      const res = await downCheck(created.apiKey);
      expect(res.status).to.equal(200);
      expect(creditsHeader(res)).to.equal(5000 - i);
    }
    return created;
  }

  it('a key revoked through the API is refused on its very next call, though its lease had time left', async () => {
    const { email, apiKey } = await busyKey();
    const browser = new Browser(stack, '192.0.2.40');
    expect((await browser.signIn(email, PASSWORD)).status).to.equal(200);
    const keys = (await json(await browser.fetch('/v1/keys'))).data.keys as { id: string; prefix: string }[];
    const key = keys.find((k) => apiKey.startsWith(k.prefix));
    expect((await browser.fetch(`/v1/keys/${key?.id}`, { method: 'DELETE' })).status).to.equal(200);
    await expectFailure(await downCheck(apiKey), 401, 'revoked_api_key');
    // Its quota read is not answered from the edge's view either.
    await expectFailure(await stack.api('/v1/quota', { apiKey }), 401, 'revoked_api_key');
    // What its lease paid for is spent, the rest returned: 10 calls.
    expect(creditsHeader(await browser.fetch('/v1/quota'))).to.equal(4990);
  });

  it("an operator's set-password ends the account's sessions at once", async () => {
    const email = `free-${Date.now()}@example.test`;
    await stack.admin('create-account', '--email', email, '--plan', 'FREE', '--password', PASSWORD);
    const browser = new Browser(stack, '192.0.2.41');
    expect((await browser.signIn(email, PASSWORD)).status).to.equal(200);
    // The second read is answered from the edge's view of the session.
    for (let i = 0; i < 2; i++) expect((await browser.fetch('/v1/quota')).status).to.equal(200);
    await stack.admin('set-password', '--email', email, '--password', 'a new and different password');
    await expectFailure(await browser.fetch('/v1/quota'), 401, 'invalid_session');
    // The refusal told the browser to drop the ended session's cookie.
    expect(browser.cookies.has('wu_session')).to.equal(false);
    expect((await browser.signIn(email, 'a new and different password')).status).to.equal(200);
    expect(
      await quota(stack, { anonymous: true, headers: { cookie: `wu_session=${browser.cookies.get('wu_session')}` } }),
    ).to.include({ plan: 'FREE' });
  });

  it("a plan changed to Free ends the account's key leases at once: its key is refused on the next call", async () => {
    const { email, apiKey } = await busyKey();
    await stack.admin('set-plan', '--email', email, '--plan', 'FREE');
    await expectFailure(await downCheck(apiKey), 403, 'plan_required');
    expect(creditsHeader(await stack.api('/v1/quota', { apiKey: stack.apiKey }))).to.be.above(0);
  });
});
