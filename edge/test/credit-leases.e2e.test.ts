import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { account, Browser, creditsHeader, eventually, expectFailure, json, quota } from './billing-helpers.js';

/** How long the edge's view of a caller, and so a lease, lasts here: long enough to outlast a billing restart. */
const LEASE_MS = 4_000;

/**
 * Issue 13: a busy API-key caller's calls are paid from a lease (one hold for many calls) without
 * an authorization of their own; its settlement spends what they cost and returns the rest, with
 * the guarantees of a single hold: no credit lost, none spent twice, a lease nobody settles
 * expires. Issue 29: each success is spent from the lease at billing before it is answered (a
 * partial settlement naming the call), so an answered success stays spent whatever dies.
 */
describe('credit leases through the edge', function () {
  this.timeout(120_000);
  let site: FixtureSite;
  let stack: TestStack;
  let apiKey: string;
  const downCheck = () => stack.api(`/v1/down-check?url=${encodeURIComponent(site.url('/ok'))}`, { apiKey });

  before(async () => {
    site = await startFixtureSite();
    stack = await startTestStack({
      allowTargets: '127.0.0.0/8',
      clock: true,
      env: { RESERVATION_SWEEP_MS: '200' },
      envFor: { edge: { CALLER_VIEW_MS: String(LEASE_MS) } },
    });
  });
  after(async () => {
    await stack?.stop();
    await site?.close();
  });

  /**
   * A new account's key makes ten paid calls in a row: from the ninth on, the caller is busy and
   * its calls are paid from a lease. Returns the account's email.
   */
  async function becomeBusy(...options: string[]): Promise<string> {
    // The edge counts a leased call in the caller's rate window: start well inside a minute.
    const second = new Date().getSeconds();
    if (second > 45) await new Promise((r) => setTimeout(r, (61 - second) * 1000));
    const created = await account(stack, 'STARTER', '--credits', '5000', '--rate-limit', '100000', ...options);
    apiKey = created.apiKey;
    for (let i = 1; i <= 10; i++) {
      const res = await downCheck();
      expect(res.status).to.equal(200);
      expect(creditsHeader(res)).to.equal(5000 - i);
    }
    return created.email;
  }

  it('answers a leased call once billing has its spend, and spends exactly what the calls cost', async () => {
    await becomeBusy();
    // Its unused credits are held at billing but still the caller's: the quota read counts them.
    expect(await quota(stack, { apiKey })).to.include({ remaining: 4990 });
    await stack.kill('billing');
    // Paid from the lease, its work done while billing is away: answered once billing is back.
    const waiting = downCheck();
    await new Promise((r) => setTimeout(r, 500));
    await stack.start('billing');
    const res = await waiting;
    expect(res.status, 'paid from the lease').to.equal(200);
    expect(creditsHeader(res)).to.equal(4989);
    for (let i = 12; i <= 15; i++) {
      const res = await downCheck();
      expect(res.status, 'paid from the lease').to.equal(200);
      expect(creditsHeader(res)).to.equal(5000 - i);
    }
    // Past the lease and the edge's view, billing answers: the held lease would show as 4892 (8
    // single calls spent, 100 held); settled, it shows the 15 calls and nothing else.
    await new Promise((r) => setTimeout(r, LEASE_MS + 500));
    await eventually(async () => expect(await quota(stack, { apiKey })).to.include({ remaining: 4985 }), 30_000);
  });

  it('stops a revoked key once its lease has ended, within CALLER_VIEW_MS', async () => {
    const email = await becomeBusy('--password', 'correct horse battery');
    const browser = new Browser(stack, '192.0.2.40');
    expect((await browser.signIn(email, 'correct horse battery')).status).to.equal(200);
    const keys = (await json(await browser.fetch('/v1/keys'))).data.keys as { id: string; prefix: string }[];
    const key = keys.find((k) => apiKey.startsWith(k.prefix));
    expect((await browser.fetch(`/v1/keys/${key?.id}`, { method: 'DELETE' })).status).to.equal(200);
    const revokedAt = Date.now();
    const statuses = new Set<number>();
    await eventually(async () => {
      const res = await downCheck();
      statuses.add(res.status);
      await expectFailure(res, 401, 'revoked_api_key');
    }, 30_000);
    // Until then its calls were paid from the lease taken before the revocation, and nothing else.
    expect([...statuses].filter((status) => status !== 200 && status !== 401)).to.deep.equal([]);
    expect(Date.now() - revokedAt, 'a liveness bound, well past the lease').to.be.below(LEASE_MS + 10_000);
  });

  // Late: it moves billing's clock, which the edge's rate windows (its own clock) no longer match.
  it('an edge SIGKILLed holding a lease: its answered calls stay spent, the rest returns at expiry', async () => {
    await becomeBusy();
    await stack.kill('edge');
    await stack.start('edge');
    // Eight single calls spent, the two the lease paid spent from it, its other 98 credits held.
    expect(await quota(stack, { apiKey })).to.include({ remaining: 4892 });
    stack.advanceClock(200_000);
    await eventually(async () => expect(await quota(stack, { apiKey })).to.include({ remaining: 4990 }), 30_000);
    await new Promise((r) => setTimeout(r, 1_000)); // more expiry sweeps: nothing else returns
    expect(await quota(stack, { apiKey }), 'the ten answered calls, exactly').to.include({ remaining: 4990 });
  });

  // After the one above: billing's clock runs ahead of the edge's, which changes when leases end, not what is spent.
  it('leased calls, several settlements in flight, then the edge SIGKILLed: each success spent', async () => {
    await becomeBusy();
    const answers = await Promise.all(Array.from({ length: 60 }, () => downCheck()));
    const successes = answers.filter((res) => res.status === 200).length;
    expect(successes, JSON.stringify(answers.map((res) => res.status))).to.be.above(0);
    await stack.kill('edge');
    await stack.start('edge');
    // Past every hold's expiry: what was not spent has come back, so the balance shows exactly what was.
    stack.advanceClock(200_000);
    const spent = 10 + successes;
    await eventually(
      async () => expect(await quota(stack, { apiKey })).to.include({ remaining: 5000 - spent }),
      30_000,
    );
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await quota(stack, { apiKey }), 'every answered success, exactly').to.include({ remaining: 5000 - spent });
  });
});
