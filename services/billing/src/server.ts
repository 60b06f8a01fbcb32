import { status } from '@grpc/grpc-js';
import { bind, type Logger, type ServiceBinding, ServiceError } from '@webutil/kit';
import {
  type AuthorizeRequest,
  type AuthorizeResponse,
  BillingServiceService,
  type Denial,
  type Session,
} from '@webutil/proto/webutil/billing/v1/billing';
import { type ApiKeys, keyAllowed, keyMessage } from './api-keys.js';
import type { Challenges } from './challenge.js';
import { creditsRefused } from './credit-metrics.js';
import type { Gate } from './gate.js';
import type { IdempotencyKeys } from './idempotency.js';
import type { Ledger } from './ledger.js';
import type { EmailVerification } from './mail/email-verification.js';
import type { AccountNotices } from './mail/notices.js';
import type { Payments } from './payments/payments.js';
import type { RateLimiter } from './rate-limit.js';
import type { RevocationNotices } from './revocation-notices.js';
import { accountMessage, type Sessions } from './sessions.js';
import type { UsageRecord } from './stores/store.js';
import { MAX_USAGE_DAYS } from './usage-days.js';

export interface BillingDeps {
  gate: Gate;
  ledger: Ledger;
  sessions: Sessions;
  apiKeys: ApiKeys;
  challenges: Challenges;
  limiter: RateLimiter;
  notices: RevocationNotices;
  idempotencyKeys: IdempotencyKeys;
  payments: Payments;
  verification: EmailVerification;
  accountNotices: AccountNotices;
}

export function billingService(
  {
    gate,
    ledger,
    sessions,
    apiKeys,
    challenges,
    limiter,
    notices,
    idempotencyKeys,
    verification,
    accountNotices,
    payments,
  }: BillingDeps,
  log: Logger,
): ServiceBinding {
  return bind(
    BillingServiceService,
    {
      authorize: (request) => authorize(gate, request),
      // As many Authorize calls at once would be: each hold is its own guarded update, and each
      // request is answered on its own. Only a batch that failed whole (no hold taken) fails, so
      // that the edge's retry (another replica) takes each hold once.
      authorizeBatch: async ({ requests }) => {
        const answers = await Promise.allSettled(requests.map((request) => authorize(gate, request)));
        const failed = answers.filter((answer) => answer.status === 'rejected');
        if (failed.length > 0 && failed.length === answers.length) throw failed[0]?.reason;
        return {
          responses: answers.map((answer) => (answer.status === 'fulfilled' ? answer.value : failure(answer.reason))),
        };
      },
      countRequests: async ({ counts }) => {
        for (const { key, minute, requests } of counts) await limiter.add(key, Number(minute), requests);
        return {};
      },
      settle: async ({ settlements }) => {
        const answer = { settled: [] as string[], spent: [] as string[], expired: [] as string[] };
        // The batch's spent calls are recorded in one write, before the answer says they are spent.
        const usage: UsageRecord[] = [];
        for (const { reservationId, spent, keepOpen } of settlements) {
          const { outcome, ended } = await ledger.settle(reservationId, spent, keepOpen, usage);
          if (ended) answer.settled.push(reservationId);
          if (outcome === 'spent') answer.spent.push(reservationId);
          else if (outcome === 'expired') answer.expired.push(reservationId);
        }
        await ledger.recordUsage(usage);
        accountNotices.creditsSpent(new Set(usage.map((record) => record.accountId)));
        return answer;
      },
      getQuota: (request) => gate.quota(request.credential ?? { clientIp: '' }, request.refused),
      createChallenge: () => challenges.create(),
      solveChallenge: (request) => challenges.solve(request),
      signUp: async (request) => ({ outcome: sessionOutcome(await sessions.signUp(request)) }),
      signIn: async (request) => ({ outcome: sessionOutcome(await sessions.signIn(request)) }),
      signOut: async (request) => {
        if (request.credential?.sessionToken) await sessions.signOut(request.credential.sessionToken);
        return {};
      },
      getAccount: async (request) => {
        const { session, account: read } = await gate.session(request.credential);
        const account = await ledger.current(read);
        return {
          account: accountMessage(account, await verification.isVerified(account.id), payments.planPrice(account.plan)),
          csrfToken: session.csrfToken,
        };
      },
      createApiKey: async (request) => {
        const { account } = await gate.session(request.credential);
        // A plan without keys says so first (plan_required); a plan with them needs a verified address.
        if (keyAllowed(account)) await verification.requireVerified(account);
        const { key, secret } = await apiKeys.mint(account, request.name, {
          creditLimit: request.creditLimit,
          expiresAt: request.expiresAt,
          allowedOperations: request.allowedOperations,
          mode: request.mode,
        });
        return { key: keyMessage(key), secret };
      },
      listApiKeys: async (request) => {
        const { account } = await gate.session(request.credential);
        const [keys, spend] = await Promise.all([apiKeys.list(account), ledger.keySpend(account)]);
        return { keys: keys.map((key) => keyMessage(key, spend.get(key.id) ?? 0)) };
      },
      listUsage: async (request) => {
        const { account } = await gate.session(request.credential);
        const usage = await ledger.recentUsage(account);
        return {
          entries: usage.map(({ operation, credits, at, target }) => ({
            operation,
            credits,
            atMs: String(at),
            target: target ?? undefined,
          })),
        };
      },
      usageByDay: async ({ subject, days, sandbox }) => {
        if (!subject.startsWith('account:'))
          throw new ServiceError(status.UNAUTHENTICATED, 'ACCOUNT_REQUIRED', 'usage belongs to an account');
        if (!Number.isInteger(days) || days < 1 || days > MAX_USAGE_DAYS)
          throw new ServiceError(status.INVALID_ARGUMENT, 'INVALID_DAYS', `days must be 1 to ${MAX_USAGE_DAYS}`);
        const accountId = sandbox ? undefined : subject.slice('account:'.length);
        return { days: await ledger.usageByDay(accountId, days) };
      },
      revokeApiKey: async (request) => {
        const { account } = await gate.session(request.credential);
        const key = keyMessage(await apiKeys.revoke(account, request.keyId));
        // Answered once every edge can know: none pays the key's calls from a lease any more.
        await notices.announce(account.id);
        return { key };
      },
      claimIdempotencyKey: (request) => idempotencyKeys.claim(request),
      endIdempotencyKey: async (request) => {
        await idempotencyKeys.end(request);
        return {};
      },
    },
    log,
  );
}

async function authorize(gate: Gate, request: AuthorizeRequest): Promise<AuthorizeResponse> {
  const answer = await gate.authorize(request);
  if (answer.outcome?.$case === 'denial' && request.credits > 0)
    creditsRefused.inc({ reason: answer.outcome.denial.reason }, request.credits);
  return answer;
}

const sessionOutcome = (outcome: { session: Session } | { denial: Denial }) =>
  'session' in outcome
    ? { $case: 'session' as const, session: outcome.session }
    : { $case: 'denial' as const, denial: outcome.denial };

/** One authorization of a batch that failed, as the batch's answer carries it. */
function failure(err: unknown): AuthorizeResponse {
  // A ServiceError says what to tell the caller; anything else is billing's own fault, worded as bind() words it.
  const known = err instanceof ServiceError ? err : undefined;
  const failure = known
    ? { code: known.code, message: known.message, reason: known.reason }
    : { code: status.INTERNAL, message: 'internal error', reason: 'INTERNAL' };
  return { outcome: { $case: 'failure', failure } };
}
