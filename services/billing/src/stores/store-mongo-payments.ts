import type mongoose from 'mongoose';
import type { Account, PaymentChange, PaymentStore } from './store.js';
import { type AccountDoc, type Models, toAccount } from './store-mongo-schema.js';

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
      const update: mongoose.UpdateQuery<AccountDoc> = { $set: { ...recorded, ...payment.plan } };
      if (payment.topUpCredits) update.$inc = { topUpCredits: payment.topUpCredits };
      const applied = await accounts.updateOne({ _id: payment.accountId, ...unseen }, update);
      if (applied.matchedCount === 1) return 'applied';
      return (await accounts.exists({ _id: payment.accountId })) ? 'duplicate' : 'no_account';
    },
  };
}
