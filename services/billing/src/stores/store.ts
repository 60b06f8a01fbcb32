import { failedPrecondition } from '@webutil/kit';
import type { PlanName } from '../plans.js';

/**
 * The billing store port, one part per aggregate (each adapter has a file per part, decision 0401).
 * Every balance change is one guarded, atomic operation in the adapter (never read-then-write in
 * the domain), so concurrent calls cannot overspend and a hold is settled exactly once. Times are
 * epoch milliseconds from the service's clock.
 */
export interface BillingStore
  extends AccountStore,
    LedgerStore,
    PaymentStore,
    SessionStore,
    IdempotencyStore,
    CounterStore,
    Sweeps {
  close(): Promise<void>;
}

export interface Sweeps {
  /** Deletes expired records (adapters with TTL indexes let the database do it); a store sweeps each part. */
  sweep(now: number): Promise<void>;
}

/** Accounts and their API keys. */
export interface AccountStore {
  insertAccount(account: Account): Promise<void>;
  accountById(id: string): Promise<Account | undefined>;
  accountByEmail(email: string): Promise<Account | undefined>;
  /** Switches plan (and overrides) and starts a fresh cycle with `change.cycleCredits`. */
  changePlan(id: string, change: PlanChange): Promise<Account | undefined>;
  setPasswordHash(id: string, passwordHash: string): Promise<Account | undefined>;
  /** Replaces the hash only if it is still `current` (a password changed meanwhile wins); true if replaced. */
  replacePasswordHash(id: string, current: string, next: string): Promise<boolean>;
  addTopUp(id: string, credits: number): Promise<Account | undefined>;
  /** Starts the next cycle, only if the account is still in the cycle ending at `expectedCycleEnd`. */
  renewCycle(id: string, expectedCycleEnd: number, next: { cycleEnd: number; cycleCredits: number }): Promise<void>;

  insertApiKey(key: ApiKeyRecord): Promise<void>;
  apiKeyByHash(hash: string): Promise<ApiKeyRecord | undefined>;
  apiKeysOf(accountId: string): Promise<ApiKeyRecord[]>;
  /** Marks a key of this account revoked (once); undefined when the account has no such key. */
  revokeApiKey(accountId: string, keyId: string, at: number): Promise<ApiKeyRecord | undefined>;
  /** Records use, at most once per `everyMs`, so a busy key is not a write per request. */
  touchApiKey(keyId: string, at: number, everyMs: number): Promise<void>;
}

/** Credit holds (calls, leases and the anonymous allowance), what API keys spend, and recent usage. */
export interface LedgerStore {
  /**
   * Holds `credits` from an account, cycle credits first, then top-ups; undefined when short. With
   * `key` (an API key's call), the same atomic change adds them to the key's spend in the account's
   * cycle, and refuses the hold (`keyLimited`) when that would pass the key's own limit.
   */
  reserveCredits<K extends KeyBudget | undefined = undefined>(
    accountId: string,
    credits: number,
    hold: Hold,
    key?: K,
  ): Promise<Reservation | KeyLimitedIf<K> | undefined>;
  /** Holds `credits` of a counted allowance (anonymous per-IP day) capped at `max`; undefined when short. */
  reserveAllowance(
    allowanceKey: string,
    credits: number,
    max: number,
    allowanceExpiresAt: number,
    hold: Hold,
  ): Promise<Reservation | undefined>;
  /**
   * Ends a hold exactly once: keeps what `spend.calls` cost (clamped to 0..held) and gives the rest
   * back, as unusedCredits() splits it: to top-ups first, then to cycle credits (only while the
   * account is still in the cycle they came from); an allowance counter goes down by it. No calls
   * is a refund, the whole hold a spend. A key's hold gives the unused credits back to the key's
   * spend too, while the account is in the same cycle. A named call (`callId`) the hold spent
   * before is not spent again. With `keepOpen` the calls are spent and the rest stays held (a
   * lease's partial settlement). With `rememberUntil` the settled hold is remembered until then, so
   * a retried settlement is told what it spent; else it is forgotten at once.
   * Undefined when there is no such hold (never was, expired, or settled and forgotten).
   */
  settleCalls(reservationId: string, spend: HoldSpend): Promise<SettleResult | undefined>;
  /**
   * Ends a hold spending `spentCredits` of it (clamped to 0..held), as settleCalls() with one
   * call; the hold as it was, or undefined when there is none or it was settled already.
   */
  settle(reservationId: string, spentCredits: number): Promise<Reservation | undefined>;
  /** Live holds whose time ran out, oldest first; the caller refunds each with settle(id, 0). */
  expiredReservations(now: number, limit: number): Promise<Reservation[]>;

