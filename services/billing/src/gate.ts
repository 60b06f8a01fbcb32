import { timingSafeEqual } from 'node:crypto';
import { isIPv6 } from 'node:net';
import ipaddr from 'ipaddr.js';
import { canonicalIp, unauthenticated as unauthenticatedError } from '@webutil/kit';
import { CallerPolicy, type AuthorizeRequest, type AuthorizeResponse, type Credential, type Denial, type Quota } from '@webutil/proto/webutil/billing/v1/billing';
import { keyAllowed, type ApiKeys } from './api-keys.js';
import type { Challenges } from './challenge.js';
import { forbidden, insufficientCredits, rateLimited, unauthenticated } from './denials.js';
import type { Balance, Ledger, Payer } from './ledger.js';
import { PLANS, type AnonymousAllowance } from './plans.js';
import type { RateLimiter } from './rate-limit.js';
import type { Sessions } from './sessions.js';
import type { Account, SessionRecord } from './stores/store.js';

/** Who is calling, once the credential checked out. */
export type Caller =
  | { kind: 'anonymous'; subject: string }
  | { kind: 'session'; account: Account; session: SessionRecord }
  | { kind: 'apikey'; account: Account };

export interface GateDeps {
  ledger: Ledger;
  apiKeys: ApiKeys;
  sessions: Sessions;
  challenges: Challenges;
  limiter: RateLimiter;
  anonymous: AnonymousAllowance;
}

/**
 * Every call passes here first, in this order: identify the caller (API key, session cookie or
 * client IP), CSRF for session callers on state-changing requests, the challenge clearance for
 * browser callers on routes that need one, the per-minute rate, and the credit hold.
 */
export class Gate {
  constructor(private readonly deps: GateDeps) {}

  async authorize(request: AuthorizeRequest): Promise<AuthorizeResponse> {
    const credential = request.credential ?? { clientIp: '' };
    const caller = await this.identify(credential, request.callers);
    if ('refusal' in caller) return { outcome: { $case: 'denial', denial: caller } };
    const payer = payerOf(caller);
    const refused = (denial: Denial): Promise<AuthorizeResponse> => this.deny(denial, payer);

    if (caller.kind === 'session' && request.stateChanging && !sameSecret(credential.csrfToken, caller.session.csrfToken)) {
      return refused(forbidden('CSRF_FAILED', 'state-changing requests of a signed-in session need the X-CSRF-Token header'));
    }
    if (request.challenge && caller.kind !== 'apikey') {
      const denial = this.deps.challenges.checkClearance(credential.clearance, credential.clientIp);
      if (denial) return refused(denial);
    }
    const limited = await this.deps.limiter.hit(rateSubject(caller), this.requestsPerMinute(caller));
    if (limited) return refused(rateLimited(limited.retryAfterSeconds, `too many requests; retry in ${limited.retryAfterSeconds} s`));

    if (request.credits <= 0) return { outcome: { $case: 'grant', grant: { quota: this.quotaOf(caller, await this.deps.ledger.balance(payer)) } } };
    const held = await this.deps.ledger.reserve(payer, request.credits, request.holdMs);
    if ('short' in held) {
      return { outcome: { $case: 'denial', denial: insufficientCredits(request.credits, held.short.remaining, caller.kind === 'anonymous') } };
    }
    return { outcome: { $case: 'grant', grant: { quota: this.quotaOf(caller, held.balance), reservationId: held.reservationId } } };
  }

  /** GET /v1/quota data, and X-Credits-Remaining on responses that authorized nothing. */
  async quota(credential: Credential): Promise<Quota> {
    const caller = await this.identify(credential, CallerPolicy.CALLER_POLICY_ANY);
    if ('refusal' in caller) throw unauthenticatedError(caller.reason, caller.message);
    return this.quotaOf(caller, await this.deps.ledger.balance(payerOf(caller)));
  }

  /** The signed-in session behind a credential (account and key management). */
  async session(credential: Credential | undefined): Promise<{ session: SessionRecord; account: Account }> {
    const found = credential?.sessionToken ? await this.deps.sessions.resolve(credential.sessionToken) : undefined;
    if (!found) throw unauthenticatedError('SESSION_REQUIRED', 'sign in first');
    return found;
  }

  private async identify(credential: Credential, policy: CallerPolicy): Promise<Caller | Denial> {
    const anonymous: Caller = { kind: 'anonymous', subject: anonymousSubject(credential.clientIp) };
    if (policy === CallerPolicy.CALLER_POLICY_IP) return anonymous;
    if (policy === CallerPolicy.CALLER_POLICY_SESSION && (credential.apiKey !== undefined || !credential.sessionToken)) {
      return unauthenticated('SESSION_REQUIRED', 'this route needs a signed-in session (sign in on the website)');
    }
    if (credential.apiKey !== undefined) {
      const found = await this.deps.apiKeys.lookup(credential.apiKey);
      if ('failure' in found) {
        return unauthenticated(found.failure, found.failure === 'REVOKED_API_KEY' ? 'this API key has been revoked' : 'the API key is not valid');
      }
      if (!keyAllowed(found.account)) return forbidden('PLAN_REQUIRED', 'API keys need the Starter plan or higher');
      return { kind: 'apikey', account: found.account };
    }
    if (credential.sessionToken) {
      const found = await this.deps.sessions.resolve(credential.sessionToken);
      if (!found) return unauthenticated('INVALID_SESSION', 'the session has ended; sign in again');
      return { kind: 'session', ...found };
    }
    return anonymous;
  }

  private requestsPerMinute(caller: Caller): number {
    if (caller.kind === 'anonymous') return this.deps.anonymous.requestsPerMinute;
    return caller.account.requestsPerMinute ?? PLANS[caller.account.plan].requestsPerMinute;
  }

  private quotaOf(caller: Caller, balance: Balance): Quota {
    return { callerKind: caller.kind, plan: caller.kind === 'anonymous' ? undefined : caller.account.plan, ...balance };
  }

  /** A refusal of a known caller still says how many credits it has (X-Credits-Remaining). */
  private async deny(denial: Denial, payer: Payer): Promise<AuthorizeResponse> {
    const { remaining } = await this.deps.ledger.balance(payer);
    return { outcome: { $case: 'denial', denial: { ...denial, remaining } } };
  }
}

function payerOf(caller: Caller): Payer {
  return caller.kind === 'anonymous' ? caller : { kind: 'account', account: caller.account };
}

function rateSubject(caller: Caller): string {
  return caller.kind === 'anonymous' ? `ip:${caller.subject}` : `account:${caller.account.id}`;
}

function sameSecret(given: string | undefined, expected: string): boolean {
  const a = Buffer.from(given ?? '');
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Anonymous allowances are per IPv4 address, and per /64 for IPv6 (one subscriber's usual
 * allocation, which it can rotate addresses within at will).
 */
export function anonymousSubject(ip: string): string {
  const canonical = canonicalIp(ip);
  if (!canonical || !isIPv6(canonical)) return canonical ?? ip;
  return `${ipaddr.IPv6.networkAddressFromCIDR(`${canonical}/64`).toString()}/64`;
}
