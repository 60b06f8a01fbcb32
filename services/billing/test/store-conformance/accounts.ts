import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { type ApiKeyRecord, EmailTakenError, type Reservation } from '../../src/stores/store.js';
import { account, hold, MONTH, type StoreUnderTest, T0 } from './fixtures.js';

/** Accounts and their API keys. */
export function accountCases(t: StoreUnderTest): void {
  describe('accounts', () => {
    it('stores and finds an account by id and by email', async () => {
      const a = account();
      await t.store.insertAccount(a);
      expect(await t.store.accountById(a.id)).to.deep.equal(a);
      expect(await t.store.accountByEmail(a.email)).to.deep.equal(a);
      expect(await t.store.accountById(randomUUID())).to.equal(undefined);
      expect(await t.store.accountByEmail('nobody@example.test')).to.equal(undefined);
    });

    it('refuses a second account with the same email', async () => {
      const a = account();
      await t.store.insertAccount(a);
      let error: unknown;
      try {
        await t.store.insertAccount(account({ email: a.email }));
      } catch (err) {
        error = err;
      }
      expect(error).to.be.instanceOf(EmailTakenError);
    });

    it('changes plan, password and top-ups', async () => {
      const a = account({ topUpCredits: 5 });
      await t.store.insertAccount(a);
      const changed = await t.store.changePlan(a.id, {
        plan: 'SCALE',
        creditsPerCycle: 7,
        requestsPerMinute: 9,
        cycleAnchor: T0 + 1,
        cycleEnd: T0 + 2,
        cycleCredits: 7,
      });
      expect(changed).to.include({
        plan: 'SCALE',
        creditsPerCycle: 7,
        requestsPerMinute: 9,
        cycleAnchor: T0 + 1,
        cycleEnd: T0 + 2,
        cycleCredits: 7,
        topUpCredits: 5,
      });
      expect((await t.store.setPasswordHash(a.id, 'scrypt$x'))?.passwordHash).to.equal('scrypt$x');
      expect((await t.store.addTopUp(a.id, 10))?.topUpCredits).to.equal(15);
    });

    it('renews a cycle only from the cycle it expects, once', async () => {
      const a = account({ cycleCredits: 3 });
      await t.store.insertAccount(a);
      await t.store.renewCycle(a.id, a.cycleEnd + 1, { cycleEnd: a.cycleEnd + MONTH, cycleCredits: 100 });
      expect((await t.store.accountById(a.id))?.cycleCredits).to.equal(3);
      await Promise.all(
        [1, 2, 3].map(() => t.store.renewCycle(a.id, a.cycleEnd, { cycleEnd: a.cycleEnd + MONTH, cycleCredits: 100 })),
      );
      const renewed = await t.store.accountById(a.id);
      expect(renewed).to.include({ cycleCredits: 100, cycleEnd: a.cycleEnd + MONTH });
    });

    it('survives a restart', async () => {
      const a = account();
      await t.store.insertAccount(a);
      await t.store.reserveCredits(a.id, 4, hold());
      await t.store.close();
      t.store = await t.reopen();
      expect(await t.store.accountById(a.id)).to.deep.equal({ ...a, cycleCredits: 96 });
      expect(await t.store.expiredReservations(T0 + 120_000, 10)).to.have.length(1);
    });
  });

  describe('API keys', () => {
    const key = (accountId: string, overrides: Partial<ApiKeyRecord> = {}): ApiKeyRecord => ({
      id: randomUUID(),
      accountId,
      name: 'ci',
      prefix: 'wu_live_abcd',
      hash: randomUUID(),
      createdAt: T0,
      lastUsedAt: null,
      revokedAt: null,
      creditLimit: null,
      expiresAt: null,
      allowedOperations: null,
      mode: 'live',
      ...overrides,
    });

    it('finds a key by hash and lists an account’s keys in creation order', async () => {
      const first = key('acct', { createdAt: T0 });
      const second = key('acct', { createdAt: T0 + 1 });
      await t.store.insertApiKey(second);
      await t.store.insertApiKey(first);
      await t.store.insertApiKey(key('other'));
      expect(await t.store.apiKeyByHash(first.hash)).to.deep.equal(first);
      expect(await t.store.apiKeyByHash('nope')).to.equal(undefined);
      expect((await t.store.apiKeysOf('acct')).map((k) => k.id)).to.deep.equal([first.id, second.id]);
    });

    it('revokes a key of its own account once', async () => {
      const k = key('acct');
      await t.store.insertApiKey(k);
      expect(await t.store.revokeApiKey('someone-else', k.id, T0 + 5)).to.equal(undefined);
      expect((await t.store.revokeApiKey('acct', k.id, T0 + 5))?.revokedAt).to.equal(T0 + 5);
      expect((await t.store.revokeApiKey('acct', k.id, T0 + 9))?.revokedAt).to.equal(T0 + 5);
      expect((await t.store.apiKeyByHash(k.hash))?.revokedAt).to.equal(T0 + 5);
    });

    it('keeps a key’s own limits, across a restart', async () => {
      const limited = key('acct', {
        creditLimit: 40,
        expiresAt: T0 + MONTH,
        allowedOperations: ['screenshot', 'down-check'],
      });
      await t.store.insertApiKey(limited);
      expect(await t.store.apiKeyByHash(limited.hash)).to.deep.equal(limited);
      await t.store.close();
      t.store = await t.reopen();
      expect(await t.store.apiKeysOf('acct')).to.deep.equal([limited]);
    });

    it('keeps a key’s mode (a sandbox key is test), across a restart', async () => {
      const live = key('modes', { createdAt: T0 });
      const sandbox = key('modes', { createdAt: T0 + 1, prefix: 'wu_test_abcd', mode: 'test' });
      await t.store.insertApiKey(live);
      await t.store.insertApiKey(sandbox);
      expect((await t.store.apiKeyByHash(sandbox.hash))?.mode).to.equal('test');
      await t.store.close();
      t.store = await t.reopen();
      expect((await t.store.apiKeysOf('modes')).map((k) => k.mode)).to.deep.equal(['live', 'test']);
      expect(await t.store.apiKeyByHash(sandbox.hash)).to.deep.equal(sandbox);
    });

    it('counts a key’s holds toward its cycle spend, refuses past its limit, gives refunds back', async () => {
      const a = account({ cycleCredits: 100 });
      await t.store.insertAccount(a);
      const budget = { id: randomUUID(), limit: 5 };
      const first = await t.store.reserveCredits(a.id, 2, hold(), budget);
      expect(first).to.include({ accountId: a.id, keyId: budget.id, fromCycle: 2 });
      const second = (await t.store.reserveCredits(a.id, 2, hold(), budget)) as Reservation;
      expect(await t.store.keySpend(a.id, a.cycleEnd)).to.deep.equal(new Map([[budget.id, 4]]));
      // 4 + 2 > 5: refused, nothing taken from the account.
      expect(await t.store.reserveCredits(a.id, 2, hold(), budget)).to.deep.equal({ keyLimited: { spent: 4 } });
      expect(await t.balanceOf(a.id)).to.deep.equal({ cycle: 96, topUp: 0 });
      // A failed call's hold goes back to the key too; then the call fits.
      await t.store.settle(second.id, 0);
      expect(await t.store.keySpend(a.id, a.cycleEnd)).to.deep.equal(new Map([[budget.id, 2]]));
      expect(await t.store.reserveCredits(a.id, 3, hold(), budget)).to.include({ keyId: budget.id });
      // A key without a limit only counts; other accounts and cycles are apart.
      const open = { id: randomUUID(), limit: null };
      await t.store.reserveCredits(a.id, 50, hold(), open);
      expect(await t.store.keySpend(a.id, a.cycleEnd)).to.deep.equal(
        new Map([
          [budget.id, 5],
          [open.id, 50],
        ]),
      );
      expect(await t.store.keySpend(a.id, a.cycleEnd + MONTH)).to.deep.equal(new Map());
      expect(await t.store.keySpend(randomUUID(), a.cycleEnd)).to.deep.equal(new Map());
    });

    it('a key’s spend starts again with a new cycle; a refund of the old cycle leaves it alone', async () => {
      const a = account({ cycleCredits: 10 });
      await t.store.insertAccount(a);
      const budget = { id: randomUUID(), limit: 6 };
      const old = (await t.store.reserveCredits(a.id, 5, hold(), budget)) as Reservation;
      const next = a.cycleEnd + MONTH;
      await t.store.renewCycle(a.id, a.cycleEnd, { cycleEnd: next, cycleCredits: 100 });
      expect(await t.store.reserveCredits(a.id, 6, hold(), budget)).to.include({ cycleEnd: next });
      await t.store.settle(old.id, 0);
      expect(await t.store.keySpend(a.id, next)).to.deep.equal(new Map([[budget.id, 6]]));
      expect(await t.store.reserveCredits(a.id, 1, hold(), budget)).to.deep.equal({ keyLimited: { spent: 6 } });
    });

    it('concurrent holds of one key never pass its limit', async function () {
      if (!t.harness.atomicGuards) this.skip();
      const a = account({ cycleCredits: 100 });
      await t.store.insertAccount(a);
      const budget = { id: randomUUID(), limit: 20 };
      const outcomes = await Promise.all(
        Array.from({ length: 50 }, () => t.store.reserveCredits(a.id, 1, hold(), budget)),
      );
      expect(outcomes.filter((o) => o !== undefined && 'id' in o)).to.have.length(20);
      expect(await t.balanceOf(a.id)).to.deep.equal({ cycle: 80, topUp: 0 });
      expect(await t.store.keySpend(a.id, a.cycleEnd)).to.deep.equal(new Map([[budget.id, 20]]));
    });

    it('records use at most once per interval', async () => {
      const k = key('acct');
      await t.store.insertApiKey(k);
      await t.store.touchApiKey(k.id, T0 + 1_000, 60_000);
      await t.store.touchApiKey(k.id, T0 + 30_000, 60_000);
      expect((await t.store.apiKeyByHash(k.hash))?.lastUsedAt).to.equal(T0 + 1_000);
      await t.store.touchApiKey(k.id, T0 + 61_000, 60_000);
      expect((await t.store.apiKeyByHash(k.hash))?.lastUsedAt).to.equal(T0 + 61_000);
    });
  });
}