  /** Credits each key of the account has spent (and holds) in the cycle ending at `cycleEnd`. */
  keySpend(accountId: string, cycleEnd: number): Promise<Map<string, number>>;

  /** Records a spent call of an account (the dashboard's recent usage). */
  addUsage(records: readonly UsageRecord[]): Promise<void>;
  /** An account's most recent spent calls, newest first. */
  recentUsage(accountId: string, limit: number): Promise<UsageRecord[]>;
  /**
   * An account's spent credits and calls per UTC day and operation, of the calls settled in
   * [from, to), by day then operation (the account page's usage chart).
   */
  usageByDay(accountId: string, from: number, to: number): Promise<DailyUsage[]>;
}

/** Payment-provider customers and applied payments. */
export interface PaymentStore {
  /**
   * Names the account's payment-provider customer, once: the first one named stays (two checkouts
   * racing to make one agree on it). The account's customer now, or undefined when no such account.
   */
  linkPaymentCustomer(accountId: string, customerId: string): Promise<string | undefined>;
  /** The account's payment-provider customer, if it has one. */
  paymentCustomerOf(accountId: string): Promise<string | undefined>;
  accountByPaymentCustomer(customerId: string): Promise<Account | undefined>;
  /**
   * Applies a payment's change to its account exactly once: records every key of `payment.keys`
   * (the provider's event id and the id of the paid object) and makes the change in one atomic
   * step; `duplicate` (nothing changed) when any key was recorded before, `no_account` likewise.
   */
  applyPayment(payment: PaymentChange): Promise<'applied' | 'duplicate' | 'no_account'>;
  /**
   * Ends a paid plan whose time ran out (decision 0413): the account moves to `free` (a new plan and
   * cycle) and holds no paid plan, only if it still holds one until `expectedPaidThrough`.
   */
  endPaidPlan(id: string, expectedPaidThrough: number, free: PlanChange): Promise<void>;
}

/** Signed-in sessions. */
export interface SessionStore {
  insertSession(session: SessionRecord): Promise<void>;
  sessionById(id: string): Promise<SessionRecord | undefined>;
  deleteSession(id: string): Promise<void>;
  /** Deletes every session of the account (its password changed). */
  deleteSessionsOf(accountId: string): Promise<void>;
}

/** Idempotency keys of calls and their kept answers. */
export interface IdempotencyStore {
  /**
   * Claims an idempotency key for a call (a record, running until `completeIdempotency`):
   * undefined when claimed; else the live record that holds it (running, or its answer kept).
   * A record past its `expiresAt` counts as absent.
   */
  claimIdempotency(claim: IdempotencyClaim, now: number): Promise<IdempotencyRecord | undefined>;
  /**
   * Keeps the answer of the running claim (`id` with `fingerprint`) until `expiresAt`; false when
   * there is no such running claim.
   */
  completeIdempotency(id: string, fingerprint: string, answer: IdempotentAnswer, expiresAt: number): Promise<boolean>;
  /** Drops the running claim (the call failed: its retry runs again). */
  releaseIdempotency(id: string, fingerprint: string): Promise<void>;
}

/** Named counters (rate limits, throttles, the allowance) and named secrets. */
export interface CounterStore {
  /** Adds `by` to a named counter (created at 0, deleted after `expiresAt`); returns the new value. */
  increment(key: string, by: number, expiresAt: number): Promise<number>;
  /** A counter's value; 0 when it does not exist. */
  counter(key: string): Promise<number>;

  /** The stored value of a named secret, storing `candidate` first if there is none. */
  secret(name: string, candidate: string): Promise<string>;
}

