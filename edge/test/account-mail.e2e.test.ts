import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { linkIn, SmtpUnderTest } from '@webutil/scripts/mail-under-test';
import { account } from '@webutil/scripts/test-accounts';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { Browser, expectFailure, json } from './billing-helpers.js';

const PASSWORD = 'correct horse battery';
const PUBLIC_BASE_URL = 'https://webutil.example';
let emails = 0;
const email = () => `mail${++emails}-${Date.now()}@example.test`;
let ips = 0;
const freshIp = () => `198.51.100.${++ips}`;

/**
 * Account mail through the REST edge, delivered over SMTP to a real server in this process
 * (decisions 0421-0424): the verification link and what it opens, the password reset, and the
 * credit notices with their settings.
 */
describe('account mail: verification, password reset and notices over SMTP', function () {
  this.timeout(120_000);
  let smtp: SmtpUnderTest;
  let site: FixtureSite;
  let stack: TestStack;

  before(async () => {
    smtp = await SmtpUnderTest.start();
    site = await startFixtureSite();
    stack = await startTestStack({
      allowTargets: '127.0.0.0/8',
      clock: true,
      envFor: { edge: { TRUSTED_PROXIES: '127.0.0.1/32' } },
      env: { SMTP_URL: smtp.url, PUBLIC_BASE_URL, MAIL_FROM: 'Web Utility API <mail@webutil.example>' },
    });
  });
  after(async () => {
    await stack?.stop();
    await site?.close();
    await smtp?.close();
  });

  /** The token of the newest link to `page` mailed to `to`. */
  const tokenMailed = async (to: string, page: string, after = 0): Promise<string> => {
    const mail = await smtp.waitFor(to, (m) => smtp.received.indexOf(m) >= after && linkIn(m, page) !== undefined);
    const link = linkIn(mail, page);
    expect(link?.origin, 'links start at PUBLIC_BASE_URL').to.equal(PUBLIC_BASE_URL);
    const token = link?.searchParams.get('token');
    expect(token).to.match(/^[A-Za-z0-9_-]{43}$/);
    return token as string;
  };

  const signedUp = async (address = email()): Promise<Browser> => {
    const browser = new Browser(stack, freshIp());
    const res = await browser.signUp(address, PASSWORD);
    const body = await json(res);
    expect(res.status, JSON.stringify(body)).to.equal(201);
    expect(body.data.account.emailVerified).to.equal(false);
    return browser;
  };

  it('sign-up mails a single-use link; until followed, no API keys, no checkout (email_not_verified)', async () => {
    const address = email();
    const browser = await signedUp(address);
    const mail = await smtp.waitFor(address);
    expect(mail.from).to.equal('mail@webutil.example');
    expect(mail.subject).to.equal('Verify your email address');
    const token = await tokenMailed(address, 'verify-email');

    // Free works as before; keys (on a plan that has them) and purchases wait for the address.
    expect((await json(await browser.fetch('/v1/auth/me'))).data.account.emailVerified).to.equal(false);
    await stack.admin('set-plan', '--email', address, '--plan', 'STARTER');
    await expectFailure(await browser.post('/v1/keys', { name: 'ci' }), 403, 'email_not_verified');
    await expectFailure(await browser.post('/v1/billing/checkout', { pack: 1000 }), 403, 'email_not_verified');
    expect((await json(await browser.fetch('/v1/keys'))).data.keys).to.have.length(0);

    await expectFailure(await browser.post('/v1/auth/verify-email', { token: 'A'.repeat(43) }), 400, 'invalid_token');
    await expectFailure(await browser.post('/v1/auth/verify-email', {}), 400, 'invalid_request');
    const verified = await browser.post('/v1/auth/verify-email', { token });
    expect((await json(verified)).data).to.deep.equal({ email: address, emailVerified: true });
    await expectFailure(await browser.post('/v1/auth/verify-email', { token }), 400, 'invalid_token');

    expect((await json(await browser.fetch('/v1/auth/me'))).data.account.emailVerified).to.equal(true);
    expect((await browser.post('/v1/keys', { name: 'ci' })).status).to.equal(201);
  });

  it('a new link replaces the old one; a verified account is sent none', async () => {
    const address = email();
    const browser = await signedUp(address);
    const first = await tokenMailed(address, 'verify-email');
    const before = smtp.received.length;
    const resent = await json(await browser.post('/v1/auth/verify-email/resend'));
    expect(resent.data).to.deep.equal({ email: address, sent: true });
    const second = await tokenMailed(address, 'verify-email', before);
    expect(second).to.not.equal(first);
    await expectFailure(await browser.post('/v1/auth/verify-email', { token: first }), 400, 'invalid_token');
    expect((await browser.post('/v1/auth/verify-email', { token: second })).status).to.equal(200);
    expect((await json(await browser.post('/v1/auth/verify-email/resend'))).data.sent).to.equal(false);
    await expectFailure(
      await new Browser(stack, freshIp()).post('/v1/auth/verify-email/resend'),
      401,
      'session_required',
    );
  });

  it('accounts an operator made (and those from before verification) count as verified', async () => {
    const address = email();
    await stack.admin('create-account', '--email', address, '--plan', 'STARTER', '--password', PASSWORD);
    const browser = new Browser(stack, freshIp());
    const signedIn = await json(await browser.signIn(address, PASSWORD));
    expect(signedIn.data.account.emailVerified).to.equal(true);
    expect((await browser.post('/v1/keys', { name: 'ops' })).status).to.equal(201);
  });

  it('password reset: the same answer for any address, a 30-minute single-use link, every session ended', async () => {
    const address = email();
    const owner = await signedUp(address);
    const stranger = new Browser(stack, freshIp());
    const unknown = email();
    const forUnknown = await stranger.post('/v1/auth/password-reset', { email: unknown });
    const forKnown = await stranger.post('/v1/auth/password-reset', { email: address });
    expect(forUnknown.status).to.equal(202);
    expect(forKnown.status).to.equal(202);
    const [unknownAnswer, knownAnswer] = [await json(forUnknown), await json(forKnown)];
    expect(unknownAnswer.data).to.deep.equal(knownAnswer.data);
    expect(knownAnswer.data).to.deep.equal({ validMinutes: 30, requested: true });
    const token = await tokenMailed(address, 'reset-password');
    expect(
      smtp.received.some((m) => m.to.includes(unknown)),
      'no mail to an address without an account',
    ).to.equal(false);

    // A weak password is refused before the link is spent.
    await expectFailure(
      await stranger.post('/v1/auth/password-reset/confirm', { token, password: 'short' }),
      400,
      'weak_password',
    );
    const done = await stranger.post('/v1/auth/password-reset/confirm', { token, password: 'a new long password' });
    expect((await json(done)).data).to.deep.equal({ email: address, signedOut: true });
    await expectFailure(
      await stranger.post('/v1/auth/password-reset/confirm', { token, password: 'another long password' }),
      400,
      'invalid_token',
    );
    await expectFailure(await owner.fetch('/v1/auth/me'), 401, 'invalid_session');
    await expectFailure(await new Browser(stack, freshIp()).signIn(address, PASSWORD), 401, 'invalid_credentials');
    const again = await json(await new Browser(stack, freshIp()).signIn(address, 'a new long password'));
    // Following the mailed link proved the mailbox too.
    expect(again.data.account.emailVerified).to.equal(true);
  });

  it('a reset link stops working after 30 minutes', async () => {
    const address = email();
    await signedUp(address);
    expect((await new Browser(stack, freshIp()).post('/v1/auth/password-reset', { email: address })).status).to.equal(
      202,
    );
    const token = await tokenMailed(address, 'reset-password');
    stack.advanceClock(31 * 60_000);
    await expectFailure(
      await new Browser(stack, freshIp()).post('/v1/auth/password-reset/confirm', { token, password: 'too late now!' }),
      400,
      'invalid_token',
    );
  });

  it('reset requests are capped per address (known or not) and per client network', async () => {
    const known = email();
    await signedUp(known);
    for (const address of [email(), known]) {
      for (let i = 0; i < 3; i++)
        expect(
          (await new Browser(stack, freshIp()).post('/v1/auth/password-reset', { email: address })).status,
        ).to.equal(202);
      const capped = await new Browser(stack, freshIp()).post('/v1/auth/password-reset', { email: address });
      await expectFailure(capped, 429, 'password_reset_limit');
      expect(Number(capped.headers.get('retry-after'))).to.be.within(1, 3600);
    }
    const network = new Browser(stack, '203.0.113.77');
    for (let i = 0; i < 10; i++)
      expect((await network.post('/v1/auth/password-reset', { email: email() })).status).to.equal(202);
    await expectFailure(await network.post('/v1/auth/password-reset', { email: email() }), 429, 'password_reset_limit');
    await expectFailure(
      await network.post('/v1/auth/password-reset', { email: 'not an address' }),
      400,
      'invalid_email',
    );
  });

  it('credit notices at 80% and 100% of the cycle, once each; settings turn them off', async () => {
    const { email: address, apiKey } = await account(stack, 'STARTER', '--credits', '10', '--password', PASSWORD);
    const owner = new Browser(stack, freshIp());
    expect((await owner.signIn(address, PASSWORD)).status).to.equal(200);
    expect((await json(await owner.fetch('/v1/account/notices'))).data).to.deep.equal({
      notices: { receipts: true, renewals: true, credits: true },
    });
    const spend = async (calls: number) => {
      for (let i = 0; i < calls; i++) {
        const res = await stack.api(`/v1/down-check?url=${encodeURIComponent(site.url('/ok'))}`, { apiKey });
        expect(res.status).to.equal(200);
      }
    };
    await spend(7);
    await spend(1); // 8 of 10
    const eighty = await smtp.waitFor(address, (m) => m.subject.includes('80%'));
    expect(eighty.text).to.include(`${PUBLIC_BASE_URL}/account`);
    await spend(2); // 10 of 10
    await smtp.waitFor(address, (m) => m.subject.includes('all of this cycle'));
    expect(smtp.received.filter((m) => m.to.includes(address) && m.subject.includes('80%'))).to.have.length(1);

    // Off: a second account spends past both thresholds and is mailed nothing.
    const quiet = await account(stack, 'STARTER', '--credits', '5', '--password', PASSWORD);
    const quietOwner = new Browser(stack, freshIp());
    expect((await quietOwner.signIn(quiet.email, PASSWORD)).status).to.equal(200);
    const changed = await json(await quietOwner.post('/v1/account/notices', { credits: false }));
    expect(changed.data.notices).to.deep.equal({ receipts: true, renewals: true, credits: false });
    await expectFailure(await quietOwner.post('/v1/account/notices', {}), 400, 'invalid_request');
    await expectFailure(
      await quietOwner.post('/v1/account/notices', { credits: false }, { csrf: false }),
      403,
      'csrf_failed',
    );
    for (let i = 0; i < 5; i++)
      expect(
        (await stack.api(`/v1/down-check?url=${encodeURIComponent(site.url('/ok'))}`, { apiKey: quiet.apiKey })).status,
      ).to.equal(200);
    // The first account's 100% mail came after its own last call; give the second as long, then look.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(smtp.received.filter((m) => m.to.includes(quiet.email))).to.have.length(0);
    expect(smtp.received.filter((m) => m.to.includes(address) && m.subject.includes('all of'))).to.have.length(1);
  });
});
