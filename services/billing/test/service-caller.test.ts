import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '@webutil/kit';
import { type AuthorizeRequest, CallerPolicy, Refusal } from '@webutil/proto/webutil/billing/v1/billing';
import { expect } from 'chai';
import { Accounts } from '../src/accounts.js';
import { ApiKeys } from '../src/api-keys.js';
import { Challenges } from '../src/challenge.js';
import { Gate, type GateDeps } from '../src/gate.js';
import { Ledger } from '../src/ledger.js';
import { RateLimiter } from '../src/rate-limit.js';
import { Sessions } from '../src/sessions.js';
import { SignInThrottle } from '../src/sign-in-throttle.js';
import type { BillingStore } from '../src/stores/store.js';
import { openSqliteStore } from '../src/stores/store-sqlite.js';
import { verificationIn } from './verification-in.js';

/**
 * A service of the deployment charging an account for its unattended work (a monitor's run,
 * Credential.service, decision 0461): held and spent like a call of the account's, never beyond its
 * credits, without using up its rate; an account billing does not have is refused.
 */
describe('Authorize for a service caller (Credential.service)', () => {
  let dir: string;
  let store: BillingStore;
  let deps: GateDeps;
  let gate: Gate;
  let ledger: Ledger;
  let accountId: string;

  beforeEach(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'billing-service-caller-'));
    mkdirSync(dir, { recursive: true });
    store = openSqliteStore(path.join(dir, 'billing.sqlite'));
    const now = Date.UTC(2026, 0, 31, 10, 0, 5);
    const clock = () => now;
    const anonymous = { creditsPerDay: 10, requestsPerMinute: 100, rendersInFlight: 2 };
    ledger = new Ledger(store, clock, { anonymous, reservationGraceMs: 1_000 });
    const accounts = new Accounts(store, clock);
    const challenges = new Challenges(
      { secret: 'test', maxNumber: 1_000, challengeTtlMs: 60_000, clearanceTtlMs: 60_000 },
      store,
      clock,
      createLogger('test', 'silent'),
    );
    const sessions = new Sessions({
      store,
      accounts,
      challenges,
      verification: verificationIn(dir, store, clock),
      throttle: new SignInThrottle(store, challenges, clock),
      clock,
      signUpsPerNetworkPerDay: 3,
    });
    deps = {
      ledger,
      apiKeys: new ApiKeys(store, clock),
      sessions,
      challenges,
      limiter: new RateLimiter(store, clock),
      anonymous,
      accounts: store,
    };
    gate = new Gate(deps);
    const created = await accounts.create({ email: 'monitors@example.test', plan: 'STARTER' });
    accountId = created.id;
    await accounts.changePlan(created, 'STARTER', { creditsPerCycle: 3, requestsPerMinute: 1 });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const run = (credits: number, subject = `account:${accountId}`): AuthorizeRequest => ({
    credential: { clientIp: '', service: { subject, service: 'monitor' } },
    operation: 'down-check',
    credits,
    challenge: false,
    callers: CallerPolicy.CALLER_POLICY_ANY,
    stateChanging: false,
    holdMs: 30_000,
  });
  const denialOf = (reply: Awaited<ReturnType<Gate['authorize']>>) =>
    reply.outcome?.$case === 'denial' ? reply.outcome.denial : undefined;

  it("holds the account's credits, past its request rate, and refuses what it cannot pay", async () => {
    const first = await gate.authorize(run(2));
    const grant = first.outcome?.$case === 'grant' ? first.outcome.grant : undefined;
    expect(grant?.reservationId).to.be.a('string');
    expect(grant?.quota).to.include({ callerKind: 'service', plan: 'STARTER', remaining: 1 });
    // One request a minute: the account's rate is not what a service's runs use up.
    const second = await gate.authorize(run(1));
    expect(second.outcome?.$case).to.equal('grant');
    const third = denialOf(await gate.authorize(run(1)));
    expect(third?.refusal).to.equal(Refusal.REFUSAL_INSUFFICIENT_CREDITS);
    expect(third?.remaining).to.equal(0);
  });

  it('refuses an account billing does not have, and any service caller without the account store', async () => {
    const unknown = denialOf(await gate.authorize(run(1, 'account:nope')));
    expect(unknown).to.include({ refusal: Refusal.REFUSAL_UNAUTHENTICATED, reason: 'UNKNOWN_ACCOUNT' });
    const ip = denialOf(await gate.authorize(run(1, '203.0.113.0/24')));
    expect(ip?.reason).to.equal('UNKNOWN_ACCOUNT');
    const withoutAccounts = new Gate({ ...deps, accounts: undefined });
    expect(denialOf(await withoutAccounts.authorize(run(1)))?.reason).to.equal('UNKNOWN_ACCOUNT');
  });
});