export interface Account {
  id: string;
  /** Lower-case; unique. */
  email: string;
  /** Absent for accounts an operator created without a password (API keys only). */
  passwordHash: string | null;
  plan: PlanName;
  /** Operator overrides of the plan table for this account (custom contracts); null = plan's value. */
  creditsPerCycle: number | null;
  requestsPerMinute: number | null;
  /** Start of the current plan's first cycle; cycles renew on its monthly anniversaries. */
  cycleAnchor: number;
  cycleEnd: number;
  /** Credits left in the current cycle. */
  cycleCredits: number;
  /** Purchased credits; they persist across cycles and are spent after cycle credits. */
  topUpCredits: number;
  createdAt: number;
  /**
   * Until when a paid subscription holds the plan (its period's end, plus the grace for an unpaid
   * renewal); null when none does. While set, cycles start only on the provider's word.
   */
  paidThrough: number | null;
}

/** A plan change replaces these fields together: a new plan starts a new cycle. */
export type PlanChange = Pick<
  Account,
  'plan' | 'creditsPerCycle' | 'requestsPerMinute' | 'cycleAnchor' | 'cycleEnd' | 'cycleCredits'
>;

/** What one payment does to its account (BillingStore.applyPayment). */
export interface PaymentChange {
  accountId: string;
  /** Names that make it once-only: letters, digits and `_`, `:` or `-` (no dots), e.g. `event:evt_1`. */
  keys: readonly string[];
  /** Top-up credits to add. */
  topUpCredits?: number;
  /** Top-up credits to take back (a refund): never more than the account has left. */
  removeTopUpCredits?: number;
  /** A new plan and cycle. */
  plan?: PlanChange;
  /** A higher plan within the same cycle, adding credits to the cycle's. */
  upgrade?: { plan: PlanName; addCycleCredits: number };
  /** Sets Account.paidThrough. */
  paidThrough?: number | null;
  at: number;
}

/** A payment key may name a field of a document (MongoDB): no dots, no `$`. */
export const PAYMENT_KEY = /^[A-Za-z0-9_:-]{1,200}$/;

export interface Hold {
  id: string;
  expiresAt: number;
}

/** The API key a hold is for, and the most it may spend in the account's cycle (null: no limit). */
export interface KeyBudget {
  id: string;
  limit: number | null;
}

/** A hold refused by the key's own limit: what the key has spent (and holds) this cycle. */
export interface KeyLimited {
  keyLimited: { spent: number };
}

/** Only a hold for a key can be refused by the key's limit. */
export type KeyLimitedIf<K> = K extends KeyBudget ? KeyLimited : never;

/** A spent call of an account (its recent usage). */
export interface UsageRecord {
  accountId: string;
  operation: string;
  credits: number;
  at: number;
  /** What the call worked on: its url or domain, when it names one. */
  target?: string;
}

/** One operation's spent calls of one UTC day. */
export interface DailyUsage {
  /** The day's start, epoch milliseconds (UTC midnight). */
  day: number;
  operation: string;
  credits: number;
  calls: number;
}

/**
 * Credits held for one call or a lease (calls the edge serves from one hold): what was taken and
 * from where, so settling puts the unused part back.
 */
export interface Reservation {
  id: string;
  /** Set for signed-in callers (sessions, API keys). */
  accountId: string | null;
  /** Set for anonymous callers: the counter of the IP's day. */
  allowanceKey: string | null;
  /** Set for an API key's calls: the key whose cycle spend the hold counts toward. */
  keyId: string | null;
  /** End of the account cycle the credits came from. */
  cycleEnd: number | null;
  /** Credits taken from the cycle (or the anonymous allowance). */
  fromCycle: number;
  fromTopUp: number;
  expiresAt: number;
}

/** A call a settlement spends: its credits, and its name when it was paid from a lease. */
export interface CallSpend {
  credits: number;
  callId?: string;
}

/** What a settlement does to a hold; see BillingStore.settle. */
export interface HoldSpend {
  calls: readonly CallSpend[];
  keepOpen?: boolean;
  rememberUntil?: number;
}

/**
 * A settlement's effect: `settled`, the hold as it was before this settlement changed it, and
 * `fresh[i]`, whether `calls[i]` was spent now (a named call spent before is not); or
 * `settledBefore`, the hold had been settled already, spending `spentCredits`.
 */
