import { randomUUID } from 'node:crypto';
import { status } from '@grpc/grpc-js';
import { invalidArgument, notFound, ServiceError } from '@webutil/kit';
import type { Clock } from './clock.js';
import { hashPassword } from './passwords.js';
import { addMonths, PLANS, type PlanName } from './plans.js';
import { type Account, type BillingStore, EmailTakenError } from './stores/store.js';

export interface NewAccount {
  /** Chosen by the caller when something is recorded under it first (sign-up's verification); else random. */
  id?: string;
  email: string;
  /** Omitted for accounts that only use API keys (created by an operator). */
  password?: string;
  plan: PlanName;
}

/** Operator overrides of the plan table for one account; null restores the plan's value. */
export interface PlanOverrides {
  creditsPerCycle?: number | null;
  requestsPerMinute?: number | null;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
export const MIN_PASSWORD_LENGTH = 10;
export const MAX_PASSWORD_LENGTH = 1024;

export function normalizeEmail(email: string): string {
  const normalized = email.trim().toLowerCase();
  if (normalized.length > 254 || !EMAIL.test(normalized))
    throw invalidArgument('INVALID_EMAIL', 'email is not a valid address');
  return normalized;
}

export function checkPassword(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH)
    throw invalidArgument('WEAK_PASSWORD', `password must have at least ${MIN_PASSWORD_LENGTH} characters`);
  if (password.length > MAX_PASSWORD_LENGTH)
    throw invalidArgument('INVALID_PASSWORD', `password must have at most ${MAX_PASSWORD_LENGTH} characters`);
}

/** Accounts and their plans: sign-up and the operator CLI create and change them here. */
export class Accounts {
  constructor(
    private readonly store: BillingStore,
    private readonly clock: Clock,
  ) {}

  /** A new account starts its first cycle now, with the plan's credits. Throws EmailTakenError. */
  async create({ id, email, password, plan }: NewAccount): Promise<Account> {
    const now = this.clock();
    if (password !== undefined) checkPassword(password);
    const account: Account = {
      id: id ?? randomUUID(),
      email: normalizeEmail(email),
      passwordHash: password === undefined ? null : await hashPassword(password),
      plan,
      creditsPerCycle: null,
      requestsPerMinute: null,
      cycleAnchor: now,
      cycleEnd: addMonths(now, 1),
      cycleCredits: PLANS[plan].creditsPerCycle,
      topUpCredits: 0,
      createdAt: now,
      paidThrough: null,
    };
    try {
      await this.store.insertAccount(account);
    } catch (err) {
      if (err instanceof EmailTakenError) throw new ServiceError(status.ALREADY_EXISTS, 'EMAIL_TAKEN', err.message);
      throw err;
    }
    return account;
  }

  async byEmail(email: string): Promise<Account> {
    const account = await this.store.accountByEmail(normalizeEmail(email));
    if (!account) throw notFound('ACCOUNT_NOT_FOUND', `no account with the email ${email}`);
    return account;
  }

  /** A plan change starts a fresh cycle now with the new allowance (top-ups are kept). */
  async changePlan(account: Account, plan: PlanName, overrides: PlanOverrides = {}): Promise<Account> {
    const now = this.clock();
    const creditsPerCycle =
      overrides.creditsPerCycle === undefined ? account.creditsPerCycle : overrides.creditsPerCycle;
    const requestsPerMinute =
      overrides.requestsPerMinute === undefined ? account.requestsPerMinute : overrides.requestsPerMinute;
    const changed = await this.store.changePlan(account.id, {
      plan,
      creditsPerCycle,
      requestsPerMinute,
      cycleAnchor: now,
      cycleEnd: addMonths(now, 1),
      cycleCredits: creditsPerCycle ?? PLANS[plan].creditsPerCycle,
    });
    return changed ?? account;
  }

  async addTopUp(account: Account, credits: number): Promise<Account> {
    if (!Number.isInteger(credits) || credits <= 0)
      throw invalidArgument('INVALID_CREDITS', 'top-up credits must be a positive integer');
    return (await this.store.addTopUp(account.id, credits)) ?? account;
  }

  async setPassword(account: Account, password: string): Promise<Account> {
    checkPassword(password);
    const changed = (await this.store.setPasswordHash(account.id, await hashPassword(password))) ?? account;
    // Whoever signed in with the old password (or took a session) is signed out.
    await this.store.deleteSessionsOf(account.id);
    return changed;
  }
}
