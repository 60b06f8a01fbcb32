import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { Accounts } from '../src/accounts.js';
import { creditsSpent, expiredHolds } from '../src/credit-metrics.js';
import { Ledger } from '../src/ledger.js';
import { addMonths, cycleEndAfter } from '../src/plans.js';
import { RateLimiter } from '../src/rate-limit.js';
import type { BillingStore } from '../src/stores/store.js';
import { openSqliteStore } from '../src/stores/store-sqlite.js';

const DAY = 86_400_000;

/** The credits-spent counter's value (process-wide, so tests compare before and after). */
const spentTotal = async () => (await creditsSpent.get()).values[0]?.value ?? 0;

const SPENT = { outcome: 'spent', ended: true };
describe('billing domain (embedded store, injected clock)', () => {
  let dir: string;
  let store: BillingStore;
  let now: number;
  const clock = () => now;
  let ledger: Ledger;
  let accounts: Accounts;

  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'billing-domain-'));
    store = openSqliteStore(path.join(dir, 'billing.sqlite'));
    now = Date.UTC(2026, 0, 31, 10);
    ledger = new Ledger(store, clock, {
      anonymous: { creditsPerDay: 3, requestsPerMinute: 10, rendersInFlight: 2 },
      reservationGraceMs: 1_000,
    });
    accounts = new Accounts(store, clock);
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  describe('monthly cycles', () => {
    it('renew on the anchor’s day of month, clamped to short months', () => {
      const anchor = Date.UTC(2026, 0, 31, 10);
      expect(new Date(addMonths(anchor, 1)).toISOString()).to.equal('2026-02-28T10:00:00.000Z');
      expect(new Date(addMonths(anchor, 2)).toISOString()).to.equal('2026-03-31T10:00:00.000Z');
      expect(new Date(addMonths(Date.UTC(2027, 11, 31), 2)).toISOString()).to.equal('2028-02-29T00:00:00.000Z');
      expect(new Date(cycleEndAfter(anchor, Date.UTC(2026, 4, 1))).toISOString()).to.equal('2026-05-31T10:00:00.000Z');
    });

    it(
      'a new cycle restores the plan’s credits (skipping missed months); ' +
        'top-ups persist and are spent after cycle credits',
      async () => {
        let account = await accounts.create({ email: 'a@example.test', plan: 'STARTER' });
        account = await accounts.changePlan(account, 'STARTER', { creditsPerCycle: 3 });
        account = await accounts.addTopUp(account, 5);
        const payer = { kind: 'account' as const, account };
        for (let i = 0; i < 4; i++) expect(await ledger.reserve(payer, 1, 0)).to.have.property('reservationId');
        expect(await store.accountById(account.id)).to.include({ cycleCredits: 0, topUpCredits: 4 });
        now += 95 * DAY;
        expect(await ledger.balance(payer)).to.deep.equal({ limit: 3, remaining: 7 });
        const renewed = (await store.accountById(account.id))!;
        expect(renewed.cycleEnd).to.be.above(now);
        expect(renewed.cycleEnd - now).to.be.below(31 * DAY);
      },
    );

    it('a hold that runs short says how much is left', async () => {
      const account = await accounts.changePlan(
        await accounts.create({ email: 'b@example.test', plan: 'STARTER' }),
        'STARTER',
        { creditsPerCycle: 1 },
      );
      expect(await ledger.reserve({ kind: 'account', account }, 2, 0)).to.deep.equal({
        short: { limit: 1, remaining: 1 },
      });
    });
  });

  describe('the anonymous allowance', () => {
    it('is per subject per UTC day', async () => {
      const payer = { kind: 'anonymous' as const, subject: '203.0.113.1' };
      for (let i = 0; i < 3; i++) expect(await ledger.reserve(payer, 1, 0)).to.have.property('reservationId');
      expect(await ledger.reserve(payer, 1, 0)).to.deep.equal({ short: { limit: 3, remaining: 0 } });
      expect(await ledger.balance({ kind: 'anonymous', subject: '203.0.113.2' })).to.deep.equal({
        limit: 3,
        remaining: 3,
      });
      now = Date.UTC(2026, 1, 1); // midnight UTC
      expect(await ledger.balance(payer)).to.deep.equal({ limit: 3, remaining: 3 });
    });
  });

  describe('holds', () => {
    it('settle once; unsettled ones expire after the route deadline plus grace and return their credits', async () => {
      const account = await accounts.create({ email: 'c@example.test', plan: 'STARTER' });
      const payer = { kind: 'account' as const, account };
      const spent = await ledger.reserve(payer, 2, 5_000);
      const lost = await ledger.reserve(payer, 3, 5_000);
      if (!('reservationId' in spent) || !('reservationId' in lost)) throw new Error('holds refused');
      expect(await ledger.settle(spent.reservationId, [{ operation: 'render-page', credits: 2 }])).to.deep.equal(SPENT);
      expect(await ledger.balance(payer)).to.deep.equal({ limit: 3000, remaining: 2995 });
      expect(await ledger.settle(spent.reservationId, [])).to.deep.equal({ outcome: 'nothing', ended: false });
      now += 5_999;
      expect(await ledger.expireHolds()).to.deep.equal({ holds: 0, credits: 0 });
      now += 2;
      const expiredBefore = (await expiredHolds.get()).values[0]?.value ?? 0;
      expect(await ledger.expireHolds()).to.deep.equal({ holds: 1, credits: 3 });
      expect(((await expiredHolds.get()).values[0]?.value ?? 0) - expiredBefore, 'counted').to.equal(1);
      expect(await ledger.balance(payer)).to.deep.equal({ limit: 3000, remaining: 2998 });
      expect(await ledger.settle(lost.reservationId, [{ operation: 'render-page', credits: 3 }])).to.deep.equal({
        outcome: 'expired',
        ended: false,
      });
    });

    it('a lease settles once for every call it served: their sum is spent, each is recorded', async () => {
      const account = await accounts.create({ email: 'd@example.test', plan: 'STARTER' });
      const payer = { kind: 'account' as const, account };
      const lease = await ledger.reserve(payer, 40, 5_000);
      if (!('reservationId' in lease)) throw new Error('lease refused');
      const spentBefore = await spentTotal();
      const calls = [
        { operation: 'render-page', credits: 5, target: 'https://example.test/page' },
        { operation: 'scan-meta', credits: 1 },
        { operation: 'free', credits: 0 },
        { operation: 'check-links', credits: 4 },
      ];
      expect(await ledger.settle(lease.reservationId, calls)).to.deep.equal(SPENT);
      expect(await ledger.balance(payer)).to.deep.equal({ limit: 3000, remaining: 2990 });
      expect((await spentTotal()) - spentBefore).to.equal(10);
      expect(await ledger.recentUsage(account)).to.deep.equal([
        { accountId: account.id, operation: 'check-links', credits: 4, at: now },
        { accountId: account.id, operation: 'scan-meta', credits: 1, at: now },
        { accountId: account.id, operation: 'render-page', credits: 5, at: now, target: 'https://example.test/page' },
      ]);
      // A retry of the same settlement is told its calls are spent, and spends nothing again.
      expect(await ledger.settle(lease.reservationId, calls)).to.deep.equal({ outcome: 'spent', ended: false });
      expect(await ledger.balance(payer)).to.deep.equal({ limit: 3000, remaining: 2990 });
      expect(await ledger.recentUsage(account)).to.have.length(3);
    });

    it('calls beyond their lease spend and record only what it held', async () => {
      const account = await accounts.create({ email: 'e@example.test', plan: 'STARTER' });
      const payer = { kind: 'account' as const, account };
      const lease = await ledger.reserve(payer, 6, 5_000);
      if (!('reservationId' in lease)) throw new Error('lease refused');
      const spentBefore = await spentTotal();
      const calls = ['a', 'b', 'c'].map((operation) => ({ operation, credits: 4 }));
      expect(await ledger.settle(lease.reservationId, calls)).to.deep.equal(SPENT);
      expect(await ledger.balance(payer)).to.deep.equal({ limit: 3000, remaining: 2994 });
      expect((await spentTotal()) - spentBefore).to.equal(6);
      expect((await ledger.recentUsage(account)).map(({ operation, credits }) => [operation, credits])).to.deep.equal([
        ['b', 2],
        ['a', 4],
      ]);
    });

    it('an anonymous lease returns its unused credits to the day’s allowance', async () => {
      const payer = { kind: 'anonymous' as const, subject: '203.0.113.9' };
      const lease = await ledger.reserve(payer, 3, 5_000);
      if (!('reservationId' in lease)) throw new Error('lease refused');
      expect(await ledger.settle(lease.reservationId, [{ operation: 'render-page', credits: 1 }])).to.deep.equal(SPENT);
      expect(await ledger.balance(payer)).to.deep.equal({ limit: 3, remaining: 2 });
    });
  });

  it('rate limits count per minute and say when the window ends', async () => {
    const limiter = new RateLimiter(store, clock);
    now = Date.UTC(2026, 0, 31, 10, 0, 45);
    const minute = String(Math.floor(now / 60_000));
    for (let i = 1; i <= 2; i++)
      expect(await limiter.hit('s', 2, 3)).to.deep.equal({
        window: { key: 's', perMinute: 2, used: i, minute, rendersInFlight: 3 },
      });
    expect(await limiter.hit('s', 2, 3)).to.deep.equal({
      window: { key: 's', perMinute: 2, used: 3, minute, rendersInFlight: 3 },
      retryAfterSeconds: 15,
    });
    now += 15_000;
    expect((await limiter.hit('s', 2, 3)).retryAfterSeconds).to.equal(undefined);
  });

  it('adds requests counted elsewhere to their window, and drops them once the window has ended', async () => {
    const limiter = new RateLimiter(store, clock);
    now = Date.UTC(2026, 0, 31, 11, 0, 10);
    const minute = Math.floor(now / 60_000);
    await limiter.add('t', minute, 4);
    await limiter.add('t', minute - 1, 50);
    expect((await limiter.hit('t', 10, 3)).window.used).to.equal(5);
  });
});
