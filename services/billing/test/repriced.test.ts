import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '@webutil/kit';
import { type AuthorizeRequest, CallerPolicy, Refusal } from '@webutil/proto/webutil/billing/v1/billing';
import { expect } from 'chai';
import { Accounts } from '../src/accounts.js';
import { ApiKeys } from '../src/api-keys.js';
import { Challenges } from '../src/challenge.js';
import { Gate } from '../src/gate.js';
import { Ledger } from '../src/ledger.js';
import { RateLimiter } from '../src/rate-limit.js';
import { Sessions } from '../src/sessions.js';
import { SignInThrottle } from '../src/sign-in-throttle.js';
import type { BillingStore } from '../src/stores/store.js';
import { openSqliteStore } from '../src/stores/store-sqlite.js';
import { verificationIn } from './verification-in.js';

/**
 * A call priced again by its size (AuthorizeRequest.repriced, decision 0351): the same request as
 * an authorization granted before, so it holds credits without counting toward the rate again.
 */
describe('Authorize of a call priced again by its size (embedded store)', () => {
  const PER_MINUTE = 2;
  let dir: string;
  let store: BillingStore;
  let gate: Gate;
  let apiKey: string;

  beforeEach(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'billing-repriced-'));
    store = openSqliteStore(path.join(dir, 'billing.sqlite'));
    const now = Date.UTC(2026, 0, 31, 10, 0, 5);
    const clock = () => now;
    const anonymous = { creditsPerDay: 10, requestsPerMinute: PER_MINUTE, rendersInFlight: 2 };
    const ledger = new Ledger(store, clock, { anonymous, reservationGraceMs: 1_000 });
    const accounts = new Accounts(store, clock);
    const apiKeys = new ApiKeys(store, clock);
    const challenges = new Challenges(
      { secret: 'test', maxNumber: 1_000, challengeTtlMs: 60_000, clearanceTtlMs: 60_000 },
      store,
      clock,
      createLogger('test', 'silent'),
    );
    const throttle = new SignInThrottle(store, challenges, clock);
    const verification = verificationIn(dir, store, clock);
    const sessions = new Sessions({
      store,
      accounts,
      challenges,
      verification,
      throttle,
      clock,
      signUpsPerNetworkPerDay: 3,
    });
    gate = new Gate({ ledger, apiKeys, sessions, challenges, limiter: new RateLimiter(store, clock), anonymous });
    const created = await accounts.create({ email: 'sized@example.test', plan: 'STARTER' });
    const account = await accounts.changePlan(created, 'STARTER', {
      creditsPerCycle: 10,
      requestsPerMinute: PER_MINUTE,
    });
    apiKey = (await apiKeys.mint(account, 'test')).secret;
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const check = (credits: number, repriced?: boolean): AuthorizeRequest => ({
    credential: { apiKey, clientIp: '203.0.113.9' },
    operation: 'bookmarks-check',
    credits,
    challenge: true,
    callers: CallerPolicy.CALLER_POLICY_ANY,
    stateChanging: true,
    holdMs: 60_000,
    repriced,
  });

  it('holds the sized price without counting the request again, even at the rate limit', async () => {
    const first = await gate.authorize(check(2));
    const second = await gate.authorize(check(2));
    expect(second.outcome?.$case === 'grant' && second.outcome.grant.rate?.used).to.equal(PER_MINUTE);
    // The second call, read and priced at 6: not counted, not refused for the rate.
    const sized = await gate.authorize(check(6, true));
    expect(sized.outcome?.$case).to.equal('grant');
    const grant = sized.outcome?.$case === 'grant' ? sized.outcome.grant : undefined;
    expect(grant?.rate?.used).to.equal(PER_MINUTE);
    expect(grant?.quota?.remaining).to.equal(10 - 2 - 2 - 6);
    expect(grant?.reservationId).to.be.a('string');
    expect(first.outcome?.$case).to.equal('grant');
    // A new request is counted as ever: past the limit.
    const third = await gate.authorize(check(2));
    expect(third.outcome?.$case === 'denial' && third.outcome.denial.refusal).to.equal(Refusal.REFUSAL_RATE_LIMITED);
  });

  it('refuses a sized price the caller cannot pay, holding nothing', async () => {
    const refused = await gate.authorize(check(12, true));
    const denial = refused.outcome?.$case === 'denial' ? refused.outcome.denial : undefined;
    expect(denial?.refusal).to.equal(Refusal.REFUSAL_INSUFFICIENT_CREDITS);
    expect(denial?.remaining).to.equal(10);
  });
});
