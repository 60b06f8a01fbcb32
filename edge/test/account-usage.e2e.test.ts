import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { account, Browser, eventually, expectFailure, json } from './billing-helpers.js';

const PASSWORD = 'a long enough password';
const DAY_MS = 86_400_000;
const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

interface Day {
  day: string;
  credits: number;
  calls: number;
  operations: { operation: string; credits: number; calls: number }[];
}

/**
 * Issue 39, the account page's chart (decision 0481): GET /v1/account/usage/daily sums an account's
 * spent credits per UTC day and operation, through the REST edge on the embedded store.
 */
describe('account usage by day (GET /v1/account/usage/daily)', function () {
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

  const daily = (query: string, init: { apiKey?: string; anonymous?: boolean } = {}) =>
    stack.api(`/v1/account/usage/daily${query}`, init);

  it('every day of the last 30 (or days), today the last, with the day’s credits by operation', async () => {
    const { email, apiKey } = await account(stack, 'STARTER', '--password', PASSWORD);
    const empty = await json(await daily('', { apiKey }));
    expect(empty.data.days).to.have.length(30);
    expect(empty.data.days.every((d: Day) => d.credits === 0 && d.calls === 0 && d.operations.length === 0)).to.equal(
      true,
    );
    for (let i = 0; i < 3; i++) {
      const res = await stack.api(`/v1/down-check?url=${encodeURIComponent(site.url('/ok'))}`, { apiKey });
      expect(res.status).to.equal(200);
    }
    const meta = await stack.api(`/v1/meta-scan?url=${encodeURIComponent(site.url('/ok'))}`, { apiKey });
    expect(meta.status).to.equal(200);
    // Settlements reach billing just after the answers.
    const days: Day[] = await eventually(async () => {
      const body = await json(await daily('', { apiKey }));
      expect(body.data.days.at(-1).calls).to.equal(4);
      return body.data.days;
    });
    const now = Date.now();
    expect(days[0]!.day).to.be.oneOf([utcDay(now - 29 * DAY_MS), utcDay(now - 30 * DAY_MS)]);
    expect(days.at(-1)).to.deep.include({ credits: 4, calls: 4 });
    expect(days.at(-1)!.operations).to.deep.equal([
      { operation: 'down-check', credits: 3, calls: 3 },
      { operation: 'meta-scan', credits: 1, calls: 1 },
    ]);
    expect(days.slice(0, -1).every((d) => d.calls === 0)).to.equal(true);
    // Consecutive days, oldest first.
    for (let i = 1; i < days.length; i++)
      expect(Date.parse(days[i]!.day) - Date.parse(days[i - 1]!.day)).to.equal(DAY_MS);

    // The signed-in owner reads the same; a shorter range ends today too.
    const owner = new Browser(stack);
    expect((await owner.signIn(email, PASSWORD)).status).to.equal(200);
    const week = await json(await owner.fetch('/v1/account/usage/daily?days=7'));
    expect(week.data.days).to.have.length(7);
    expect(week.data.days.at(-1)).to.deep.equal(days.at(-1));
    expect((await json(await owner.fetch('/v1/account/usage/daily?days=90'))).data.days).to.have.length(90);

    // Another account sees only its own.
    const other = await account(stack, 'STARTER');
    expect((await json(await daily('?days=1', { apiKey: other.apiKey }))).data.days[0].calls).to.equal(0);
  });

  it('bad days are 400 invalid_request; a key with limits 403, no caller 401; a test key’s days are zero', async () => {
    const { email, apiKey } = await account(stack, 'STARTER', '--password', PASSWORD);
    for (const bad of ['0', '91', '-1', '1.5', 'abc', '', '030000', '1e1'])
      await expectFailure(await daily(`?days=${bad}`, { apiKey }), 400, 'invalid_request');
    await expectFailure(await daily('', { anonymous: true }), 401, 'account_required');
    const owner = new Browser(stack);
    expect((await owner.signIn(email, PASSWORD)).status).to.equal(200);
    const limited = await json(await owner.post('/v1/keys', { name: 'narrow', creditLimit: 10 }));
    await expectFailure(await daily('', { apiKey: limited.data.key }), 403, 'owner_required');
    const sandbox = await json(await owner.post('/v1/keys', { name: 'sandbox', mode: 'test' }));
    const res = await stack.api(`/v1/down-check?url=${encodeURIComponent(site.url('/ok'))}`, {
      apiKey: sandbox.data.key,
    });
    expect(res.status).to.equal(200);
    const zero = await json(await daily('?days=3', { apiKey: sandbox.data.key }));
    expect(zero.data.days.map((d: Day) => d.calls)).to.deep.equal([0, 0, 0]);
  });
});
