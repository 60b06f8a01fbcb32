import { randomUUID } from 'node:crypto';
import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { account, Browser, creditsHeader, expectFailure, json, quota } from './billing-helpers.js';

/**
 * Idempotency-Key on credit-spending POSTs through the REST edge, kept by billing's store: a retry
 * of a call that succeeded gets its answer and spends nothing; a retry racing the first call is
 * 409; the key with another request is 422; a failed call frees its key.
 */
describe('idempotent retries through the edge', function () {
  this.timeout(120_000);
  let site: FixtureSite;
  let stack: TestStack;

  before(async () => {
    site = await startFixtureSite();
    stack = await startTestStack({
      allowTargets: '127.0.0.0/8',
      envFor: { edge: { TRUSTED_PROXIES: '127.0.0.1/32' } },
    });
  });
  after(async () => {
    await stack?.stop();
    await site?.close();
  });

  const brokenLinks = (apiKey: string, key: string | undefined, url: string) =>
    stack.api('/v1/broken-links', {
      apiKey,
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { 'Idempotency-Key': key }) },
      body: JSON.stringify({ url }),
    });

  it('a retry racing the first call is 409; once it succeeded, a retry gets its answer, spending nothing', async () => {
    const { apiKey } = await account(stack, 'STARTER', '--credits', '100');
    const key = randomUUID();
    const slow = site.url('/slow?ms=3000');
    const first = brokenLinks(apiKey, key, slow);
    // The retry leaves while the first call is still checking its slow page.
    await new Promise((r) => setTimeout(r, 1000));
    const racing = await brokenLinks(apiKey, key, slow);
    await expectFailure(racing, 409, 'idempotency_key_in_use');
    expect(Number(racing.headers.get('retry-after'))).to.be.at.least(1);

    const answered = await first;
    expect(answered.status).to.equal(200);
    expect(answered.headers.get('idempotent-replayed')).to.equal(null);
    const firstBody = await answered.text();
    expect((await quota(stack, { apiKey })).remaining).to.equal(98);

    const replayed = await brokenLinks(apiKey, key, slow);
    expect(replayed.status).to.equal(200);
    expect(replayed.headers.get('idempotent-replayed')).to.equal('true');
    expect(await replayed.text()).to.equal(firstBody);
    expect(creditsHeader(replayed)).to.equal(98);
    expect((await quota(stack, { apiKey })).remaining).to.equal(98);
  });

  it('two identical calls sent at once run once: one answer, one 409, credits spent once', async () => {
    const { apiKey } = await account(stack, 'STARTER', '--credits', '100');
    const key = randomUUID();
    const both = await Promise.all([0, 1].map(() => brokenLinks(apiKey, key, site.url('/slow?ms=1500'))));
    expect(both.map((r) => r.status).sort()).to.deep.equal([200, 409]);
    expect((await quota(stack, { apiKey })).remaining).to.equal(98);
  });

  it('the key with another body is 422; a malformed key is 400; neither spends', async () => {
    const { apiKey } = await account(stack, 'STARTER', '--credits', '100');
    const key = randomUUID();
    expect((await brokenLinks(apiKey, key, site.url('/ok'))).status).to.equal(200);
    await expectFailure(await brokenLinks(apiKey, key, site.url('/ok?other')), 422, 'idempotency_key_mismatch');
    await expectFailure(await brokenLinks(apiKey, 'k'.repeat(256), site.url('/ok')), 400, 'invalid_idempotency_key');
    expect((await quota(stack, { apiKey })).remaining).to.equal(98);
    // Keys are the caller's own: another account's same key runs its own call.
    const other = await account(stack, 'STARTER', '--credits', '100');
    const theirs = await brokenLinks(other.apiKey, key, site.url('/ok?other'));
    expect(theirs.status).to.equal(200);
    expect(theirs.headers.get('idempotent-replayed')).to.equal(null);
  });

  it('a failed call frees its key: the retry runs again, and spends nothing either', async () => {
    const { apiKey } = await account(stack, 'STARTER', '--credits', '100');
    const key = randomUUID();
    const unreachable = 'http://127.0.0.1:1/';
    const failed = await brokenLinks(apiKey, key, unreachable);
    expect(failed.status).to.be.within(400, 599);
    const { error } = await json(failed);
    const again = await brokenLinks(apiKey, key, unreachable);
    expect(again.status).to.equal(failed.status);
    expect(again.headers.get('idempotent-replayed')).to.equal(null);
    expect((await json(again)).error?.code).to.equal(error?.code);
    expect((await quota(stack, { apiKey })).remaining).to.equal(100);
  });

  it('an anonymous caller’s keys are its clearance’s: a neighbour neither replays nor blocks them', async () => {
    // Two browsers behind one address (one NAT): the same client network, each with its own clearance.
    const first = new Browser(stack, '192.0.2.90');
    const neighbour = new Browser(stack, '192.0.2.90');
    await first.passChallenge();
    await neighbour.passChallenge();
    const key = randomUUID();
    const call = (browser: Browser) =>
      browser.fetch('/v1/broken-links', {
        method: 'POST',
        headers: { 'Idempotency-Key': key },
        body: JSON.stringify({ url: site.url('/ok') }),
      });
    const answered = await call(first);
    expect(answered.status, await answered.clone().text()).to.equal(200);
    expect(answered.headers.get('idempotent-replayed')).to.equal(null);
    const retried = await call(first);
    expect(retried.headers.get('idempotent-replayed')).to.equal('true');
    expect(await retried.text()).to.equal(await answered.text());
    // The neighbour's call with the same key and body runs on its own: no replay of the first's answer.
    const own = await call(neighbour);
    expect(own.status, await own.clone().text()).to.equal(200);
    expect(own.headers.get('idempotent-replayed')).to.equal(null);
  });
});
