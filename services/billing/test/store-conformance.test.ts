import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type MongoUnderTest, startMongo } from '@webutil/scripts/mongo-under-test';
import { expect } from 'chai';
import mongoose from 'mongoose';
import {
  type Account,
  type ApiKeyRecord,
  type BillingStore,
  EmailTakenError,
  type Reservation,
} from '../src/stores/store.js';
import { connectMongoStore } from '../src/stores/store-mongo.js';
import { openSqliteStore } from '../src/stores/store-sqlite.js';

/** How one adapter is opened fresh for a test, and reopened on the same data (a restart). */
interface Harness {
  name: string;
  /**
   * Whether the server applies a guarded update ({n: {$gte: k}} + $inc) atomically under
   * concurrency. SQLite and MongoDB do (MongoDB: single-document atomicity). jongodb does not:
   * with the plain driver, 150 concurrent guarded decrements of one document drove it negative
   * in 5 of 20 rounds. The concurrency cases below prove the adapter, so they run only where the
   * server keeps MongoDB's guarantee; the same logic runs sequentially everywhere.
   */
  atomicGuards: boolean;
  /**
   * Runs `work` and lists the writes it sent the database, where the adapter's guarantee rests on
   * single-document updates (mongoose) rather than on a transaction (SQLite).
   */
  writesOf?: (work: () => Promise<unknown>) => Promise<string[]>;
  before?: () => Promise<void>;
  after?: () => Promise<void>;
  open(): Promise<{ store: BillingStore; reopen(): Promise<BillingStore>; drop(): Promise<void> }>;
}

let mongo: MongoUnderTest | undefined;
const WRITE_METHODS = new Set([
  'insertOne',
  'insertMany',
  'updateOne',
  'updateMany',
  'replaceOne',
  'findOneAndUpdate',
  'findOneAndReplace',
  'findOneAndDelete',
  'deleteOne',
  'deleteMany',
  'bulkWrite',
]);

const harnesses: Harness[] = [
  {
    name: 'embedded SQLite',
    atomicGuards: true,
    async open() {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'billing-store-'));
      const file = path.join(dir, 'billing.sqlite');
      return {
        store: openSqliteStore(file),
        reopen: async () => openSqliteStore(file),
        drop: async () => rmSync(dir, { recursive: true, force: true }),
      };
    },
  },
  {
    name: process.env.MONGO_URL ? 'mongoose on MONGO_URL' : 'mongoose on jongodb',
    atomicGuards: Boolean(process.env.MONGO_URL),
    async writesOf(work) {
      const writes: string[] = [];
      mongoose.set('debug', (collection: string, method: string) => {
        if (WRITE_METHODS.has(method)) writes.push(`${collection}.${method}`);
      });
      try {
        await work();
      } finally {
        mongoose.set('debug', false);
      }
      return writes;
    },
    before: async () => {
      mongo = await startMongo();
    },
    after: async () => mongo?.stop(),
    async open() {
      const dbName = `billing_${randomUUID().replace(/-/g, '')}`;
      return {
        store: await connectMongoStore(mongo!.url, dbName),
        reopen: () => connectMongoStore(mongo!.url, dbName),
        drop: async () => undefined,
      };
    },
  },
];

const T0 = Date.UTC(2026, 0, 15, 12);
const MONTH = 31 * 86_400_000;

function account(overrides: Partial<Account> = {}): Account {
  return {
    id: randomUUID(),
    email: `${randomUUID()}@example.test`,
    passwordHash: null,
    plan: 'STARTER',
    creditsPerCycle: null,
    requestsPerMinute: null,
    cycleAnchor: T0,
    cycleEnd: T0 + MONTH,
    cycleCredits: 100,
    topUpCredits: 0,
    createdAt: T0,
    ...overrides,
  };
}

const hold = (expiresAt = T0 + 60_000) => ({ id: randomUUID(), expiresAt });

