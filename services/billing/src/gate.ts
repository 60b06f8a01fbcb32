import { timingSafeEqual } from 'node:crypto';
import { accountSubject, clientNetwork, unauthenticated as unauthenticatedError } from '@webutil/kit';
import {
  type AuthorizeRequest,
  type AuthorizeResponse,
  CallerPolicy,
  type Credential,
  type Denial,
  type GetQuotaResponse,
  type Quota,
} from '@webutil/proto/webutil/billing/v1/billing';
import { type ApiKeys, keyAllowed, keyHasLimits, keyRestricted } from './api-keys.js';
import type { Challenges } from './challenge.js';
import { forbidden, insufficientCredits, keyCreditLimit, rateLimited, unauthenticated } from './denials.js';
import { leaseCredits } from './leases.js';
import type { Balance, Ledger, Payer, ReserveResult } from './ledger.js';
import { type AnonymousAllowance, PLANS } from './plans.js';
import type { Counted, RateLimiter } from './rate-limit.js';
import type { Sessions } from './sessions.js';
import type { Account, AccountStore, ApiKeyRecord, KeyBudget, SessionRecord } from './stores/store.js';

/** Who is calling, once the credential checked out. */
export type Caller =
  | { kind: 'anonymous'; subject: string }
  | { kind: 'session'; account: Account; session: SessionRecord }
  | { kind: 'apikey'; account: Account; key: ApiKeyRecord }
  /** A service of the deployment working for the account unattended (Credential.service). */
  | { kind: 'service'; account: Account; service: string };

export interface GateDeps {
  ledger: Ledger;
  apiKeys: ApiKeys;
  sessions: Sessions;
  challenges: Challenges;
  limiter: RateLimiter;
  anonymous: AnonymousAllowance;
  /** Finds the account a service caller names; without it, service callers are refused. */
  accounts?: Pick<AccountStore, 'accountById'>;
}

/**
 * Every call passes here first, in this order: identify the caller (API key, session cookie or
 * client IP) and count the request against its per-minute rate, then CSRF for session callers on
 * state-changing or credit-spending requests, the challenge clearance for browser callers on
 * routes that need one, and the credit hold. Refused requests count too: a caller whose
 * credential is refused counts against its client network, like an anonymous caller, so bad keys
 * and forged cookies cannot hammer billing unmetered.
 */
export class Gate {
  constructor(private readonly deps: GateDeps) {}

  async authorize(request: AuthorizeRequest): Promise<AuthorizeResponse> {
    const credential = request.credential ?? { clientIp: '' };
    // A call priced again by its size was counted when it was first authorized.
    const { caller, counted } = await this.admit(credential, request.callers, request.repriced ? 0 : 1);
    const limited = counted.retryAfterSeconds;
    if ('refusal' in caller) {
      // An unknown caller has no credits to show; saying so spares the edge a second billing call.
      const denial = limited ? tooMany(limited) : caller;
      return { outcome: { $case: 'denial', denial: { ...denial, remaining: 0, rate: counted.window } } };
    }
    const payer = payerOf(caller);
    const refused = (denial: Denial): Promise<AuthorizeResponse> =>
      this.deny({ ...denial, rate: counted.window }, payer);
    if (limited) return refused(tooMany(limited));

    // A session's cookie rides along on cross-site navigations too, so any call that spends its
    // credits (GET routes included) must show the page's CSRF token.
    if (
      caller.kind === 'session' &&
      (request.stateChanging || request.credits > 0) &&
      !sameSecret(credential.csrfToken, caller.session.csrfToken)
    ) {
      return refused(
        forbidden(
          'CSRF_FAILED',
          'state-changing and credit-spending requests of a signed-in session need the X-CSRF-Token header',
        ),
      );
    }
    if (request.challenge && (caller.kind === 'anonymous' || caller.kind === 'session')) {
      const denial = this.deps.challenges.checkClearance(credential.clearance, credential.clientIp);
      if (denial) return refused(denial);
    }

    const keyRestrictedCaller = caller.kind === 'apikey' && keyRestricted(caller.key);
    const sandbox = caller.kind === 'apikey' && caller.key.mode === 'test';
    if (request.callers === CallerPolicy.CALLER_POLICY_OWNER) {
      const denial = notTheOwner(caller);
      if (denial) return refused(denial);
    }
    // A key limited to some operations may call only those, on every route that spends credits or
    // changes state; free reads stay open (a key allowed to start a crawl may poll it).
    const allowed = caller.kind === 'apikey' ? caller.key.allowedOperations : null;
    if ((request.credits > 0 || request.stateChanging) && allowed !== null && !allowed.includes(request.operation)) {
      return refused(
        forbidden(
          'OPERATION_NOT_ALLOWED',
          `this API key may not call ${request.operation}; it may call ${allowed.join(', ')}`,
        ),
      );
    }
    if (request.credits <= 0) {
      const quota = this.quotaOf(caller, await this.deps.ledger.balance(payer));
      return {
        outcome: {
          $case: 'grant',
          grant: { quota, rate: counted.window, keyRestricted: keyRestrictedCaller, sandbox },
        },
      };
    }
    // A sandbox key's call is answered from samples at the edge: nothing is held, the balance is untouched.
    if (sandbox) {
      const quota = this.quotaOf(caller, await this.deps.ledger.balance(payer));
      return {
        outcome: { $case: 'grant', grant: { quota, rate: counted.window, keyRestricted: true, sandbox } },
      };
    }
    const held = await this.hold(caller, payer, request);
    if ('keyShort' in held) {
      const { spent, limit } = held.keyShort;
      return {
        outcome: {
          $case: 'denial',
          denial: {
            ...keyCreditLimit(request.credits, spent, limit),
            remaining: held.balance.remaining,
            rate: counted.window,
          },
        },
      };
    }
    if ('short' in held) {
      return {
        outcome: {
          $case: 'denial',
          denial: {
            ...insufficientCredits(request.credits, held.short.remaining, caller.kind === 'anonymous'),
            rate: counted.window,
          },
        },
      };
    }
    return {
      outcome: {
        $case: 'grant',
        grant: {
          quota: this.quotaOf(caller, held.balance),
          reservationId: held.reservationId,
          rate: counted.window,
          lease: held.lease,
          keyRestricted: keyRestrictedCaller,
          sandbox: false,
        },
      },
    };
  }