export type SettleResult = { settled: Reservation; fresh: boolean[] } | { settledBefore: { spentCredits: number } };

/** The calls of `spend` the hold has not spent before, and what they cost. */
export function freshCalls(spend: HoldSpend, spentBefore: readonly string[]): { fresh: boolean[]; credits: number } {
  const seen = new Set(spentBefore);
  let credits = 0;
  const fresh = spend.calls.map(({ credits: cost, callId }) => {
    if (callId !== undefined) {
      if (seen.has(callId)) return false;
      seen.add(callId);
    }
    credits += Math.max(0, cost);
    return true;
  });
  return { fresh, credits };
}

/** settle(id, credits) through settleCalls(). */
export async function settleCredits(
  store: Pick<LedgerStore, 'settleCalls'>,
  id: string,
  credits: number,
): Promise<Reservation | undefined> {
  const result = await store.settleCalls(id, { calls: credits > 0 ? [{ credits }] : [] });
  return result && 'settled' in result ? result.settled : undefined;
}

/**
 * What is left of a hold once `spentCredits` of it are spent and it stays open: the spent part
 * counts as cycle credits first, as unusedCredits() does.
 */
export function keptOpen(
  hold: Pick<Reservation, 'fromCycle' | 'fromTopUp'>,
  spentCredits: number,
): { fromCycle: number; fromTopUp: number } {
  const { toCycle, toTopUp } = unusedCredits(hold, spentCredits);
  return { fromCycle: toCycle, fromTopUp: toTopUp };
}

/**
 * What settling `hold` with `spentCredits` (clamped to 0..held) gives back, by where it came from.
 * Calls spend cycle credits before top-ups, so the spent part counts as the hold's cycle credits
 * and the unused part goes back to top-ups first.
 */
export function unusedCredits(
  hold: Pick<Reservation, 'fromCycle' | 'fromTopUp'>,
  spentCredits: number,
): { toCycle: number; toTopUp: number } {
  const held = hold.fromCycle + hold.fromTopUp;
  const unused = held - (spentCredits > 0 ? Math.min(spentCredits, held) : 0);
  const toTopUp = Math.min(unused, hold.fromTopUp);
  return { toCycle: unused - toTopUp, toTopUp };
}

export interface ApiKeyRecord {
  id: string;
  accountId: string;
  name: string;
  /** First characters of the key, shown in listings. */
  prefix: string;
  /** SHA-256 of the key; the key itself is never stored. */
  hash: string;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
  /** The key's own limits (decision 0203); null: none. */
  creditLimit: number | null;
  expiresAt: number | null;
  allowedOperations: string[] | null;
  /** live, or test: a sandbox key, answered from samples and spending nothing (decision 0207). */
  mode: KeyMode;
}

export type KeyMode = 'live' | 'test';

export interface SessionRecord {
  /** SHA-256 of the cookie token; the token itself is never stored. */
  id: string;
  accountId: string;
  csrfToken: string;
  createdAt: number;
  expiresAt: number;
}

/** A caller's claim of an idempotency key: `id` names the caller and the key. */
export interface IdempotencyClaim {
  id: string;
  /** SHA-256 of the request the key was first sent with. */
  fingerprint: string;
  /** A running claim ends here if nobody completes it (the first call's process died). */
  expiresAt: number;
}

/** The first answer of a call, replayed to its retries. */
export interface IdempotentAnswer {
  status: number;
  /** The response body as sent (JSON). */
  body: string;
  /** The route's own headers (e.g. a job's Location), as JSON. */
  headers: string;
}

export interface IdempotencyRecord extends IdempotencyClaim {
  /** Undefined while the first call is running. */
  answer?: IdempotentAnswer;
}

/** insertAccount() with an email that already has an account. */
export class EmailTakenError extends Error {
  constructor(email: string) {
    super(`an account with the email ${email} already exists`);
    this.name = 'EmailTakenError';
  }
}

/**
 * An authorization retried under the name of a hold that has been settled since (released by the
 * edge, refunded by expiry): the credits are not held again under a name whose call has ended.
 */
export const holdReleased = () =>
  failedPrecondition('HOLD_RELEASED', "this authorization's hold was released already; send the call again");
