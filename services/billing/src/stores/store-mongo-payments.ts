import type mongoose from 'mongoose';
import type { Account, PaymentChange, PaymentStore, PlanChange } from './store.js';
import { type AccountDoc, type Models, toAccount } from './store-mongo-schema.js';

/** Tries of a refund whose account's top-ups changed between its read and its guarded update. */
const REFUND_ATTEMPTS = 20;

/**
 * Payment-provider customers and applied payments in MongoDB: both live in the account document,
 * so recording a payment and changing the credits is one guarded update.
 */
export function mongoPayments({ accounts }: Models): PaymentStore {
  const paymentCustomerOf = async (accountId: string): Promise<string | undefined> => {
    const doc = await accounts.findOne({ _id: accountId }, { paymentCustomerId: 1 }).lean<AccountDoc>();
    return doc?.paymentCustomerId ?? undefined;
  };

  return {
    async linkPaymentCustomer(accountId: string, customerId: string): Promise<string | undefined> {
      await accounts.updateOne(
        { _id: accountId, paymentCustomerId: null },
        { $set: { paymentCustomerId: customerId } },
      );
      return paymentCustomerOf(accountId);
    },

    paymentCustomerOf,

    async accountByPaymentCustomer(customerId: string): Promise<Account | undefined> {
      const doc = await accounts.findOne({ paymentCustomerId: customerId }).lean<AccountDoc>();
      return doc ? toAccount(doc) : undefined;
    },

    async applyPayment(payment: PaymentChange): Promise<'applied' | 'duplicate' | 'no_account'> {
      const unseen = Object.fromEntries(payment.keys.map((key) => [`payments.${key}`, { $exists: false }]));
      const recorded = Object.fromEntries(payment.keys.map((key) => [`payments.${key}`, payment.at]));
      const set: Record<string, unknown> = { ...recorded, ...payment.plan };
      if (payment.upgrade) set.plan = payment.upgrade.plan;
      if (payment.paidThrough !== undefined) set.paidThrough = payment.paidThrough;
      const inc: Record<string, number> = {};
      if (payment.topUpCredits) inc.topUpCredits = payment.topUpCredits;
      if (payment.upgrade?.addCycleCredits) inc.cycleCredits = payment.upgrade.addCycleCredits;
      for (let attempt = 0; attempt < REFUND_ATTEMPTS; attempt++) {
        const filter: Record<string, unknown> = { _id: payment.accountId, ...unseen };
        if (payment.removeTopUpCredits) {
          // No $max in an update: the top-ups read are the guard, and a change in between tries again.
          const doc = await accounts.findById(payment.accountId, { topUpCredits: 1 }).lean<AccountDoc>();
          if (!doc) return 'no_account';
          filter.topUpCredits = doc.topUpCredits;
          set.topUpCredits = Math.max(0, doc.topUpCredits - payment.removeTopUpCredits);
        }
        const update: mongoose.UpdateQuery<AccountDoc> = { $set: set };
        if (Object.keys(inc).length > 0) update.$inc = inc;
        const applied = await accounts.updateOne(filter, update);
        if (applied.matchedCount === 1) return 'applied';
        if (!payment.removeTopUpCredits) break;
        const seen = await accounts.exists({ _id: payment.accountId, ...unseen });
        if (!seen) break;
      }
      return (await accounts.exists({ _id: payment.accountId })) ? 'duplicate' : 'no_account';
    },

    async endPaidPlan(id: string, expected: number, free: PlanChange): Promise<void> {
      await accounts.updateOne({ _id: id, paidThrough: expected }, { $set: { ...free, paidThrough: null } });
    },
  };
}