  /**
   * Holds the call's credits, or a lease of the caller's credits when the edge can carry one
   * (`leaseHoldMs`) and the lease rules grant it. Only an API-key caller's: a browser's calls
   * each need their CSRF token and clearance checked here.
   */
  private async hold(
    caller: Caller,
    payer: Payer,
    request: AuthorizeRequest,
  ): Promise<ReserveResult & { lease?: { credits: number } }> {
    const { leaseHoldMs, reservationId: name } = request;
    // An API key's holds count toward its spend this cycle, and toward its own limit if it has one.
    const key: KeyBudget | undefined =
      caller.kind === 'apikey' ? { id: caller.key.id, limit: caller.key.creditLimit } : undefined;
    // A key with limits of its own gets no lease: each of its calls is decided here.
    if (leaseHoldMs && caller.kind === 'apikey' && !keyRestricted(caller.key)) {
      const credits = leaseCredits((await this.deps.ledger.balance(payer)).remaining, request.credits);
      const lease = credits > 0 ? await this.deps.ledger.reserve(payer, credits, leaseHoldMs, key, name) : undefined;
      // Short: spent meanwhile elsewhere; the call is held on its own. A retry's lease is what its
      // first try held.
      if (lease && 'reservationId' in lease) return { ...lease, lease: { credits: lease.held } };
    }
    return this.deps.ledger.reserve(payer, request.credits, request.holdMs, key, name);
  }

  /**
   * X-Credits-Remaining on responses that authorized nothing. A request the edge refused
   * (unknown route, malformed input) counts toward the caller's rate like any refused request.
   */
  async quota(credential: Credential, refused: boolean): Promise<GetQuotaResponse> {
    // The response's status is already decided: a caller past its rate still learns its credits.
    const { caller, counted } = refused
      ? await this.admit(credential, CallerPolicy.CALLER_POLICY_ANY)
      : { caller: await this.identify(credential, CallerPolicy.CALLER_POLICY_ANY), counted: undefined };
    if ('refusal' in caller) throw unauthenticatedError(caller.reason, caller.message);
    return {
      quota: this.quotaOf(caller, await this.deps.ledger.balance(payerOf(caller))),
      rate: counted?.window,
      keyRestricted: caller.kind === 'apikey' && keyRestricted(caller.key),
    };
  }

  /** The signed-in session behind a credential (account and key management). */
  async session(credential: Credential | undefined): Promise<{ session: SessionRecord; account: Account }> {
    const found = credential?.sessionToken ? await this.deps.sessions.resolve(credential.sessionToken) : undefined;
    if (!found) throw unauthenticatedError('SESSION_REQUIRED', 'sign in first');
    return found;
  }

