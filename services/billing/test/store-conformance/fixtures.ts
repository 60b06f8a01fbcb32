import { randomUUID } from 'node:crypto';
import type { Account, BillingStore } from '../../src/stores/store.js';

/** How one adapter is opened fresh for a test, and reopened on the same data (a restart). */
export interface Harness {
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

/** The store a case works on: opened fresh for each case by its harness. */
export interface StoreUnderTest {
  harness: Harness;
  store: BillingStore;
  /** Opens the same data again (a restart). */
  reopen(): Promise<BillingStore>;
  /** An account's cycle and top-up credits. */
  balanceOf(id: string): Promise<{ cycle: number; topUp: number }>;
}

export const T0 = Date.UTC(2026, 0, 15, 12);
export const MONTH = 31 * 86_400_000;

export function account(overrides: Partial<Account> = {}): Account {
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
    paidThrough: null,
    ...overrides,
  };
}

export const hold = (expiresAt = T0 + 60_000) => ({ id: randomUUID(), expiresAt });
