import { createHash, randomBytes } from 'node:crypto';
import type { Account as AccountMessage, Denial, Session } from '@webutil/proto/webutil/billing/v1/billing';
import type { Accounts } from './accounts.js';
import { normalizeEmail } from './accounts.js';
import type { Clock } from './clock.js';
import { rateLimited, unauthenticated } from './denials.js';
import { verifyDecoy, verifyPassword } from './passwords.js';
import type { Account, BillingStore, SessionRecord } from './stores/store.js';

/** Sessions last 14 days from sign-in; the cookie's Max-Age matches. */
const SESSION_TTL_MS = 14 * 86_400_000;

/**
 * Slow-down of password guessing: failed sign-ins are counted per 15-minute window, per email and
 * client IP (5) and per email from anywhere (20, so a spread-out guesser is slowed too). Past
 * either, sign-in answers 429 until the window ends, without checking the password.
 */
const FAILURE_WINDOW_MS = 15 * 60_000;
const MAX_FAILURES_PER_CLIENT = 5;
const MAX_FAILURES_PER_EMAIL = 20;

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

export function accountMessage(account: Account): AccountMessage {
  return { email: account.email, plan: account.plan, createdAt: new Date(account.createdAt).toISOString() };
}

/** Server-side sessions for the website: the cookie holds a random token, the store its hash. */
export class Sessions {
  constructor(
    private readonly store: BillingStore,
    private readonly accounts: Accounts,
    private readonly clock: Clock,
  ) {}

  /** A new Free account, signed in. */
  async signUp(email: string, password: string): Promise<Session> {
    const account = await this.accounts.create({ email, password, plan: 'FREE' });
    return this.start(account);
  }

  async signIn(email: string, password: string, clientIp: string): Promise<{ session: Session } | { denial: Denial }> {
    let normalized: string;
    try {
      normalized = normalizeEmail(email);
    } catch {
      return { denial: unauthenticated('INVALID_CREDENTIALS', 'wrong email or password') };
    }
    const now = this.clock();
    const window = Math.floor(now / FAILURE_WINDOW_MS);
    const windowEnd = (window + 1) * FAILURE_WINDOW_MS;
    // Count the attempt before checking it, so parallel guesses cannot all slip under the limit;
    // a success takes its count back.
    const keys = [`signin|${window}|${normalized}|${clientIp}`, `signin|${window}|${normalized}`];
    const [perClient, perEmail] = await Promise.all(keys.map((key) => this.store.increment(key, 1, windowEnd)));
    if (perClient! > MAX_FAILURES_PER_CLIENT || perEmail! > MAX_FAILURES_PER_EMAIL) {
      return { denial: rateLimited(Math.max(1, Math.ceil((windowEnd - now) / 1000)), 'too many failed sign-ins; try again later') };
    }
    const account = await this.store.accountByEmail(normalized);
    const ok = account?.passwordHash ? await verifyPassword(password, account.passwordHash) : await verifyDecoy(password);
    if (!account || !ok) return { denial: unauthenticated('INVALID_CREDENTIALS', 'wrong email or password') };
    await Promise.all(keys.map((key) => this.store.increment(key, -1, windowEnd)));
    return { session: await this.start(account) };
  }

  async signOut(token: string): Promise<void> {
    await this.store.deleteSession(hashToken(token));
  }

  /** The live session behind a cookie token and its account, if any. */
  async resolve(token: string): Promise<{ session: SessionRecord; account: Account } | undefined> {
    const session = await this.store.sessionById(hashToken(token));
    if (!session || session.expiresAt <= this.clock()) return undefined;
    const account = await this.store.accountById(session.accountId);
    return account && { session, account };
  }

  private async start(account: Account): Promise<Session> {
    const token = randomBytes(32).toString('base64url');
    const now = this.clock();
    const record: SessionRecord = { id: hashToken(token), accountId: account.id, csrfToken: randomBytes(24).toString('base64url'), createdAt: now, expiresAt: now + SESSION_TTL_MS };
    await this.store.insertSession(record);
    return { token, csrfToken: record.csrfToken, maxAgeSeconds: SESSION_TTL_MS / 1000, account: accountMessage(account) };
  }
}