  /**
   * Who is calling, and whether this request, counted now, is past the per-minute rate. It counts
   * against a known caller's own rate, else against the client network's (a refused credential
   * is no better than none). `requests` 0: the request was counted before (a call priced again).
   */
  private async admit(
    credential: Credential,
    policy: CallerPolicy,
    requests = 1,
  ): Promise<{ caller: Caller | Denial; counted: Counted }> {
    const caller = await this.identify(credential, policy);
    const payer = 'refusal' in caller ? this.anonymous(credential) : caller;
    const subject = rateSubject(payer);
    return {
      caller,
      counted: await this.deps.limiter.hit(
        subject,
        this.requestsPerMinute(payer),
        this.rendersInFlight(payer),
        // A service's unattended work is no request of the account's: it does not use up its rate.
        payer.kind === 'service' ? 0 : requests,
      ),
    };
  }

  private anonymous(credential: Credential): Caller {
    return { kind: 'anonymous', subject: clientNetwork(credential.clientIp) };
  }

  private async identify(credential: Credential, policy: CallerPolicy): Promise<Caller | Denial> {
    if (policy === CallerPolicy.CALLER_POLICY_IP) return this.anonymous(credential);
    if (credential.service !== undefined) return this.serviceCaller(credential.service);
    if (
      policy === CallerPolicy.CALLER_POLICY_SESSION &&
      (credential.apiKey !== undefined || !credential.sessionToken)
    ) {
      return unauthenticated('SESSION_REQUIRED', 'this route needs a signed-in session (sign in on the website)');
    }
    if (credential.apiKey !== undefined) {
      const found = await this.deps.apiKeys.lookup(credential.apiKey);
      if ('failure' in found) return unauthenticated(found.failure, keyFailureMessage(found));
      if (!keyAllowed(found.account)) return forbidden('PLAN_REQUIRED', 'API keys need the Starter plan or higher');
      return { kind: 'apikey', account: found.account, key: found.key };
    }
    if (credential.sessionToken) {
      const found = await this.deps.sessions.resolve(credential.sessionToken);
      if (!found) return unauthenticated('INVALID_SESSION', 'the session has ended; sign in again');
      return { kind: 'session', ...found };
    }
    return this.anonymous(credential);
  }

  /**
   * A service paying for an account's unattended work (a monitor's run). Only the deployment's own
   * services reach billing, and the edge never sets the field from a request (decision 0461).
   */
  private async serviceCaller({ subject, service }: { subject: string; service: string }): Promise<Caller | Denial> {
    const id = subject.startsWith('account:') ? subject.slice('account:'.length) : '';
    const account = id && this.deps.accounts ? await this.deps.accounts.accountById(id) : undefined;
    if (!account) return unauthenticated('UNKNOWN_ACCOUNT', `${service || 'a service'} named no account billing has`);
    return { kind: 'service', account, service };
  }

  private requestsPerMinute(caller: Caller): number {
    if (caller.kind === 'anonymous') return this.deps.anonymous.requestsPerMinute;
    return caller.account.requestsPerMinute ?? PLANS[caller.account.plan].requestsPerMinute;
  }

  private rendersInFlight(caller: Caller): number {
    if (caller.kind === 'anonymous') return this.deps.anonymous.rendersInFlight;
    return PLANS[caller.account.plan].rendersInFlight;
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

/**
 * A route of the account's owner (CALLER_POLICY_OWNER: its webhook secret and delivery log): a
 * session, or an API key without limits of its own (a test key works in its sandbox's books). A
 * key with limits is meant to be narrow; an anonymous caller has no account.
 */
function notTheOwner(caller: Caller): Denial | undefined {
  if (caller.kind === 'anonymous')
    return unauthenticated('ACCOUNT_REQUIRED', 'this route belongs to an account: sign in or send an API key');
  if (caller.kind === 'apikey' && keyHasLimits(caller.key))
    return forbidden(
      'OWNER_REQUIRED',
      'an API key with limits (creditLimit, expiresAt or allowedOperations) may not call this route: ' +
        'use the account page, or a key without limits',
    );
  return undefined;
}

function payerOf(caller: Caller): Payer {
  return caller.kind === 'anonymous' ? caller : { kind: 'account', account: caller.account };
}

function rateSubject(caller: Caller): string {
  return caller.kind === 'anonymous' ? `ip:${caller.subject}` : accountSubject(caller.account.id);
}

function keyFailureMessage(found: { failure: string; key?: ApiKeyRecord }): string {
  if (found.failure === 'REVOKED_API_KEY') return 'this API key has been revoked';
  if (found.failure === 'KEY_EXPIRED' && found.key?.expiresAt != null)
    return `this API key expired at ${new Date(found.key.expiresAt).toISOString()}; create a new key`;
  return 'the API key is not valid';
}

const tooMany = (retryAfterSeconds: number) =>
  rateLimited(retryAfterSeconds, `too many requests; retry in ${retryAfterSeconds} s`);

function sameSecret(given: string | undefined, expected: string): boolean {
  const a = Buffer.from(given ?? '');
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