for (const harness of harnesses) {
  describe(`billing store conformance: ${harness.name}`, function () {
    this.timeout(60_000);
    let store: BillingStore;
    let reopen: () => Promise<BillingStore>;
    let drop: () => Promise<void>;

    before(async () => harness.before?.());
    after(async () => harness.after?.());
    beforeEach(async () => {
      ({ store, reopen, drop } = await harness.open());
    });
    afterEach(async () => {
      await store.close();
      await drop();
    });

    const balanceOf = async (id: string) => {
      const a = (await store.accountById(id))!;
      return { cycle: a.cycleCredits, topUp: a.topUpCredits };
    };

    describe('accounts', () => {
      it('stores and finds an account by id and by email', async () => {
        const a = account();
        await store.insertAccount(a);
        expect(await store.accountById(a.id)).to.deep.equal(a);
        expect(await store.accountByEmail(a.email)).to.deep.equal(a);
        expect(await store.accountById(randomUUID())).to.equal(undefined);
        expect(await store.accountByEmail('nobody@example.test')).to.equal(undefined);
      });

      it('refuses a second account with the same email', async () => {
        const a = account();
        await store.insertAccount(a);
        let error: unknown;
        try {
          await store.insertAccount(account({ email: a.email }));
        } catch (err) {
          error = err;
        }
        expect(error).to.be.instanceOf(EmailTakenError);
      });

      it('changes plan, password and top-ups', async () => {
        const a = account({ topUpCredits: 5 });
        await store.insertAccount(a);
        const changed = await store.changePlan(a.id, {
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
        expect((await store.setPasswordHash(a.id, 'scrypt$x'))?.passwordHash).to.equal('scrypt$x');
        expect((await store.addTopUp(a.id, 10))?.topUpCredits).to.equal(15);
      });

      it('renews a cycle only from the cycle it expects, once', async () => {
        const a = account({ cycleCredits: 3 });
        await store.insertAccount(a);
        await store.renewCycle(a.id, a.cycleEnd + 1, { cycleEnd: a.cycleEnd + MONTH, cycleCredits: 100 });
        expect((await store.accountById(a.id))?.cycleCredits).to.equal(3);
        await Promise.all(
          [1, 2, 3].map(() => store.renewCycle(a.id, a.cycleEnd, { cycleEnd: a.cycleEnd + MONTH, cycleCredits: 100 })),
        );
        const renewed = await store.accountById(a.id);
        expect(renewed).to.include({ cycleCredits: 100, cycleEnd: a.cycleEnd + MONTH });
      });

      it('survives a restart', async () => {
        const a = account();
        await store.insertAccount(a);
        await store.reserveCredits(a.id, 4, hold());
        await store.close();
        store = await reopen();
        expect(await store.accountById(a.id)).to.deep.equal({ ...a, cycleCredits: 96 });
        expect(await store.expiredReservations(T0 + 120_000, 10)).to.have.length(1);
      });
    });

    describe('payments', () => {
      it('links one payment customer per account, the first one named staying', async () => {
        const a = account();
        await store.insertAccount(a);
        expect(await store.paymentCustomerOf(a.id)).to.equal(undefined);
        expect(await store.accountByPaymentCustomer('cus_first')).to.equal(undefined);
        expect(await store.linkPaymentCustomer(a.id, 'cus_first')).to.equal('cus_first');
        expect(await store.linkPaymentCustomer(a.id, 'cus_second')).to.equal('cus_first');
        expect(await store.paymentCustomerOf(a.id)).to.equal('cus_first');
        expect((await store.accountByPaymentCustomer('cus_first'))?.id).to.equal(a.id);
        expect(await store.accountByPaymentCustomer('cus_second')).to.equal(undefined);
        expect(await store.linkPaymentCustomer(randomUUID(), 'cus_other')).to.equal(undefined);
        expect(await store.accountByPaymentCustomer('cus_other')).to.equal(undefined);
        const reopened = await reopen();
        try {
          expect(await reopened.paymentCustomerOf(a.id)).to.equal('cus_first');
        } finally {
          await reopened.close();
        }
      });

      it('applies a payment once per key, with its credit change, durably', async () => {
        const a = account({ topUpCredits: 5 });
        await store.insertAccount(a);
        const pay = (event: string, object: string, topUpCredits = 1000) =>
          store.applyPayment({ accountId: a.id, keys: [`event:${event}`, `object:${object}`], topUpCredits, at: T0 });
        expect(await pay('evt_1', 'cs_1')).to.equal('applied');
        expect(await pay('evt_1', 'cs_1')).to.equal('duplicate');
        // Another event for the same paid object (its async payment succeeded too) adds nothing.
        expect(await pay('evt_2', 'cs_1')).to.equal('duplicate');
        expect(await balanceOf(a.id)).to.deep.equal({ cycle: 100, topUp: 1005 });
        const answers = await Promise.all([1, 2, 3].map(() => pay('evt_3', 'cs_2', 500)));
        expect(answers.filter((answer) => answer === 'applied')).to.have.length(1);
        expect(await balanceOf(a.id)).to.deep.equal({ cycle: 100, topUp: 1505 });
        expect(await store.applyPayment({ accountId: randomUUID(), keys: ['event:evt_9'], at: T0 })).to.equal(
          'no_account',
        );
        const reopened = await reopen();
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
        await store.insertAccount(a);
        const plan = {
          plan: 'GROWTH' as const,
          creditsPerCycle: null,
          requestsPerMinute: null,
          cycleAnchor: T0 + 5,
          cycleEnd: T0 + 5 + MONTH,
          cycleCredits: 15_000,
        };
        expect(
          await store.applyPayment({ accountId: a.id, keys: ['event:evt_p', 'object:in_1'], plan, at: T0 }),
        ).to.equal('applied');
        expect(await store.accountById(a.id)).to.include({
          plan: 'GROWTH',
          cycleCredits: 15_000,
          cycleEnd: T0 + 5 + MONTH,
        });
        await store.changePlan(a.id, { ...plan, plan: 'FREE', cycleCredits: 0 });
        expect(
          await store.applyPayment({ accountId: a.id, keys: ['event:evt_q', 'object:in_1'], plan, at: T0 }),
        ).to.equal('duplicate');
        expect(await store.accountById(a.id)).to.include({ plan: 'FREE', cycleCredits: 0 });
      });
    });

    describe('credit holds', () => {
      it('spends cycle credits first, then top-ups, splitting a hold across both', async () => {
        const a = account({ cycleCredits: 3, topUpCredits: 5 });
        await store.insertAccount(a);
        const first = await store.reserveCredits(a.id, 2, hold());
        expect(first).to.include({ accountId: a.id, fromCycle: 2, fromTopUp: 0, cycleEnd: a.cycleEnd });
        const split = await store.reserveCredits(a.id, 2, hold());
        expect(split).to.include({ fromCycle: 1, fromTopUp: 1 });
        const last = await store.reserveCredits(a.id, 4, hold());
        expect(last).to.include({ fromCycle: 0, fromTopUp: 4 });
        expect(await balanceOf(a.id)).to.deep.equal({ cycle: 0, topUp: 0 });
      });

      it('refuses a hold larger than the balance and changes nothing', async () => {
        const a = account({ cycleCredits: 1, topUpCredits: 1 });
        await store.insertAccount(a);
        expect(await store.reserveCredits(a.id, 3, hold())).to.equal(undefined);
        expect(await store.reserveCredits(randomUUID(), 1, hold())).to.equal(undefined);
        expect(await balanceOf(a.id)).to.deep.equal({ cycle: 1, topUp: 1 });
        expect(await store.expiredReservations(Number.MAX_SAFE_INTEGER, 10)).to.have.length(0);
      });

      it('mixed 1- and 2-credit holds one after another take exactly the balance, cycle first', async () => {
        // 1, 2, 1, 2, ...: after 49 cycle credits a 2-credit hold meets 1 left, so it straddles.
        const a = account({ cycleCredits: 50, topUpCredits: 50 });
        await store.insertAccount(a);
        const results = [];
        for (let i = 0; i < 150; i++) results.push(await store.reserveCredits(a.id, (i % 2) + 1, hold()));
        const held = results.filter((r) => r !== undefined);
        expect(held.reduce((sum, r) => sum + r.fromCycle + r.fromTopUp, 0)).to.equal(100);
        expect(held.reduce((sum, r) => sum + r.fromCycle, 0)).to.equal(50);
        expect(
          held.filter((r) => r.fromCycle > 0 && r.fromTopUp > 0).map((r) => [r.fromCycle, r.fromTopUp]),
        ).to.deep.equal([[1, 1]]);
        expect(await balanceOf(a.id)).to.deep.equal({ cycle: 0, topUp: 0 });
        expect(await store.reserveCredits(a.id, 1, hold())).to.equal(undefined);
      });

      it('200 concurrent 1-credit holds on 100 credits (60 cycle + 40 top-up): exactly 100 succeed', async function () {
        if (!harness.atomicGuards) this.skip();
        const a = account({ cycleCredits: 60, topUpCredits: 40 });
        await store.insertAccount(a);
        const results = await Promise.all(Array.from({ length: 200 }, () => store.reserveCredits(a.id, 1, hold())));
        const held = results.filter((r) => r !== undefined);
        expect(held).to.have.length(100);
        expect(held.reduce((sum, r) => sum + r.fromCycle, 0)).to.equal(60);
        expect(await balanceOf(a.id)).to.deep.equal({ cycle: 0, topUp: 0 });
      });

      it('concurrent mixed 1- and 2-credit holds never take more than the balance', async function () {
        if (!harness.atomicGuards) this.skip();
        const a = account({ cycleCredits: 51, topUpCredits: 49 });
        await store.insertAccount(a);
        const costs = Array.from({ length: 150 }, (_, i) => (i % 2) + 1);
        const results = await Promise.all(costs.map((c) => store.reserveCredits(a.id, c, hold())));
        const spent = results.reduce((sum, r) => sum + (r ? r.fromCycle + r.fromTopUp : 0), 0);
        const { cycle, topUp } = await balanceOf(a.id);
        expect(cycle).to.be.at.least(0);
        expect(topUp).to.be.at.least(0);
        expect(spent + cycle + topUp).to.equal(100);
        const failedOnes = costs.filter((c, i) => c === 1 && results[i] === undefined).length;
        if (failedOnes > 0) expect(cycle + topUp).to.equal(0);
        else expect(cycle + topUp).to.be.below(2);
      });

      it('a hold id taken again (a retry, whatever it asks) takes no more credits', async () => {
        const a = account({ cycleCredits: 5, topUpCredits: 5 });
        await store.insertAccount(a);
        const first = hold();
        const taken = await store.reserveCredits(a.id, 2, first);
        expect(await store.reserveCredits(a.id, 6, first)).to.deep.equal(taken);
        expect(await balanceOf(a.id)).to.deep.equal({ cycle: 3, topUp: 5 });
        expect(await store.expiredReservations(Number.MAX_SAFE_INTEGER, 10)).to.have.length(1);
      });

      it('takes and records a hold in one write, and settles it in one write', async function () {
        const writesOf = harness.writesOf;
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
        await store.insertAccount(a);
        const split = await inOneWrite(() => store.reserveCredits(a.id, 2, hold()));
        expect(split).to.include({ fromCycle: 1, fromTopUp: 1 });
        const topUp = await inOneWrite(() => store.reserveCredits(a.id, 1, hold()));
        const lease = await inOneWrite(() => store.reserveCredits(a.id, 3, hold()));
        const key = `allowance|3|${randomUUID()}`;
        const anonymous = await inOneWrite(() => store.reserveAllowance(key, 2, 10, T0 + 86_400_000, hold()));
        await inOneWrite(() => store.settle(split!.id, 2));
        await inOneWrite(() => store.settle(topUp!.id, 0));
        await inOneWrite(() => store.settle(lease!.id, 1));
        await inOneWrite(() => store.settle(anonymous!.id, 1));
        expect(await balanceOf(a.id)).to.deep.equal({ cycle: 0, topUp: 3 });
        expect(await store.counter(key)).to.equal(1);
      });

      it('settles a hold exactly once: spending all keeps it, spending none returns both parts', async () => {
        const a = account({ cycleCredits: 1, topUpCredits: 5 });
        await store.insertAccount(a);
        const spent = (await store.reserveCredits(a.id, 2, hold()))!;
        const refunded = (await store.reserveCredits(a.id, 2, hold()))!;
        expect(await store.settle(spent.id, 2)).to.deep.equal(spent);
        expect(await store.settle(spent.id, 0)).to.equal(undefined);
        expect(await balanceOf(a.id)).to.deep.equal({ cycle: 0, topUp: 2 });
        expect(await store.settle(refunded.id, 0)).to.deep.equal(refunded);
        expect(await store.settle(refunded.id, 0)).to.equal(undefined);
        expect(await balanceOf(a.id)).to.deep.equal({ cycle: 0, topUp: 4 });
      });

      it('a partial settle returns the unused credits to top-ups first, then to the cycle', async () => {
        const a = account({ cycleCredits: 6, topUpCredits: 14 });
        await store.insertAccount(a);
        const lease = (await store.reserveCredits(a.id, 10, hold()))!;
        expect(lease).to.include({ fromCycle: 6, fromTopUp: 4 });
        expect(await balanceOf(a.id)).to.deep.equal({ cycle: 0, topUp: 10 });
        expect(await store.settle(lease.id, 3)).to.deep.equal(lease);
        expect(await balanceOf(a.id)).to.deep.equal({ cycle: 3, topUp: 14 });
        // Fewer unused credits than the hold took from top-ups: all of them go back to top-ups.
        const mostlySpent = (await store.reserveCredits(a.id, 10, hold()))!;
        expect(mostlySpent).to.include({ fromCycle: 3, fromTopUp: 7 });
        await store.settle(mostlySpent.id, 8);
        expect(await balanceOf(a.id)).to.deep.equal({ cycle: 0, topUp: 9 });
      });

      it('a partial settle after the cycle renewed returns only the unused top-up part', async () => {
        const a = account({ cycleCredits: 6, topUpCredits: 14 });
        await store.insertAccount(a);
        const lease = (await store.reserveCredits(a.id, 10, hold()))!;
        await store.renewCycle(a.id, a.cycleEnd, { cycleEnd: a.cycleEnd + MONTH, cycleCredits: 100 });
        expect(await store.settle(lease.id, 3)).to.deep.equal(lease);
        expect(await balanceOf(a.id)).to.deep.equal({ cycle: 100, topUp: 14 });
      });

      it('settling twice changes nothing the second time, whatever it spends', async () => {
        const a = account({ cycleCredits: 6, topUpCredits: 14 });
        await store.insertAccount(a);
        const lease = (await store.reserveCredits(a.id, 10, hold()))!;
        await store.settle(lease.id, 3);
        for (const spent of [0, 3, 10])
          expect(await store.settle(lease.id, spent), `spent ${spent}`).to.equal(undefined);
        expect(await balanceOf(a.id)).to.deep.equal({ cycle: 3, topUp: 14 });
        expect(await store.expiredReservations(Number.MAX_SAFE_INTEGER, 10)).to.have.length(0);
      });

      it('a settled hold is remembered: a retry is told what it spent, and the sweep forgets it', async () => {
        const a = account({ cycleCredits: 10 });
        await store.insertAccount(a);
        const r = (await store.reserveCredits(a.id, 3, hold(T0 + 5_000)))!;
        const spend = { calls: [{ credits: 3 }], rememberUntil: T0 + 60_000 };
        expect(await store.settleCalls(r.id, spend)).to.deep.equal({ settled: r, fresh: [true] });
        expect(await store.settleCalls(r.id, spend)).to.deep.equal({ settledBefore: { spentCredits: 3 } });
        expect(await store.settleCalls(r.id, { calls: [] })).to.deep.equal({ settledBefore: { spentCredits: 3 } });
        expect(await store.settle(r.id, 0), 'settled already').to.equal(undefined);
        expect(await balanceOf(a.id)).to.deep.equal({ cycle: 7, topUp: 0 });
        // Past the hold's own expiry it is no refund: the expiry sweep never lists a settled hold.
        expect(await store.expiredReservations(T0 + 10_000, 10)).to.have.length(0);
        const refunded = (await store.reserveCredits(a.id, 2, hold()))!;
        const noSpend = { calls: [], rememberUntil: T0 + 60_000 };
        expect(await store.settleCalls(refunded.id, noSpend)).to.deep.include({ settled: refunded });
        expect(await store.settleCalls(refunded.id, spend)).to.deep.equal({ settledBefore: { spentCredits: 0 } });
        expect(await balanceOf(a.id)).to.deep.equal({ cycle: 7, topUp: 0 });
        await store.sweep(T0 + 59_999);
        expect(await store.settleCalls(r.id, spend)).to.deep.equal({ settledBefore: { spentCredits: 3 } });
        await store.sweep(T0 + 60_000);
        expect(await store.settleCalls(r.id, spend)).to.equal(undefined);
        expect(await store.settleCalls(refunded.id, spend)).to.equal(undefined);
        expect(await balanceOf(a.id)).to.deep.equal({ cycle: 7, topUp: 0 });
      });

      it('a hold gone (expired and refunded) settles nothing: undefined', async () => {
        const a = account({ cycleCredits: 10 });
        await store.insertAccount(a);
        const r = (await store.reserveCredits(a.id, 3, hold(T0 + 1_000)))!;
        const [expired] = await store.expiredReservations(T0 + 1_000, 10);
        expect(expired?.id).to.equal(r.id);
        expect(await store.settle(r.id, 0)).to.deep.equal(r);
        const spend = { calls: [{ credits: 3 }], rememberUntil: T0 + 60_000 };
        expect(await store.settleCalls(r.id, spend)).to.equal(undefined);
        expect(await store.settleCalls(r.id, { ...spend, keepOpen: true })).to.equal(undefined);
        expect(await balanceOf(a.id)).to.deep.equal({ cycle: 10, topUp: 0 });
      });

      it('a partial settle spends named calls once and keeps the rest held', async () => {
        const a = account({ cycleCredits: 6, topUpCredits: 14 });
        await store.insertAccount(a);
        const lease = (await store.reserveCredits(a.id, 10, hold(T0 + 5_000)))!;
        expect(lease).to.include({ fromCycle: 6, fromTopUp: 4 });
        const first = { calls: [{ credits: 2, callId: 'call-1' }], keepOpen: true };
        expect(await store.settleCalls(lease.id, first)).to.deep.equal({ settled: lease, fresh: [true] });
        // A retry of the same partial settlement spends nothing again.
        const again = await store.settleCalls(lease.id, first);
        expect(again && 'settled' in again && again.fresh).to.deep.equal([false]);
        const both = {
          calls: [
            { credits: 2, callId: 'call-1' },
            { credits: 3, callId: 'call-2' },
          ],
          keepOpen: true,
        };
        const second = await store.settleCalls(lease.id, both);
        expect(second && 'settled' in second && second.fresh).to.deep.equal([false, true]);
        // Nothing returns while the hold stays open.
        expect(await balanceOf(a.id)).to.deep.equal({ cycle: 0, topUp: 10 });
        // The final settlement lists every call: only those not yet spent are, and the rest goes back.
        const final = {
          calls: [
            { credits: 2, callId: 'call-1' },
            { credits: 3, callId: 'call-2' },
            { credits: 1, callId: 'call-3' },
          ],
          rememberUntil: T0 + 60_000,
        };
        const ended = await store.settleCalls(lease.id, final);
        expect(ended && 'settled' in ended && ended.fresh).to.deep.equal([false, false, true]);
        // 6 spent of 10: the 4 unused go back to top-ups first.
        expect(await balanceOf(a.id)).to.deep.equal({ cycle: 0, topUp: 14 });
        expect(await store.settleCalls(lease.id, final)).to.deep.equal({ settledBefore: { spentCredits: 6 } });
        expect(await balanceOf(a.id)).to.deep.equal({ cycle: 0, topUp: 14 });
      });

      it('a lease spent in part and then expired returns only what it did not spend', async () => {
        const a = account({ cycleCredits: 10 });
        await store.insertAccount(a);
        const lease = (await store.reserveCredits(a.id, 8, hold(T0 + 1_000)))!;
        await store.settleCalls(lease.id, { calls: [{ credits: 3, callId: 'c1' }], keepOpen: true });
        const key = `allowance|9|${randomUUID()}`;
        const anonymous = (await store.reserveAllowance(key, 5, 10, T0 + 86_400_000, hold(T0 + 1_000)))!;
        await store.settleCalls(anonymous.id, { calls: [{ credits: 2, callId: 'c1' }], keepOpen: true });
        await store.settleCalls(anonymous.id, { calls: [{ credits: 2, callId: 'c1' }], keepOpen: true });
        const expired = await store.expiredReservations(T0 + 1_000, 10);
        expect(expired.map((r) => r.id).sort()).to.deep.equal([lease.id, anonymous.id].sort());
        for (const r of expired) expect(await store.settle(r.id, 0)).to.not.equal(undefined);
        expect(await balanceOf(a.id)).to.deep.equal({ cycle: 7, topUp: 0 });
        expect(await store.counter(key)).to.equal(2);
      });

      it('spends at most the hold, and a negative spend is none', async () => {
        const a = account({ cycleCredits: 2, topUpCredits: 5 });
        await store.insertAccount(a);
        const over = (await store.reserveCredits(a.id, 4, hold()))!;
        expect(await store.settle(over.id, 50)).to.deep.equal(over);
        expect(await balanceOf(a.id)).to.deep.equal({ cycle: 0, topUp: 3 });
        const negative = (await store.reserveCredits(a.id, 2, hold()))!;
        await store.settle(negative.id, -5);
        expect(await balanceOf(a.id)).to.deep.equal({ cycle: 0, topUp: 3 });
        const key = `allowance|5|${randomUUID()}`;
        const anonymous = (await store.reserveAllowance(key, 3, 10, T0 + 86_400_000, hold()))!;
        expect(await store.settle(anonymous.id, 50)).to.deep.equal(anonymous);
        expect(await store.counter(key)).to.equal(3);
      });

      it('races of spend and refund on one hold: one wins', async () => {
        const a = account({ cycleCredits: 10 });
        await store.insertAccount(a);
        const r = (await store.reserveCredits(a.id, 3, hold()))!;
        const outcomes = await Promise.all([store.settle(r.id, 0), store.settle(r.id, 3), store.settle(r.id, 0)]);
        expect(outcomes.filter((o) => o !== undefined)).to.have.length(1);
        expect((await balanceOf(a.id)).cycle).to.be.oneOf([7, 10]);
      });

      it('a refund after the cycle renewed returns only the top-up part', async () => {
        const a = account({ cycleCredits: 1, topUpCredits: 5 });
        await store.insertAccount(a);
        const r = (await store.reserveCredits(a.id, 3, hold()))!;
        await store.renewCycle(a.id, a.cycleEnd, { cycleEnd: a.cycleEnd + MONTH, cycleCredits: 100 });
        await store.settle(r.id, 0);
        expect(await balanceOf(a.id)).to.deep.equal({ cycle: 100, topUp: 5 });
      });

      it('a hold named twice (a retried authorization) is taken once; its name alone settles it', async () => {
        const a = account({ cycleCredits: 5, topUpCredits: 0 });
        await store.insertAccount(a);
        const named = { id: randomUUID(), expiresAt: T0 + 60_000 };
        const first = (await store.reserveCredits(a.id, 2, named))!;
        expect(await store.reserveCredits(a.id, 2, named)).to.deep.equal(first);
        expect(await balanceOf(a.id)).to.deep.equal({ cycle: 3, topUp: 0 });
        expect(await store.settle(named.id, 0)).to.deep.equal(first);
        expect(await balanceOf(a.id)).to.deep.equal({ cycle: 5, topUp: 0 });
        expect(await store.settle(named.id, 0)).to.equal(undefined);
        const key = `allowance|7|${randomUUID()}`;
        const anonymous = { id: randomUUID(), expiresAt: T0 + 60_000 };
        const held = (await store.reserveAllowance(key, 1, 10, T0 + 86_400_000, anonymous))!;
        expect(await store.reserveAllowance(key, 1, 10, T0 + 86_400_000, anonymous)).to.deep.equal(held);
        expect(await store.counter(key)).to.equal(1);
        expect(await store.settle(anonymous.id, 1)).to.deep.equal(held);
        expect(await store.counter(key)).to.equal(1);
      });

      it('a name whose hold was settled since is not held again: the authorization is refused', async () => {
        const a = account({ cycleCredits: 5, topUpCredits: 0 });
        await store.insertAccount(a);
        const named = { id: randomUUID(), expiresAt: T0 + 60_000 };
        await store.reserveCredits(a.id, 2, named);
        await store.settleCalls(named.id, { calls: [], keepOpen: false, rememberUntil: T0 + 60_000 });
        const retried = await store.reserveCredits(a.id, 2, named).then(
          () => 'held',
          (err: { reason?: string }) => err.reason,
        );
        expect(retried).to.equal('HOLD_RELEASED');
        expect(await balanceOf(a.id)).to.deep.equal({ cycle: 5, topUp: 0 });
        const key = `allowance|8|${randomUUID()}`;
        const anonymous = { id: randomUUID(), expiresAt: T0 + 60_000 };
        await store.reserveAllowance(key, 1, 10, T0 + 86_400_000, anonymous);
        await store.settleCalls(anonymous.id, { calls: [], keepOpen: false, rememberUntil: T0 + 60_000 });
        const again = await store.reserveAllowance(key, 1, 10, T0 + 86_400_000, anonymous).then(
          () => 'held',
          (err: { reason?: string }) => err.reason,
        );
        expect(again).to.equal('HOLD_RELEASED');
        expect(await store.counter(key)).to.equal(0);
      });

      it('lists holds past their time, accounts’ and allowances’ alike, oldest first', async () => {
        const a = account();
        await store.insertAccount(a);
        const late = await store.reserveCredits(a.id, 1, hold(T0 + 3_000));
        const early = await store.reserveCredits(a.id, 1, hold(T0 + 1_000));
        const anonymous = await store.reserveAllowance(
          `allowance|4|${randomUUID()}`,
          1,
          10,
          T0 + 86_400_000,
          hold(T0 + 2_000),
        );
        await store.reserveCredits(a.id, 1, hold(T0 + 9_000));
        const expired = await store.expiredReservations(T0 + 5_000, 10);
        expect(expired).to.deep.equal([early, anonymous, late]);
        expect(await store.expiredReservations(T0 + 5_000, 1)).to.deep.equal([early]);
        await store.settle(early!.id, 0);
        expect(await store.expiredReservations(T0 + 5_000, 10)).to.deep.equal([anonymous, late]);
      });
    });

    describe('allowances', () => {
      it('holds up to the cap, concurrently, and refunds', async function () {
        if (!harness.atomicGuards) this.skip();
        const key = `allowance|1|${randomUUID()}`;
        const results = await Promise.all(
          Array.from({ length: 30 }, () => store.reserveAllowance(key, 1, 10, T0 + 86_400_000, hold())),
        );
        expect(results.filter(Boolean)).to.have.length(10);
        expect(await store.counter(key)).to.equal(10);
        const one = results.find(Boolean)!;
        expect(one).to.include({ allowanceKey: key, accountId: null, fromCycle: 1, fromTopUp: 0 });
        await store.settle(one.id, 0);
        expect(await store.counter(key)).to.equal(9);
        expect(await store.reserveAllowance(key, 2, 10, T0, hold())).to.equal(undefined);
        expect(await store.reserveAllowance(key, 1, 10, T0, hold())).to.not.equal(undefined);
      });

      it('a partial settle lowers the counter by the unused credits, once', async () => {
        const key = `allowance|6|${randomUUID()}`;
        await store.increment(key, 1, T0 + 86_400_000);
        const lease = (await store.reserveAllowance(key, 5, 10, T0 + 86_400_000, hold()))!;
        expect(await store.counter(key)).to.equal(6);
        expect(await store.settle(lease.id, 2)).to.deep.equal(lease);
        expect(await store.counter(key)).to.equal(3);
        expect(await store.settle(lease.id, 0)).to.equal(undefined);
        expect(await store.counter(key)).to.equal(3);
      });

      it('refuses a hold larger than the cap, even on a fresh day', async () => {
        expect(await store.reserveAllowance(`allowance|2|${randomUUID()}`, 11, 10, T0, hold())).to.equal(undefined);
      });
    });

    describe('counters', () => {
      it('increments without losing counts (concurrently where the server is atomic), and goes down', async () => {
        const key = `rate|${randomUUID()}`;
        expect(await store.counter(key)).to.equal(0);
        const increment = () => store.increment(key, 1, T0 + 60_000);
        // jongodb (see atomicGuards) once answered two of 50 concurrent increments with the same
        // count under load: there the same increments go one at a time.
        const values: number[] = [];
        if (harness.atomicGuards) values.push(...(await Promise.all(Array.from({ length: 50 }, increment))));
        else for (let i = 0; i < 50; i++) values.push(await increment());
        expect([...values].sort((x, y) => x - y)).to.deep.equal(Array.from({ length: 50 }, (_, i) => i + 1));
        expect(await store.increment(key, -1, T0)).to.equal(49);
        expect(await store.counter(key)).to.equal(49);
      });

      it('sweep keeps what has not expired', async () => {
        const key = `keep|${randomUUID()}`;
        await store.increment(key, 2, T0 + 60_000);
        await store.insertSession({
          id: 'live',
          accountId: 'a',
          csrfToken: 'c',
          createdAt: T0,
          expiresAt: T0 + 60_000,
        });
        await store.sweep(T0);
        expect(await store.counter(key)).to.equal(2);
        expect(await store.sessionById('live')).to.not.equal(undefined);
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
        await store.insertApiKey(second);
        await store.insertApiKey(first);
        await store.insertApiKey(key('other'));
        expect(await store.apiKeyByHash(first.hash)).to.deep.equal(first);
        expect(await store.apiKeyByHash('nope')).to.equal(undefined);
        expect((await store.apiKeysOf('acct')).map((k) => k.id)).to.deep.equal([first.id, second.id]);
      });

      it('revokes a key of its own account once', async () => {
        const k = key('acct');
        await store.insertApiKey(k);
        expect(await store.revokeApiKey('someone-else', k.id, T0 + 5)).to.equal(undefined);
        expect((await store.revokeApiKey('acct', k.id, T0 + 5))?.revokedAt).to.equal(T0 + 5);
        expect((await store.revokeApiKey('acct', k.id, T0 + 9))?.revokedAt).to.equal(T0 + 5);
        expect((await store.apiKeyByHash(k.hash))?.revokedAt).to.equal(T0 + 5);
      });

      it('keeps a key’s own limits, across a restart', async () => {
        const limited = key('acct', {
          creditLimit: 40,
          expiresAt: T0 + MONTH,
          allowedOperations: ['screenshot', 'down-check'],
        });
        await store.insertApiKey(limited);
        expect(await store.apiKeyByHash(limited.hash)).to.deep.equal(limited);
        await store.close();
        store = await reopen();
        expect(await store.apiKeysOf('acct')).to.deep.equal([limited]);
      });

      it('keeps a key’s mode (a sandbox key is test), across a restart', async () => {
        const live = key('modes', { createdAt: T0 });
        const sandbox = key('modes', { createdAt: T0 + 1, prefix: 'wu_test_abcd', mode: 'test' });
        await store.insertApiKey(live);
        await store.insertApiKey(sandbox);
        expect((await store.apiKeyByHash(sandbox.hash))?.mode).to.equal('test');
        await store.close();
        store = await reopen();
        expect((await store.apiKeysOf('modes')).map((k) => k.mode)).to.deep.equal(['live', 'test']);
        expect(await store.apiKeyByHash(sandbox.hash)).to.deep.equal(sandbox);
      });

      it('counts a key’s holds toward its cycle spend, refuses past its limit, gives refunds back', async () => {
        const a = account({ cycleCredits: 100 });
        await store.insertAccount(a);
        const budget = { id: randomUUID(), limit: 5 };
        const first = await store.reserveCredits(a.id, 2, hold(), budget);
        expect(first).to.include({ accountId: a.id, keyId: budget.id, fromCycle: 2 });
        const second = (await store.reserveCredits(a.id, 2, hold(), budget)) as Reservation;
        expect(await store.keySpend(a.id, a.cycleEnd)).to.deep.equal(new Map([[budget.id, 4]]));
        // 4 + 2 > 5: refused, nothing taken from the account.
        expect(await store.reserveCredits(a.id, 2, hold(), budget)).to.deep.equal({ keyLimited: { spent: 4 } });
        expect(await balanceOf(a.id)).to.deep.equal({ cycle: 96, topUp: 0 });
        // A failed call's hold goes back to the key too; then the call fits.
        await store.settle(second.id, 0);
        expect(await store.keySpend(a.id, a.cycleEnd)).to.deep.equal(new Map([[budget.id, 2]]));
        expect(await store.reserveCredits(a.id, 3, hold(), budget)).to.include({ keyId: budget.id });
        // A key without a limit only counts; other accounts and cycles are apart.
        const open = { id: randomUUID(), limit: null };
        await store.reserveCredits(a.id, 50, hold(), open);
        expect(await store.keySpend(a.id, a.cycleEnd)).to.deep.equal(
          new Map([
            [budget.id, 5],
            [open.id, 50],
          ]),
        );
        expect(await store.keySpend(a.id, a.cycleEnd + MONTH)).to.deep.equal(new Map());
        expect(await store.keySpend(randomUUID(), a.cycleEnd)).to.deep.equal(new Map());
      });

      it('a key’s spend starts again with a new cycle; a refund of the old cycle leaves it alone', async () => {
        const a = account({ cycleCredits: 10 });
        await store.insertAccount(a);
        const budget = { id: randomUUID(), limit: 6 };
        const old = (await store.reserveCredits(a.id, 5, hold(), budget)) as Reservation;
        const next = a.cycleEnd + MONTH;
        await store.renewCycle(a.id, a.cycleEnd, { cycleEnd: next, cycleCredits: 100 });
        expect(await store.reserveCredits(a.id, 6, hold(), budget)).to.include({ cycleEnd: next });
        await store.settle(old.id, 0);
        expect(await store.keySpend(a.id, next)).to.deep.equal(new Map([[budget.id, 6]]));
        expect(await store.reserveCredits(a.id, 1, hold(), budget)).to.deep.equal({ keyLimited: { spent: 6 } });
      });

      it('concurrent holds of one key never pass its limit', async function () {
        if (!harness.atomicGuards) this.skip();
        const a = account({ cycleCredits: 100 });
        await store.insertAccount(a);
        const budget = { id: randomUUID(), limit: 20 };
        const outcomes = await Promise.all(
          Array.from({ length: 50 }, () => store.reserveCredits(a.id, 1, hold(), budget)),
        );
        expect(outcomes.filter((o) => o !== undefined && 'id' in o)).to.have.length(20);
        expect(await balanceOf(a.id)).to.deep.equal({ cycle: 80, topUp: 0 });
        expect(await store.keySpend(a.id, a.cycleEnd)).to.deep.equal(new Map([[budget.id, 20]]));
      });

      it('records use at most once per interval', async () => {
        const k = key('acct');
        await store.insertApiKey(k);
        await store.touchApiKey(k.id, T0 + 1_000, 60_000);
        await store.touchApiKey(k.id, T0 + 30_000, 60_000);
        expect((await store.apiKeyByHash(k.hash))?.lastUsedAt).to.equal(T0 + 1_000);
        await store.touchApiKey(k.id, T0 + 61_000, 60_000);
        expect((await store.apiKeyByHash(k.hash))?.lastUsedAt).to.equal(T0 + 61_000);
      });
    });

    describe('usage', () => {
      it('lists an account’s spent calls newest first, up to the limit, and only its own', async () => {
        const [a, b] = [randomUUID(), randomUUID()];
        await store.addUsage([{ accountId: a, operation: 'op-0', credits: 1, at: T0 }]);
        // Several at once, as a lease's settlement records its calls.
        await store.addUsage(
          [1, 2, 3, 4].map((i) => ({
            accountId: a,
            operation: `op-${i}`,
            credits: i + 1,
            at: T0 + i,
            ...(i % 2 ? {} : { target: `https://example.test/${i}` }),
          })),
        );
        await store.addUsage([]);
        await store.addUsage([{ accountId: b, operation: 'other', credits: 2, at: T0 + 10 }]);
        expect(await store.recentUsage(a, 3)).to.deep.equal([
          { accountId: a, operation: 'op-4', credits: 5, at: T0 + 4, target: 'https://example.test/4' },
          { accountId: a, operation: 'op-3', credits: 4, at: T0 + 3 },
          { accountId: a, operation: 'op-2', credits: 3, at: T0 + 2, target: 'https://example.test/2' },
        ]);
        expect(await store.recentUsage(a, 10)).to.have.length(5);
        expect(await store.recentUsage(randomUUID(), 3)).to.deep.equal([]);
      });
    });

    describe('idempotency keys', () => {
      const claim = (id: string = randomUUID(), fingerprint = 'f1', expiresAt = T0 + 60_000) => ({
        id,
        fingerprint,
        expiresAt,
      });
      const answer = { status: 202, body: '{"success":true}', headers: '{"Location":"/v1/jobs/1"}' };

      it('one claim of a key wins, even racing; the others see it running with its fingerprint', async () => {
        const id = `caller|${randomUUID()}`;
        const results = await Promise.all(Array.from({ length: 8 }, () => store.claimIdempotency(claim(id), T0)));
        expect(results.filter((r) => r === undefined)).to.have.length(1);
        for (const running of results.filter((r) => r !== undefined))
          expect(running).to.deep.equal({ id, fingerprint: 'f1', expiresAt: T0 + 60_000 });
      });

      it('keeps the completed answer until it expires, across a restart; then the key is free again', async () => {
        const id = `caller|${randomUUID()}`;
        expect(await store.claimIdempotency(claim(id), T0)).to.equal(undefined);
        expect(await store.completeIdempotency(id, 'other', answer, T0 + 86_400_000)).to.equal(false);
        expect(await store.completeIdempotency(id, 'f1', answer, T0 + 86_400_000)).to.equal(true);
        expect(await store.completeIdempotency(id, 'f1', answer, T0 + 86_400_000)).to.equal(false);
        await store.close();
        store = await reopen();
        expect(await store.claimIdempotency(claim(id, 'f2'), T0 + 1000)).to.deep.equal({
          id,
          fingerprint: 'f1',
          expiresAt: T0 + 86_400_000,
          answer,
        });
        // Released or completed, a key is never released by a late failure.
        await store.releaseIdempotency(id, 'f1');
        expect((await store.claimIdempotency(claim(id), T0 + 2000))?.answer).to.deep.equal(answer);
        expect(await store.claimIdempotency(claim(id, 'f2'), T0 + 86_400_000)).to.equal(undefined);
      });

      it('a released claim frees the key; a running claim past its time counts as absent', async () => {
        const id = `caller|${randomUUID()}`;
        expect(await store.claimIdempotency(claim(id), T0)).to.equal(undefined);
        await store.releaseIdempotency(id, 'f2');
        expect(await store.claimIdempotency(claim(id), T0)).to.not.equal(undefined);
        await store.releaseIdempotency(id, 'f1');
        expect(await store.claimIdempotency(claim(id, 'f1', T0 + 1000), T0)).to.equal(undefined);
        expect(await store.claimIdempotency(claim(id, 'f3', T0 + 9000), T0 + 1000)).to.equal(undefined);
        expect((await store.claimIdempotency(claim(id), T0 + 2000))?.fingerprint).to.equal('f3');
      });
    });

    describe('sessions and secrets', () => {
      it('stores, finds and deletes a session', async () => {
        const session = {
          id: randomUUID(),
          accountId: 'acct',
          csrfToken: 'csrf',
          createdAt: T0,
          expiresAt: T0 + 1_000,
        };
        await store.insertSession(session);
        expect(await store.sessionById(session.id)).to.deep.equal(session);
        await store.deleteSession(session.id);
        expect(await store.sessionById(session.id)).to.equal(undefined);
      });

      it("deletes every session of one account, and only that account's", async () => {
        const of = (accountId: string) => ({
          id: randomUUID(),
          accountId,
          csrfToken: 'csrf',
          createdAt: T0,
          expiresAt: T0 + 1_000,
        });
        const [a1, a2, b] = [of('acct-a'), of('acct-a'), of('acct-b')];
        for (const session of [a1, a2, b]) await store.insertSession(session);
        await store.deleteSessionsOf('acct-a');
        expect(await store.sessionById(a1.id)).to.equal(undefined);
        expect(await store.sessionById(a2.id)).to.equal(undefined);
        expect(await store.sessionById(b.id)).to.deep.equal(b);
      });

      it('keeps the first value of a secret, even when racing', async () => {
        const values = await Promise.all(['a', 'b', 'c', 'd'].map((v) => store.secret('hmac', v)));
        expect(new Set(values).size).to.equal(1);
        expect(await store.secret('hmac', 'z')).to.equal(values[0]);
      });
    });
  });
}

describe('embedded SQLite store: housekeeping', () => {
  it('sweep deletes expired counters and sessions', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'billing-store-'));
    const store = openSqliteStore(path.join(dir, 'billing.sqlite'));
    try {
      await store.increment('old', 1, T0);
      await store.insertSession({ id: 'old', accountId: 'a', csrfToken: 'c', createdAt: T0, expiresAt: T0 });
      await store.sweep(T0 + 1);
      expect(await store.counter('old')).to.equal(0);
      expect(await store.sessionById('old')).to.equal(undefined);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
