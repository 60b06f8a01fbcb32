import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { clientNetwork } from '@webutil/kit';
import type {
  Account as AccountMessage,
  Denial,
  Session,
  SignInRequest,
  SignUpRequest,
} from '@webutil/proto/webutil/billing/v1/billing';
import type { Accounts } from './accounts.js';
import { checkPassword, normalizeEmail } from './accounts.js';
import type { Challenges } from './challenge.js';
import type { Clock } from './clock.js';
import { rateLimited, unauthenticated } from './denials.js';
import type { EmailVerification } from './mail/email-verification.js';
import { hashPassword, verifyDecoy, verifyPassword } from './passwords.js';
import { utcDay } from './plans.js';
import type { SignInThrottle } from './sign-in-throttle.js';
import type { Account, BillingStore, SessionRecord } from './stores/store.js';

/** Sessions last 14 days from sign-in; the cookie's Max-Age matches. */
const SESSION_TTL_MS = 14 * 86_400_000;

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');

/** The account as its owner sees it; `price`, the plan's card price where it is sold. */
export function accountMessage(
  account: Account,
  emailVerified: boolean,
  price?: { amount: number; currency: string },
): AccountMessage {
  return {
    email: account.email,
    plan: account.plan,
    createdAt: new Date(account.createdAt).toISOString(),
    cycleEnds: new Date(account.cycleEnd).toISOString(),
    topUpCredits: account.topUpCredits,
    emailVerified,
    ...(price ? { planPrice: price.amount, currency: price.currency } : {}),
    ...(account.paidThrough === null ? {} : { paidThrough: new Date(account.paidThrough).toISOString() }),
    renews: account.paidThrough === null || account.paidThrough > account.cycleEnd,
  };
}

export interface SessionDeps {
  store: BillingStore;
  accounts: Accounts;
  challenges: Challenges;
  verification: EmailVerification;
  throttle: SignInThrottle;
  clock: Clock;
  /** New accounts per client network (IPv4 address, IPv6 /64) per UTC day. */
  signUpsPerNetworkPerDay: number;
}

type Outcome = { session: Session } | { denial: Denial };

/** Server-side sessions for the website: the cookie holds a random token, the store its hash. */
export class Sessions {
  constructor(private readonly deps: SessionDeps) {}

  /**
   * A new Free account, signed in. Every sign-up redeems a freshly solved challenge, and each
   * client network opens a few accounts a day, so Free credits cannot be farmed by the hundred.
   */
  async signUp(request: SignUpRequest): Promise<Outcome> {
    // A malformed request spends neither the challenge nor the day's count.
    const email = normalizeEmail(request.email);
    checkPassword(request.password);
    const challenge = await this.deps.challenges.redeem(request.solution, request.clientIp);
    if (challenge) return { denial: challenge };
    const { day, endsAt } = utcDay(this.deps.clock());
    const key = `signups|${day}|${clientNetwork(request.clientIp)}`;
    if ((await this.deps.store.increment(key, 1, endsAt)) > this.deps.signUpsPerNetworkPerDay) {
      await this.deps.store.increment(key, -1, endsAt);
      const retryAfter = Math.max(1, Math.ceil((endsAt - this.deps.clock()) / 1000));
      const message = 'this network has opened its accounts for today; sign in, or try again after 00:00 UTC';
      return { denial: { ...rateLimited(retryAfter, message), reason: 'SIGN_UP_LIMIT' } };
    }
    // The account waits for its address to be verified from its first moment (recorded first).
    const id = randomUUID();
    await this.deps.verification.expect(id, email);
    let account: Account;
    try {
      account = await this.deps.accounts.create({ id, email, password: request.password, plan: 'FREE' });
    } catch (err) {
      await this.deps.store.increment(key, -1, endsAt); // no account, nothing counted
      await this.deps.verification.forget(id);
      throw err;
    }
    await this.deps.verification.sendLink(account, request.linkBase);
    return { session: await this.start(account, false) };
  }

  /** Checks the password (throttled); a hash made with older parameters is replaced on success. */
  async signIn(request: SignInRequest): Promise<Outcome> {
    const wrong = { denial: unauthenticated('INVALID_CREDENTIALS', 'wrong email or password') };
    let email: string;
    try {
      email = normalizeEmail(request.email);
    } catch {
      return wrong;
    }
    const admitted = await this.deps.throttle.admit(email, request.clientIp, request.solution);
    if ('denial' in admitted) return admitted;
    const account = await this.deps.store.accountByEmail(email);
    const stored = account?.passwordHash;
    const verified = stored
      ? await verifyPassword(request.password, stored)
      : { ok: await verifyDecoy(request.password), outdated: false };
    if (!account || !stored || !verified.ok) return wrong;
    await this.deps.throttle.succeeded(admitted.attempt);
    if (verified.outdated)
      await this.deps.store.replacePasswordHash(account.id, stored, await hashPassword(request.password));
    return { session: await this.start(account, await this.deps.verification.isVerified(account.id)) };
  }

  async signOut(token: string): Promise<void> {
    await this.deps.store.deleteSession(hashToken(token));
  }

  /** The live session behind a cookie token and its account, if any. */
  async resolve(token: string): Promise<{ session: SessionRecord; account: Account } | undefined> {
    const session = await this.deps.store.sessionById(hashToken(token));
    if (!session || session.expiresAt <= this.deps.clock()) return undefined;
    const account = await this.deps.store.accountById(session.accountId);
    return account && { session, account };
  }

  private async start(account: Account, emailVerified: boolean): Promise<Session> {
    const token = randomBytes(32).toString('base64url');
    const now = this.deps.clock();
    const record: SessionRecord = {
      id: hashToken(token),
      accountId: account.id,
      csrfToken: randomBytes(24).toString('base64url'),
      createdAt: now,
      expiresAt: now + SESSION_TTL_MS,
    };
    await this.deps.store.insertSession(record);
    return {
      token,
      csrfToken: record.csrfToken,
      maxAgeSeconds: SESSION_TTL_MS / 1000,
      account: accountMessage(account, emailVerified),
    };
  }
}
