import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { account, MONTH, type StoreUnderTest, T0 } from './fixtures.js';

/** Payment-provider customers and applied payments. */
export function paymentCases(t: StoreUnderTest): void {
  describe('payments', () => {
    it('links one payment customer per account, the first one named staying', async () => {
      const a = account();
      await t.store.insertAccount(a);
      expect(await t.store.paymentCustomerOf(a.id)).to.equal(undefined);
      expect(await t.store.accountByPaymentCustomer('cus_first')).to.equal(undefined);
      expect(await t.store.linkPaymentCustomer(a.id, 'cus_first')).to.equal('cus_first');
      expect(await t.store.linkPaymentCustomer(a.id, 'cus_second')).to.equal('cus_first');
      expect(await t.store.paymentCustomerOf(a.id)).to.equal('cus_first');
      expect((await t.store.accountByPaymentCustomer('cus_first'))?.id).to.equal(a.id);
      expect(await t.store.accountByPaymentCustomer('cus_second')).to.equal(undefined);
      expect(await t.store.linkPaymentCustomer(randomUUID(), 'cus_other')).to.equal(undefined);
      expect(await t.store.accountByPaymentCustomer('cus_other')).to.equal(undefined);
      const reopened = await t.reopen();
      try {
        expect(await reopened.paymentCustomerOf(a.id)).to.equal('cus_first');
      } finally {
        await reopened.close();
      }
    });

    it('applies a payment once per key, with its credit change, durably', async () => {
      const a = account({ topUpCredits: 5 });
      await t.store.insertAccount(a);
      const pay = (event: string, object: string, topUpCredits = 1000) =>
        t.store.applyPayment({ accountId: a.id, keys: [`event:${event}`, `object:${object}`], topUpCredits, at: T0 });
      expect(await pay('evt_1', 'cs_1')).to.equal('applied');
      expect(await pay('evt_1', 'cs_1')).to.equal('duplicate');
      // Another event for the same paid object (its async payment succeeded too) adds nothing.
      expect(await pay('evt_2', 'cs_1')).to.equal('duplicate');
      expect(await t.balanceOf(a.id)).to.deep.equal({ cycle: 100, topUp: 1005 });
      const answers = await Promise.all([1, 2, 3].map(() => pay('evt_3', 'cs_2', 500)));
      expect(answers.filter((answer) => answer === 'applied')).to.have.length(1);
      expect(await t.balanceOf(a.id)).to.deep.equal({ cycle: 100, topUp: 1505 });
      expect(await t.store.applyPayment({ accountId: randomUUID(), keys: ['event:evt_9'], at: T0 })).to.equal(
        'no_account',
      );
      const reopened = await t.reopen();
      try {
        expect(
          await reopened.applyPayment({ accountId: a.id, keys: ['event:evt_1'], topUpCredits: 7, at: T0 }),
        ).to.equal('duplicate');
        expect((await reopened.accountById(a.id))?.topUpCredits).to.equal(1505);
      } finally {
        await reopened.close();
      }
    });

    it('starts a plan and its cycle with the payment that pays for it', async () => {
      const a = account({ plan: 'FREE', cycleCredits: 3 });
      await t.store.insertAccount(a);
      const plan = {
        plan: 'GROWTH' as const,
        creditsPerCycle: null,
        requestsPerMinute: null,
        cycleAnchor: T0 + 5,
        cycleEnd: T0 + 5 + MONTH,
        cycleCredits: 15_000,
      };
      expect(
        await t.store.applyPayment({ accountId: a.id, keys: ['event:evt_p', 'object:in_1'], plan, at: T0 }),
      ).to.equal('applied');
      expect(await t.store.accountById(a.id)).to.include({
        plan: 'GROWTH',
        cycleCredits: 15_000,
        cycleEnd: T0 + 5 + MONTH,
      });
      await t.store.changePlan(a.id, { ...plan, plan: 'FREE', cycleCredits: 0 });
      expect(
        await t.store.applyPayment({ accountId: a.id, keys: ['event:evt_q', 'object:in_1'], plan, at: T0 }),
      ).to.equal('duplicate');
      expect(await t.store.accountById(a.id)).to.include({ plan: 'FREE', cycleCredits: 0 });
    });

    it('takes refunds back only from what is left, upgrades in the cycle, holds and ends paid plans', async () => {
      const a = account({ plan: 'STARTER', cycleCredits: 40, topUpCredits: 300 });
      await t.store.insertAccount(a);
      const refund = (key: string, credits: number) =>
        t.store.applyPayment({ accountId: a.id, keys: [key], removeTopUpCredits: credits, at: T0 });
      expect(await refund('refund:re_1', 200)).to.equal('applied');
      expect(await refund('refund:re_1', 200)).to.equal('duplicate');
      // More than is left: the top-ups go to zero, never below (what was spent stays spent).
      expect(await refund('refund:re_2', 1000)).to.equal('applied');
      expect(await t.store.accountById(a.id)).to.include({ topUpCredits: 0, paidThrough: null });
      const upgrade = { plan: 'GROWTH' as const, addCycleCredits: 12_000 };
      const through = T0 + MONTH + 7;
      expect(
        await t.store.applyPayment({ accountId: a.id, keys: ['upgrade:u1'], upgrade, paidThrough: through, at: T0 }),
      ).to.equal('applied');
      expect(await t.store.applyPayment({ accountId: a.id, keys: ['upgrade:u1'], upgrade, at: T0 })).to.equal(
        'duplicate',
      );
      expect(await t.store.accountById(a.id)).to.include({
        plan: 'GROWTH',
        cycleCredits: 12_040,
        cycleEnd: T0 + MONTH,
        paidThrough: through,
      });
      const free = {
        plan: 'FREE' as const,
        creditsPerCycle: null,
        requestsPerMinute: null,
        cycleAnchor: through,
        cycleEnd: through + MONTH,
        cycleCredits: 100,
      };
      // Only the paid plan as it was read ends: a held time changed since is kept.
      await t.store.endPaidPlan(a.id, through - 1, free);
      expect((await t.store.accountById(a.id))?.plan).to.equal('GROWTH');
      await t.store.endPaidPlan(a.id, through, free);
      expect(await t.store.accountById(a.id)).to.include({ plan: 'FREE', cycleCredits: 100, paidThrough: null });
    });
  });
}
