import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { account, Browser, creditsHeader, expectFailure, json, quota } from './billing-helpers.js';

const PASSWORD = 'a long enough password';
const HOUR = 3_600_000;
const MONTH = 32 * 24 * HOUR;

/**
 * API keys with limits of their own (decision 0203), through the REST edge: credits per cycle,
 * an expiry and the operations a key may call. Each refusal spends nothing and fetches nothing;
 * the edge's shortcuts (its view of a caller, credit leases) never answer for such a key.
 */
describe('API keys with their own limits', function () {
  this.timeout(120_000);
  let site: FixtureSite;
  let stack: TestStack;
  let ips = 0;
  /** How far billing's clock has been moved. */
  let moved = 0;
  const advance = (ms: number) => {
    moved += ms;
    stack.advanceClock(ms);
  };
  const downCheck = (path = '/ok') => `/v1/down-check?url=${encodeURIComponent(site.url(path))}`;
  const metaScan = (path = '/ok') => `/v1/meta-scan?url=${encodeURIComponent(site.url(path))}`;
  const fetchesOf = (path: string) => site.requests.filter((r) => r.path.startsWith(path)).length;

  /** A signed-in owner of a fresh account (credits as given) and a key made with `limits`. */
  async function keyWith(limits: Record<string, unknown>, credits = '1000') {
    const owner = await account(stack, 'STARTER', '--password', PASSWORD, '--credits', credits);
    const browser = new Browser(stack, `192.0.2.${++ips}`);
    expect((await browser.signIn(owner.email, PASSWORD)).status).to.equal(200);
    const res = await browser.post('/v1/keys', { name: 'limited', ...limits });
    const body = await json(res);
    expect(res.status, JSON.stringify(body)).to.equal(201);
    const listed = async () => {
      const keys = (await json(await browser.fetch('/v1/keys'))).data.keys as Record<string, unknown>[];
      return keys.find((k) => k.id === body.data.id)!;
    };
    return { apiKey: body.data.key as string, created: body.data, browser, listed, owner };
  }

  before(async () => {
    site = await startFixtureSite();
    stack = await startTestStack({
      allowTargets: '127.0.0.0/8',
      clock: true,
      envFor: { edge: { TRUSTED_PROXIES: '127.0.0.1/32' } },
    });
  });
  after(async () => {
    await stack?.stop();
    await site?.close();
  });

  it('are created with their limits and listed with them, their spend this cycle and last use', async () => {
    const expiresAt = new Date(Date.now() + 30 * 24 * HOUR).toISOString();
    const { apiKey, created, listed } = await keyWith({
      creditLimit: 50,
      expiresAt,
      allowedOperations: ['down-check', 'screenshot'],
    });
    expect(created).to.include({ creditLimit: 50, expiresAt, creditsSpentThisCycle: 0, lastUsedAt: null });
    expect(created.allowedOperations).to.deep.equal(['down-check', 'screenshot']);
    expect((await stack.api(downCheck(), { apiKey })).status).to.equal(200);
    const entry = await listed();
    expect(entry).to.include({ creditLimit: 50, expiresAt, creditsSpentThisCycle: 1 });
    expect(entry.lastUsedAt).to.be.a('string');
    expect(JSON.stringify(entry)).to.not.include(apiKey);

    // A key without limits: nulls and an empty list, and its spend counted all the same.
    const plain = await keyWith({});
    expect(plain.created).to.include({ creditLimit: null, expiresAt: null, creditsSpentThisCycle: 0 });
    expect(plain.created.allowedOperations).to.deep.equal([]);
    expect((await stack.api(downCheck(), { apiKey: plain.apiKey })).status).to.equal(200);
    expect(await plain.listed()).to.include({ creditsSpentThisCycle: 1 });
  });

  it('limits out of bounds are 400 and make no key', async () => {
    const { browser, listed } = await keyWith({});
    const before = ((await json(await browser.fetch('/v1/keys'))).data.keys as unknown[]).length;
    await expectFailure(await browser.post('/v1/keys', { name: 'x', creditLimit: 0 }), 400, 'invalid_request');
    await expectFailure(await browser.post('/v1/keys', { name: 'x', creditLimit: 2.5 }), 400, 'invalid_request');
    await expectFailure(await browser.post('/v1/keys', { name: 'x', expiresAt: 'tomorrow' }), 400, 'invalid_request');
    await expectFailure(
      await browser.post('/v1/keys', { name: 'x', expiresAt: '2020-01-01T00:00:00Z' }),
      400,
      'invalid_expires_at',
    );
    const unknown = await expectFailure(
      await browser.post('/v1/keys', { name: 'x', allowedOperations: ['quota'] }),
      400,
      'invalid_request',
    );
    expect(unknown.error?.message).to.include('down-check');
    await expectFailure(await browser.post('/v1/keys', { name: 'x', allowedOperations: [] }), 400, 'invalid_request');
    expect(((await json(await browser.fetch('/v1/keys'))).data.keys as unknown[]).length).to.equal(before);
    expect(await listed()).to.be.an('object');
  });

  it('a key past its credit limit gets 402 key_credit_limit, creditsRequired; nothing spent or fetched', async () => {
    const { apiKey, listed } = await keyWith({ creditLimit: 3 });
    // A failed call spends nothing, of the account or of the key.
    await expectFailure(await stack.api(metaScan('/status/404'), { apiKey }), 500, 'target_http_error');
    for (let i = 0; i < 3; i++) expect((await stack.api(downCheck('/ok?limit'), { apiKey })).status).to.equal(200);
    expect(await listed()).to.include({ creditsSpentThisCycle: 3 });
    const fetched = fetchesOf('/ok?limit');
    const refused = await stack.api(downCheck('/ok?limit'), { apiKey });
    const body = await expectFailure(refused, 402, 'key_credit_limit');
    expect(body.error?.creditsRequired).to.equal(1);
    expect(body.error?.message).to.match(/may spend 3 per cycle/);
    // The account still has credits: the header says so; the refusal fetched and spent nothing.
    expect(creditsHeader(refused)).to.equal(997);
    expect(fetchesOf('/ok?limit')).to.equal(fetched);
    expect(await quota(stack, { apiKey })).to.include({ remaining: 997 });
    expect(await listed()).to.include({ creditsSpentThisCycle: 3 });
  });

  it('the credit limit holds against a burst (no credit lease pays a limited key’s calls)', async () => {
    const { apiKey, listed } = await keyWith({ creditLimit: 12 });
    const statuses: number[] = [];
    // Sequential bursts make the edge offer a lease (a busy key); billing holds each call instead.
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, () => stack.api(downCheck('/ok?burst'), { apiKey })),
      );
      for (const res of answers) {
        statuses.push(res.status);
        if (res.status !== 200) await expectFailure(res, 402, 'key_credit_limit');
      }
    }
    expect(statuses.filter((s) => s === 200)).to.have.length(12);
    expect(await quota(stack, { apiKey })).to.include({ remaining: 988 });
    expect(await listed()).to.include({ creditsSpentThisCycle: 12 });
  });

  it('the key’s spend starts again with the account’s next cycle', async () => {
    const { apiKey, listed, browser, owner } = await keyWith({ creditLimit: 1 });
    expect((await stack.api(downCheck(), { apiKey })).status).to.equal(200);
    await expectFailure(await stack.api(downCheck(), { apiKey }), 402, 'key_credit_limit');
    advance(MONTH);
    // The session has ended meanwhile.
    expect((await browser.signIn(owner.email, PASSWORD)).status).to.equal(200);
    expect(await listed()).to.include({ creditsSpentThisCycle: 0 });
    expect((await stack.api(downCheck(), { apiKey })).status).to.equal(200);
    expect(await listed()).to.include({ creditsSpentThisCycle: 1 });
  });

  it('a key used on an operation it may not call gets 403 operation_not_allowed; free reads stay open', async () => {
    const { apiKey } = await keyWith({ allowedOperations: ['down-check'] });
    expect((await stack.api(downCheck(), { apiKey })).status).to.equal(200);
    const fetched = fetchesOf('/ok?op');
    const refused = await stack.api(metaScan('/ok?op'), { apiKey });
    const body = await expectFailure(refused, 403, 'operation_not_allowed');
    expect(body.error?.message).to.include('meta-scan').and.include('down-check');
    expect(creditsHeader(refused)).to.equal(999);
    expect(fetchesOf('/ok?op')).to.equal(fetched);
    const screenshot = await stack.api('/v1/screenshot', {
      apiKey,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: site.url('/ok?op') }),
    });
    await expectFailure(screenshot, 403, 'operation_not_allowed');
    expect(fetchesOf('/ok?op')).to.equal(fetched);
    expect(await quota(stack, { apiKey })).to.include({ remaining: 999 });
  });

  it('an expired key gets 401 key_expired on every route, at once (no view answers for it)', async () => {
    const expiresAt = new Date(Date.now() + moved + HOUR).toISOString();
    const { apiKey, listed } = await keyWith({ expiresAt });
    expect((await stack.api(downCheck(), { apiKey })).status).to.equal(200);
    // The quota read just now would let a view answer the next one; this key's never does.
    expect(await quota(stack, { apiKey })).to.include({ remaining: 999 });
    advance(2 * HOUR);
    const quotaRes = await stack.api('/v1/quota', { apiKey });
    const body = await expectFailure(quotaRes, 401, 'key_expired');
    expect(body.error?.message).to.include(expiresAt);
    const fetched = fetchesOf('/ok?expired');
    await expectFailure(await stack.api(downCheck('/ok?expired'), { apiKey }), 401, 'key_expired');
    expect(fetchesOf('/ok?expired')).to.equal(fetched);
    expect(await listed()).to.include({ creditsSpentThisCycle: 1, expiresAt });
  });
});
