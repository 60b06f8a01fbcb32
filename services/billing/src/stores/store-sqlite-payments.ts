import type Database from 'better-sqlite3';
import type { Account, PaymentChange, PaymentStore, PlanChange } from './store.js';
import { accountStatements } from './store-sqlite-accounts.js';
import { type AccountRow, toAccount } from './store-sqlite-schema.js';

/** Thrown inside applyPayment's transaction to roll it back: a key of the payment was recorded before. */
class DuplicatePayment extends Error {}

/** Payment-provider customers and applied payments in the embedded store. */
export function sqlitePayments(db: Database.Database): PaymentStore {
  const q = {
    ...accountStatements(db),
    linkPaymentCustomer: db.prepare(
      `INSERT INTO payment_customers (account_id, customer_id)
       SELECT id, @customerId FROM accounts WHERE id = @accountId ON CONFLICT DO NOTHING`,
    ),
    paymentCustomerOf: db.prepare<[string], { customer_id: string }>(
      'SELECT customer_id FROM payment_customers WHERE account_id = ?',
    ),
    accountByPaymentCustomer: db.prepare<[string], AccountRow>(
      `SELECT accounts.* FROM payment_customers JOIN accounts ON accounts.id = payment_customers.account_id
       WHERE payment_customers.customer_id = ?`,
    ),
    recordPayment: db.prepare('INSERT INTO payments (key, account_id, at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING'),
    removeTopUp: db.prepare('UPDATE accounts SET top_up_credits = MAX(0, top_up_credits - ?) WHERE id = ?'),
    upgradePlan: db.prepare(
      'UPDATE accounts SET plan = @plan, cycle_credits = cycle_credits + @addCycleCredits WHERE id = @id',
    ),
    setPaidThrough: db.prepare('UPDATE accounts SET paid_through = ? WHERE id = ?'),
    endPaidPlan: db.prepare(
      `UPDATE accounts SET plan = @plan, credits_per_cycle = @creditsPerCycle, requests_per_minute = @requestsPerMinute,
         cycle_anchor = @cycleAnchor, cycle_end = @cycleEnd, cycle_credits = @cycleCredits, paid_through = NULL
       WHERE id = @id AND paid_through = @expected`,
    ),
  };
  // The keys and the change commit together: a key recorded before rolls the whole payment back.
  const applyPayment = db.transaction((payment: PaymentChange): 'applied' | 'duplicate' | 'no_account' => {
    if (!q.accountById.get(payment.accountId)) return 'no_account';
    for (const key of payment.keys) {
      if (q.recordPayment.run(key, payment.accountId, payment.at).changes === 0) throw new DuplicatePayment();
    }
    if (payment.plan) q.changePlan.run({ id: payment.accountId, ...payment.plan });
    if (payment.upgrade) q.upgradePlan.run({ id: payment.accountId, ...payment.upgrade });
    if (payment.topUpCredits) q.addTopUp.run(payment.topUpCredits, payment.accountId);
    // A refund takes back at most what is left: credits spent stay spent.
    if (payment.removeTopUpCredits) q.removeTopUp.run(payment.removeTopUpCredits, payment.accountId);
    if (payment.paidThrough !== undefined) q.setPaidThrough.run(payment.paidThrough, payment.accountId);
    return 'applied';
  });
  const paymentCustomerOf = async (accountId: string): Promise<string | undefined> =>
    q.paymentCustomerOf.get(accountId)?.customer_id;

  return {
    async linkPaymentCustomer(accountId: string, customerId: string): Promise<string | undefined> {
      q.linkPaymentCustomer.run({ accountId, customerId });
      return paymentCustomerOf(accountId);
    },

    paymentCustomerOf,

    async accountByPaymentCustomer(customerId: string): Promise<Account | undefined> {
      const row = q.accountByPaymentCustomer.get(customerId);
      return row ? toAccount(row) : undefined;
    },

    async endPaidPlan(id: string, expected: number, free: PlanChange): Promise<void> {
      q.endPaidPlan.run({ id, expected, ...free });
    },

    async applyPayment(payment: PaymentChange): Promise<'applied' | 'duplicate' | 'no_account'> {
      try {
        return applyPayment.immediate(payment);
      } catch (err) {
        if (err instanceof DuplicatePayment) return 'duplicate';
        throw err;
      }
    },
  };
}
