import { bind, type Logger, type ServiceBinding } from '@webutil/kit';
import {
  BillingServiceService,
  type Denial,
  type Session,
  SettlementOutcome,
} from '@webutil/proto/webutil/billing/v1/billing';
import { type ApiKeys, keyMessage } from './api-keys.js';
import type { Challenges } from './challenge.js';
import { creditsRefused } from './credit-metrics.js';
import type { Gate } from './gate.js';
import type { Ledger } from './ledger.js';
import { accountMessage, type Sessions } from './sessions.js';

export interface BillingDeps {
  gate: Gate;
  ledger: Ledger;
  sessions: Sessions;
  apiKeys: ApiKeys;
  challenges: Challenges;
}

export function billingService(
  { gate, ledger, sessions, apiKeys, challenges }: BillingDeps,
  log: Logger,
): ServiceBinding {
  return bind(
    BillingServiceService,
    {
      authorize: async (request) => {
        const answer = await gate.authorize(request);
        if (answer.outcome?.$case === 'denial' && request.credits > 0)
          creditsRefused.inc({ reason: answer.outcome.denial.reason }, request.credits);
        return answer;
      },
      settle: async ({ settlements }) => {
        const settled: string[] = [];
        for (const { reservationId, outcome, operation } of settlements) {
          if (outcome === SettlementOutcome.SETTLEMENT_OUTCOME_UNSPECIFIED) continue;
          const spend = outcome === SettlementOutcome.SETTLEMENT_OUTCOME_SPEND;
          if (await ledger.settle(reservationId, spend ? 'spend' : 'refund', operation)) settled.push(reservationId);
        }
        return { settled };
      },
      getQuota: async (request) => ({
        quota: await gate.quota(request.credential ?? { clientIp: '' }, request.refused),
      }),
      createChallenge: () => challenges.create(),
      solveChallenge: (request) => challenges.solve(request),
      signUp: async (request) => ({ outcome: sessionOutcome(await sessions.signUp(request)) }),
      signIn: async (request) => ({ outcome: sessionOutcome(await sessions.signIn(request)) }),
      signOut: async (request) => {
        if (request.credential?.sessionToken) await sessions.signOut(request.credential.sessionToken);
        return {};
      },
      getAccount: async (request) => {
        const { session, account } = await gate.session(request.credential);
        return { account: accountMessage(account), csrfToken: session.csrfToken };
      },
      createApiKey: async (request) => {
        const { account } = await gate.session(request.credential);
        const { key, secret } = await apiKeys.mint(account, request.name);
        return { key: keyMessage(key), secret };
      },
      listApiKeys: async (request) => {
        const { account } = await gate.session(request.credential);
        return { keys: (await apiKeys.list(account)).map(keyMessage) };
      },
      listUsage: async (request) => {
        const { account } = await gate.session(request.credential);
        const usage = await ledger.recentUsage(account);
        return { entries: usage.map(({ operation, credits, at }) => ({ operation, credits, atMs: String(at) })) };
      },
      revokeApiKey: async (request) => {
        const { account } = await gate.session(request.credential);
        return { key: keyMessage(await apiKeys.revoke(account, request.keyId)) };
      },
    },
    log,
  );
}

const sessionOutcome = (outcome: { session: Session } | { denial: Denial }) =>
  'session' in outcome
    ? { $case: 'session' as const, session: outcome.session }
    : { $case: 'denial' as const, denial: outcome.denial };
