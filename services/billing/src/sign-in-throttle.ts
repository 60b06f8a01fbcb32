import { clientNetwork } from '@webutil/kit';
import type { ChallengeSolution, Denial } from '@webutil/proto/webutil/billing/v1/billing';
import type { Challenges } from './challenge.js';
import type { Clock } from './clock.js';
import { rateLimited, unauthenticated } from './denials.js';
import type { BillingStore } from './stores/store.js';

export interface SignInLimits {
  /** Evaluated failures per account and client network in a window; past it, that pair waits. */
  perClient: number;
  /** Evaluated failures per account in a window; past it, each attempt needs a solved challenge. */
  perAccount: number;
  windowMs: number;
}

/**
 * 5 per client per 15 minutes lets a person mistype, not guess; 20 per account means at least
 * four networks guessing before the owner is asked for a challenge.
 */
export const DEFAULT_SIGN_IN_LIMITS: SignInLimits = { perClient: 5, perAccount: 20, windowMs: 15 * 60_000 };

/** An attempt let through to the password check; its counts are taken back if it succeeds. */
export interface Attempt {
  keys: string[];
  expiresAt: number;
}

/**
 * Slows password guessing without locking the owner out. Failures are counted per account and
 * client network together, so a guesser's refusals (429 until the window ends) never reach the
 * owner signing in from elsewhere; per account, past many failures from anywhere, every attempt
 * must carry a freshly solved challenge: a cost per guess, never a lock. Only attempts whose
 * password is checked count: a refused attempt counts nowhere.
 */
export class SignInThrottle {
  constructor(
    private readonly store: BillingStore,
    private readonly challenges: Challenges,
    private readonly clock: Clock,
    private readonly limits: SignInLimits = DEFAULT_SIGN_IN_LIMITS,
  ) {}

  /**
   * Counts the attempt before its password is checked, so parallel guesses cannot all slip under
   * a limit; an attempt refused here takes its counts back.
   */
  async admit(
    email: string,
    clientIp: string,
    solution: ChallengeSolution | undefined,
  ): Promise<{ attempt: Attempt } | { denial: Denial }> {
    const now = this.clock();
    const window = Math.floor(now / this.limits.windowMs);
    const expiresAt = (window + 1) * this.limits.windowMs;
    const pair = `signin|${window}|${email}|${clientNetwork(clientIp)}`;
    const account = `signin|${window}|${email}`;
    if ((await this.store.increment(pair, 1, expiresAt)) > this.limits.perClient) {
      await this.store.increment(pair, -1, expiresAt);
      const retryAfter = Math.max(1, Math.ceil((expiresAt - now) / 1000));
      // Its own code: this is the failed sign-ins limit, not the caller's request rate.
      const denial = rateLimited(retryAfter, 'too many failed sign-ins from this client; try again later');
      return { denial: { ...denial, reason: 'SIGN_IN_LIMIT' } };
    }
    const attempt = { keys: [pair, account], expiresAt };
    if ((await this.store.increment(account, 1, expiresAt)) > this.limits.perAccount) {
      const denial = await this.challenge(solution, clientIp).catch(async (err: unknown) => {
        await this.takeBack(attempt);
        throw err;
      });
      if (denial) {
        await this.takeBack(attempt);
        return { denial };
      }
    }
    return { attempt };
  }

  /** The password checked out: the attempt was not a failure. */
  async succeeded(attempt: Attempt): Promise<void> {
    await this.takeBack(attempt);
  }

  private async challenge(solution: ChallengeSolution | undefined, clientIp: string): Promise<Denial | undefined> {
    if (solution?.kind) return this.challenges.redeem(solution, clientIp);
    return unauthenticated(
      'CHALLENGE_REQUIRED',
      'this account has had many failed sign-ins: solve a bot challenge (GET /v1/challenge) and send its ' +
        'payload (or turnstileToken) with the sign-in',
    );
  }

  private async takeBack({ keys, expiresAt }: Attempt): Promise<void> {
    await Promise.all(keys.map((key) => this.store.increment(key, -1, expiresAt)));
  }
}
