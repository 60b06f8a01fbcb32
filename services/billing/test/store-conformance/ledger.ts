import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { account, hold, MONTH, type StoreUnderTest, T0 } from './fixtures.js';

/** Credit holds, the anonymous allowance, key spend and usage. */
export function ledgerCases(t: StoreUnderTest): void {
  describe('credit holds', () => {
    it('spends cycle credits first, then top-ups, splitting a hold across both', async () => {
      const a = account({ cycleCredits: 3, topUpCredits: 5 });
      await t.store.insertAccount(a);
      const first = await t.store.reserveCredits(a.id, 2, hold());
      expect(first).to.include({ accountId: a.id, fromCycle: 2, fromTopUp: 0, cycleEnd: a.cycleEnd });
      const split = await t.store.reserveCredits(a.id, 2, hold());
      expect(split).to.include({ fromCycle: 1, fromTopUp: 1 });
      const last = await t.store.reserveCredits(a.id, 4, hold());
      expect(last).to.include({ fromCycle: 0, fromTopUp: 4 });
      expect(await t.balanceOf(a.id)).to.deep.equal({ cycle: 0, topUp: 0 });
    });

    it('refuses a hold larger than the balance and changes nothing', async () => {
      const a = account({ cycleCredits: 1, topUpCredits: 1 });
      await t.store.insertAccount(a);
      expect(await t.store.reserveCredits(a.id, 3, hold())).to.equal(undefined);
      expect(await t.store.reserveCredits(randomUUID(), 1, hold())).to.equal(undefined);
      expect(await t.balanceOf(a.id)).to.deep.equal({ cycle: 1, topUp: 1 });
      expect(await t.store.expiredReservations(Number.MAX_SAFE_INTEGER, 10)).to.have.length(0);
    });

    it('mixed 1- and 2-credit holds one after another take exactly the balance, cycle first', async () => {
      // 1, 2, 1, 2, ...: after 49 cycle credits a 2-credit hold meets 1 left, so it straddles.
      const a = account({ cycleCredits: 50, topUpCredits: 50 });
      await t.store.insertAccount(a);
      const results = [];
      for (let i = 0; i < 150; i++) results.push(await t.store.reserveCredits(a.id, (i % 2) + 1, hold()));
      const held = results.filter((r) => r !== undefined);
      expect(held.reduce((sum, r) => sum + r.fromCycle + r.fromTopUp, 0)).to.equal(100);
      expect(held.reduce((sum, r) => sum + r.fromCycle, 0)).to.equal(50);
      expect(
        held.filter((r) => r.fromCycle > 0 && r.fromTopUp > 0).map((r) => [r.fromCycle, r.fromTopUp]),
      ).to.deep.equal([[1, 1]]);
      expect(await t.balanceOf(a.id)).to.deep.equal({ cycle: 0, topUp: 0 });
      expect(await t.store.reserveCredits(a.id, 1, hold())).to.equal(undefined);
    });

    it('200 concurrent 1-credit holds on 100 credits (60 cycle + 40 top-up): exactly 100 succeed', async function () {
      if (!t.harness.atomicGuards) this.skip();
      const a = account({ cycleCredits: 60, topUpCredits: 40 });
      await t.store.insertAccount(a);
      const results = await Promise.all(Array.from({ length: 200 }, () => t.store.reserveCredits(a.id, 1, hold())));
      const held = results.filter((r) => r !== undefined);
      expect(held).to.have.length(100);
      expect(held.reduce((sum, r) => sum + r.fromCycle, 0)).to.equal(60);
      expect(await t.balanceOf(a.id)).to.deep.equal({ cycle: 0, topUp: 0 });
    });

    it('concurrent mixed 1- and 2-credit holds never take more than the balance', async function () {
      if (!t.harness.atomicGuards) this.skip();
      const a = account({ cycleCredits: 51, topUpCredits: 49 });
      await t.store.insertAccount(a);
      const costs = Array.from({ length: 150 }, (_, i) => (i % 2) + 1);
      const results = await Promise.all(costs.map((c) => t.store.reserveCredits(a.id, c, hold())));
      const spent = results.reduce((sum, r) => sum + (r ? r.fromCycle + r.fromTopUp : 0), 0);
      const { cycle, topUp } = await t.balanceOf(a.id);
      expect(cycle).to.be.at.least(0);
      expect(topUp).to.be.at.least(0);
      expect(spent + cycle + topUp).to.equal(100);
      const failedOnes = costs.filter((c, i) => c === 1 && results[i] === undefined).length;
      if (failedOnes > 0) expect(cycle + topUp).to.equal(0);
      else expect(cycle + topUp).to.be.below(2);
    });

    it('a hold id taken again (a retry, whatever it asks) takes no more credits', async () => {
      const a = account({ cycleCredits: 5, topUpCredits: 5 });
      await t.store.insertAccount(a);
      const first = hold();
      const taken = await t.store.reserveCredits(a.id, 2, first);
      expect(await t.store.reserveCredits(a.id, 6, first)).to.deep.equal(taken);
      expect(await t.balanceOf(a.id)).to.deep.equal({ cycle: 3, topUp: 5 });
      expect(await t.store.expiredReservations(Number.MAX_SAFE_INTEGER, 10)).to.have.length(1);
    });

    it('takes and records a hold in one write, and settles it in one write', async function () {
      const writesOf = t.harness.writesOf;
      if (!writesOf) this.skip(); // SQLite: one transaction does it
      const inOneWrite = async <T>(work: () => Promise<T>): Promise<T> => {
        let result: T | undefined;
        const writes = await writesOf(async () => {
          result = await work();
        });
        expect(writes, writes.join(', ')).to.have.length(1);
        return result as T;
      };
      const a = account({ cycleCredits: 1, topUpCredits: 5 });
      await t.store.insertAccount(a);
      const split = await inOneWrite(() => t.store.reserveCredits(a.id, 2, hold()));
      expect(split).to.include({ fromCycle: 1, fromTopUp: 1 });
      const topUp = await inOneWrite(() => t.store.reserveCredits(a.id, 1, hold()));
      const lease = await inOneWrite(() => t.store.reserveCredits(a.id, 3, hold()));
      const key = `allowance|3|${randomUUID()}`;
      const anonymous = await inOneWrite(() => t.store.reserveAllowance(key, 2, 10, T0 + 86_400_000, hold()));
      await inOneWrite(() => t.store.settle(split!.id, 2));
      await inOneWrite(() => t.store.settle(topUp!.id, 0));
      await inOneWrite(() => t.store.settle(lease!.id, 1));
      await inOneWrite(() => t.store.settle(anonymous!.id, 1));
      expect(await t.balanceOf(a.id)).to.deep.equal({ cycle: 0, topUp: 3 });
      expect(await t.store.counter(key)).to.equal(1);
    });

    it('settles a hold exactly once: spending all keeps it, spending none returns both parts', async () => {
      const a = account({ cycleCredits: 1, topUpCredits: 5 });
      await t.store.insertAccount(a);
      const spent = (await t.store.reserveCredits(a.id, 2, hold()))!;
      const refunded = (await t.store.reserveCredits(a.id, 2, hold()))!;
      expect(await t.store.settle(spent.id, 2)).to.deep.equal(spent);
      expect(await t.store.settle(spent.id, 0)).to.equal(undefined);
      expect(await t.balanceOf(a.id)).to.deep.equal({ cycle: 0, topUp: 2 });
      expect(await t.store.settle(refunded.id, 0)).to.deep.equal(refunded);
      expect(await t.store.settle(refunded.id, 0)).to.equal(undefined);
      expect(await t.balanceOf(a.id)).to.deep.equal({ cycle: 0, topUp: 4 });
    });

    it('a partial settle returns the unused credits to top-ups first, then to the cycle', async () => {
      const a = account({ cycleCredits: 6, topUpCredits: 14 });
      await t.store.insertAccount(a);
      const lease = (await t.store.reserveCredits(a.id, 10, hold()))!;
      expect(lease).to.include({ fromCycle: 6, fromTopUp: 4 });
      expect(await t.balanceOf(a.id)).to.deep.equal({ cycle: 0, topUp: 10 });
      expect(await t.store.settle(lease.id, 3)).to.deep.equal(lease);
      expect(await t.balanceOf(a.id)).to.deep.equal({ cycle: 3, topUp: 14 });
      // Fewer unused credits than the hold took from top-ups: all of them go back to top-ups.
      const mostlySpent = (await t.store.reserveCredits(a.id, 10, hold()))!;
      expect(mostlySpent).to.include({ fromCycle: 3, fromTopUp: 7 });
      await t.store.settle(mostlySpent.id, 8);
      expect(await t.balanceOf(a.id)).to.deep.equal({ cycle: 0, topUp: 9 });
    });

    it('a partial settle after the cycle renewed returns only the unused top-up part', async () => {
      const a = account({ cycleCredits: 6, topUpCredits: 14 });
      await t.store.insertAccount(a);
      const lease = (await t.store.reserveCredits(a.id, 10, hold()))!;
      await t.store.renewCycle(a.id, a.cycleEnd, { cycleEnd: a.cycleEnd + MONTH, cycleCredits: 100 });
      expect(await t.store.settle(lease.id, 3)).to.deep.equal(lease);
      expect(await t.balanceOf(a.id)).to.deep.equal({ cycle: 100, topUp: 14 });
    });

    it('settling twice changes nothing the second time, whatever it spends', async () => {
      const a = account({ cycleCredits: 6, topUpCredits: 14 });
      await t.store.insertAccount(a);
      const lease = (await t.store.reserveCredits(a.id, 10, hold()))!;
      await t.store.settle(lease.id, 3);
      for (const spent of [0, 3, 10])
        expect(await t.store.settle(lease.id, spent), `spent ${spent}`).to.equal(undefined);
      expect(await t.balanceOf(a.id)).to.deep.equal({ cycle: 3, topUp: 14 });
      expect(await t.store.expiredReservations(Number.MAX_SAFE_INTEGER, 10)).to.have.length(0);
    });

    it('a settled hold is remembered: a retry is told what it spent, and the sweep forgets it', async () => {
      const a = account({ cycleCredits: 10 });
      await t.store.insertAccount(a);
      const r = (await t.store.reserveCredits(a.id, 3, hold(T0 + 5_000)))!;
      const spend = { calls: [{ credits: 3 }], rememberUntil: T0 + 60_000 };
      expect(await t.store.settleCalls(r.id, spend)).to.deep.equal({ settled: r, fresh: [true] });
      expect(await t.store.settleCalls(r.id, spend)).to.deep.equal({ settledBefore: { spentCredits: 3 } });
      expect(await t.store.settleCalls(r.id, { calls: [] })).to.deep.equal({ settledBefore: { spentCredits: 3 } });
      expect(await t.store.settle(r.id, 0), 'settled already').to.equal(undefined);
      expect(await t.balanceOf(a.id)).to.deep.equal({ cycle: 7, topUp: 0 });
      // Past the hold's own expiry it is no refund: the expiry sweep never lists a settled hold.
      expect(await t.store.expiredReservations(T0 + 10_000, 10)).to.have.length(0);
      const refunded = (await t.store.reserveCredits(a.id, 2, hold()))!;
      const noSpend = { calls: [], rememberUntil: T0 + 60_000 };
      expect(await t.store.settleCalls(refunded.id, noSpend)).to.deep.include({ settled: refunded });
      expect(await t.store.settleCalls(refunded.id, spend)).to.deep.equal({ settledBefore: { spentCredits: 0 } });
      expect(await t.balanceOf(a.id)).to.deep.equal({ cycle: 7, topUp: 0 });
      await t.store.sweep(T0 + 59_999);
      expect(await t.store.settleCalls(r.id, spend)).to.deep.equal({ settledBefore: { spentCredits: 3 } });
      await t.store.sweep(T0 + 60_000);
      expect(await t.store.settleCalls(r.id, spend)).to.equal(undefined);
      expect(await t.store.settleCalls(refunded.id, spend)).to.equal(undefined);
      expect(await t.balanceOf(a.id)).to.deep.equal({ cycle: 7, topUp: 0 });
    });

    it('a hold gone (expired and refunded) settles nothing: undefined', async () => {
      const a = account({ cycleCredits: 10 });
      await t.store.insertAccount(a);
      const r = (await t.store.reserveCredits(a.id, 3, hold(T0 + 1_000)))!;
      const [expired] = await t.store.expiredReservations(T0 + 1_000, 10);
      expect(expired?.id).to.equal(r.id);
      expect(await t.store.settle(r.id, 0)).to.deep.equal(r);
      const spend = { calls: [{ credits: 3 }], rememberUntil: T0 + 60_000 };
      expect(await t.store.settleCalls(r.id, spend)).to.equal(undefined);
      expect(await t.store.settleCalls(r.id, { ...spend, keepOpen: true })).to.equal(undefined);
      expect(await t.balanceOf(a.id)).to.deep.equal({ cycle: 10, topUp: 0 });
    });

    it('a partial settle spends named calls once and keeps the rest held', async () => {
      const a = account({ cycleCredits: 6, topUpCredits: 14 });
      await t.store.insertAccount(a);
      const lease = (await t.store.reserveCredits(a.id, 10, hold(T0 + 5_000)))!;
      expect(lease).to.include({ fromCycle: 6, fromTopUp: 4 });
      const first = { calls: [{ credits: 2, callId: 'call-1' }], keepOpen: true };
      expect(await t.store.settleCalls(lease.id, first)).to.deep.equal({ settled: lease, fresh: [true] });
      // A retry of the same partial settlement spends nothing again.
      const again = await t.store.settleCalls(lease.id, first);
      expect(again && 'settled' in again && again.fresh).to.deep.equal([false]);
      const both = {
        calls: [
          { credits: 2, callId: 'call-1' },
          { credits: 3, callId: 'call-2' },
        ],
        keepOpen: true,
      };
      const second = await t.store.settleCalls(lease.id, both);
      expect(second && 'settled' in second && second.fresh).to.deep.equal([false, true]);
      // Nothing returns while the hold stays open.
      expect(await t.balanceOf(a.id)).to.deep.equal({ cycle: 0, topUp: 10 });
      // The final settlement lists every call: only those not yet spent are, and the rest goes back.
      const final = {
        calls: [
          { credits: 2, callId: 'call-1' },
          { credits: 3, callId: 'call-2' },
          { credits: 1, callId: 'call-3' },
        ],
        rememberUntil: T0 + 60_000,
      };
      const ended = await t.store.settleCalls(lease.id, final);
      expect(ended && 'settled' in ended && ended.fresh).to.deep.equal([false, false, true]);
      // 6 spent of 10: the 4 unused go back to top-ups first.
      expect(await t.balanceOf(a.id)).to.deep.equal({ cycle: 0, topUp: 14 });
      expect(await t.store.settleCalls(lease.id, final)).to.deep.equal({ settledBefore: { spentCredits: 6 } });
      expect(await t.balanceOf(a.id)).to.deep.equal({ cycle: 0, topUp: 14 });
    });

    it('a lease spent in part and then expired returns only what it did not spend', async () => {
      const a = account({ cycleCredits: 10 });
      await t.store.insertAccount(a);
      const lease = (await t.store.reserveCredits(a.id, 8, hold(T0 + 1_000)))!;
      await t.store.settleCalls(lease.id, { calls: [{ credits: 3, callId: 'c1' }], keepOpen: true });
      const key = `allowance|9|${randomUUID()}`;
      const anonymous = (await t.store.reserveAllowance(key, 5, 10, T0 + 86_400_000, hold(T0 + 1_000)))!;
      await t.store.settleCalls(anonymous.id, { calls: [{ credits: 2, callId: 'c1' }], keepOpen: true });
      await t.store.settleCalls(anonymous.id, { calls: [{ credits: 2, callId: 'c1' }], keepOpen: true });
      const expired = await t.store.expiredReservations(T0 + 1_000, 10);
      expect(expired.map((r) => r.id).sort()).to.deep.equal([lease.id, anonymous.id].sort());
      for (const r of expired) expect(await t.store.settle(r.id, 0)).to.not.equal(undefined);
      expect(await t.balanceOf(a.id)).to.deep.equal({ cycle: 7, topUp: 0 });
      expect(await t.store.counter(key)).to.equal(2);
    });

    it('spends at most the hold, and a negative spend is none', async () => {
      const a = account({ cycleCredits: 2, topUpCredits: 5 });
      await t.store.insertAccount(a);
      const over = (await t.store.reserveCredits(a.id, 4, hold()))!;
      expect(await t.store.settle(over.id, 50)).to.deep.equal(over);
      expect(await t.balanceOf(a.id)).to.deep.equal({ cycle: 0, topUp: 3 });
      const negative = (await t.store.reserveCredits(a.id, 2, hold()))!;
      await t.store.settle(negative.id, -5);
      expect(await t.balanceOf(a.id)).to.deep.equal({ cycle: 0, topUp: 3 });
      const key = `allowance|5|${randomUUID()}`;
      const anonymous = (await t.store.reserveAllowance(key, 3, 10, T0 + 86_400_000, hold()))!;
      expect(await t.store.settle(anonymous.id, 50)).to.deep.equal(anonymous);
      expect(await t.store.counter(key)).to.equal(3);
    });

    it('races of spend and refund on one hold: one wins', async () => {
      const a = account({ cycleCredits: 10 });
      await t.store.insertAccount(a);
      const r = (await t.store.reserveCredits(a.id, 3, hold()))!;
      const outcomes = await Promise.all([t.store.settle(r.id, 0), t.store.settle(r.id, 3), t.store.settle(r.id, 0)]);
      expect(outcomes.filter((o) => o !== undefined)).to.have.length(1);
      expect((await t.balanceOf(a.id)).cycle).to.be.oneOf([7, 10]);
    });

    it('a refund after the cycle renewed returns only the top-up part', async () => {
      const a = account({ cycleCredits: 1, topUpCredits: 5 });
      await t.store.insertAccount(a);
      const r = (await t.store.reserveCredits(a.id, 3, hold()))!;
      await t.store.renewCycle(a.id, a.cycleEnd, { cycleEnd: a.cycleEnd + MONTH, cycleCredits: 100 });
      await t.store.settle(r.id, 0);
      expect(await t.balanceOf(a.id)).to.deep.equal({ cycle: 100, topUp: 5 });
    });

    it('a hold named twice (a retried authorization) is taken once; its name alone settles it', async () => {
      const a = account({ cycleCredits: 5, topUpCredits: 0 });
      await t.store.insertAccount(a);
      const named = { id: randomUUID(), expiresAt: T0 + 60_000 };
      const first = (await t.store.reserveCredits(a.id, 2, named))!;
      expect(await t.store.reserveCredits(a.id, 2, named)).to.deep.equal(first);
      expect(await t.balanceOf(a.id)).to.deep.equal({ cycle: 3, topUp: 0 });
      expect(await t.store.settle(named.id, 0)).to.deep.equal(first);
      expect(await t.balanceOf(a.id)).to.deep.equal({ cycle: 5, topUp: 0 });
      expect(await t.store.settle(named.id, 0)).to.equal(undefined);
      const key = `allowance|7|${randomUUID()}`;
      const anonymous = { id: randomUUID(), expiresAt: T0 + 60_000 };
      const held = (await t.store.reserveAllowance(key, 1, 10, T0 + 86_400_000, anonymous))!;
      expect(await t.store.reserveAllowance(key, 1, 10, T0 + 86_400_000, anonymous)).to.deep.equal(held);
      expect(await t.store.counter(key)).to.equal(1);
      expect(await t.store.settle(anonymous.id, 1)).to.deep.equal(held);
      expect(await t.store.counter(key)).to.equal(1);
    });

    it('a name whose hold was settled since is not held again: the authorization is refused', async () => {
      const a = account({ cycleCredits: 5, topUpCredits: 0 });
      await t.store.insertAccount(a);
      const named = { id: randomUUID(), expiresAt: T0 + 60_000 };
      await t.store.reserveCredits(a.id, 2, named);
      await t.store.settleCalls(named.id, { calls: [], keepOpen: false, rememberUntil: T0 + 60_000 });
      const retried = await t.store.reserveCredits(a.id, 2, named).then(
        () => 'held',
        (err: { reason?: string }) => err.reason,
      );
      expect(retried).to.equal('HOLD_RELEASED');
      expect(await t.balanceOf(a.id)).to.deep.equal({ cycle: 5, topUp: 0 });
      const key = `allowance|8|${randomUUID()}`;
      const anonymous = { id: randomUUID(), expiresAt: T0 + 60_000 };
      await t.store.reserveAllowance(key, 1, 10, T0 + 86_400_000, anonymous);
      await t.store.settleCalls(anonymous.id, { calls: [], keepOpen: false, rememberUntil: T0 + 60_000 });
      const again = await t.store.reserveAllowance(key, 1, 10, T0 + 86_400_000, anonymous).then(
        () => 'held',
        (err: { reason?: string }) => err.reason,
      );
      expect(again).to.equal('HOLD_RELEASED');
      expect(await t.store.counter(key)).to.equal(0);
    });

    it('lists holds past their time, accounts’ and allowances’ alike, oldest first', async () => {
      const a = account();
      await t.store.insertAccount(a);
      const late = await t.store.reserveCredits(a.id, 1, hold(T0 + 3_000));
      const early = await t.store.reserveCredits(a.id, 1, hold(T0 + 1_000));
      const anonymous = await t.store.reserveAllowance(
        `allowance|4|${randomUUID()}`,
        1,
        10,
        T0 + 86_400_000,
        hold(T0 + 2_000),
      );
      await t.store.reserveCredits(a.id, 1, hold(T0 + 9_000));
      const expired = await t.store.expiredReservations(T0 + 5_000, 10);
      expect(expired).to.deep.equal([early, anonymous, late]);
      expect(await t.store.expiredReservations(T0 + 5_000, 1)).to.deep.equal([early]);
      await t.store.settle(early!.id, 0);
      expect(await t.store.expiredReservations(T0 + 5_000, 10)).to.deep.equal([anonymous, late]);
    });
  });

  describe('allowances', () => {
    it('holds up to the cap, concurrently, and refunds', async function () {
      if (!t.harness.atomicGuards) this.skip();
      const key = `allowance|1|${randomUUID()}`;
      const results = await Promise.all(
        Array.from({ length: 30 }, () => t.store.reserveAllowance(key, 1, 10, T0 + 86_400_000, hold())),
      );
      expect(results.filter(Boolean)).to.have.length(10);
      expect(await t.store.counter(key)).to.equal(10);
      const one = results.find(Boolean)!;
      expect(one).to.include({ allowanceKey: key, accountId: null, fromCycle: 1, fromTopUp: 0 });
      await t.store.settle(one.id, 0);
      expect(await t.store.counter(key)).to.equal(9);
      expect(await t.store.reserveAllowance(key, 2, 10, T0, hold())).to.equal(undefined);
      expect(await t.store.reserveAllowance(key, 1, 10, T0, hold())).to.not.equal(undefined);
    });

    it('a partial settle lowers the counter by the unused credits, once', async () => {
      const key = `allowance|6|${randomUUID()}`;
      await t.store.increment(key, 1, T0 + 86_400_000);
      const lease = (await t.store.reserveAllowance(key, 5, 10, T0 + 86_400_000, hold()))!;
      expect(await t.store.counter(key)).to.equal(6);
      expect(await t.store.settle(lease.id, 2)).to.deep.equal(lease);
      expect(await t.store.counter(key)).to.equal(3);
      expect(await t.store.settle(lease.id, 0)).to.equal(undefined);
      expect(await t.store.counter(key)).to.equal(3);
    });

    it('refuses a hold larger than the cap, even on a fresh day', async () => {
      expect(await t.store.reserveAllowance(`allowance|2|${randomUUID()}`, 11, 10, T0, hold())).to.equal(undefined);
    });
  });

  describe('usage', () => {
    it('lists an account’s spent calls newest first, up to the limit, and only its own', async () => {
      const [a, b] = [randomUUID(), randomUUID()];
      await t.store.addUsage([{ accountId: a, operation: 'op-0', credits: 1, at: T0 }]);
      // Several at once, as a lease's settlement records its calls.
      await t.store.addUsage(
        [1, 2, 3, 4].map((i) => ({
          accountId: a,
          operation: `op-${i}`,
          credits: i + 1,
          at: T0 + i,
          ...(i % 2 ? {} : { target: `https://example.test/${i}` }),
        })),
      );
      await t.store.addUsage([]);
      await t.store.addUsage([{ accountId: b, operation: 'other', credits: 2, at: T0 + 10 }]);
      expect(await t.store.recentUsage(a, 3)).to.deep.equal([
        { accountId: a, operation: 'op-4', credits: 5, at: T0 + 4, target: 'https://example.test/4' },
        { accountId: a, operation: 'op-3', credits: 4, at: T0 + 3 },
        { accountId: a, operation: 'op-2', credits: 3, at: T0 + 2, target: 'https://example.test/2' },
      ]);
      expect(await t.store.recentUsage(a, 10)).to.have.length(5);
      expect(await t.store.recentUsage(randomUUID(), 3)).to.deep.equal([]);
    });

    it('sums credits and calls per UTC day and operation within [from, to), only the account’s', async () => {
      const [a, b] = [randomUUID(), randomUUID()];
      const day = 86_400_000;
      const start = Math.floor(T0 / day) * day;
      const call = (accountId: string, operation: string, credits: number, at: number) => ({
        accountId,
        operation,
        credits,
        at,
      });
      await t.store.addUsage([
        call(a, 'screenshot', 1, start - 1), // the day before `from`
        call(a, 'screenshot', 1, start),
        call(a, 'screenshot', 2, start + day - 1),
        call(a, 'down-check', 1, start + 5),
        call(a, 'down-check', 3, start + day),
        call(a, 'pdf', 2, start + 2 * day + 10),
        call(a, 'pdf', 2, start + 3 * day), // at `to`: left out
        call(b, 'screenshot', 9, start + 1),
      ]);
      expect(await t.store.usageByDay(a, start, start + 3 * day)).to.deep.equal([
        { day: start, operation: 'down-check', credits: 1, calls: 1 },
        { day: start, operation: 'screenshot', credits: 3, calls: 2 },
        { day: start + day, operation: 'down-check', credits: 3, calls: 1 },
        { day: start + 2 * day, operation: 'pdf', credits: 2, calls: 1 },
      ]);
      expect(await t.store.usageByDay(a, start + 3 * day + 1, start + 4 * day)).to.deep.equal([]);
      expect(await t.store.usageByDay(randomUUID(), start, start + 3 * day)).to.deep.equal([]);
    });
  });
}
