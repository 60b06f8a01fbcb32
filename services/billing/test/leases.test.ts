import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '@webutil/kit';
import { type AuthorizeRequest, CallerPolicy } from '@webutil/proto/webutil/billing/v1/billing';
import { expect } from 'chai';
import { Accounts } from '../src/accounts.js';
import { ApiKeys } from '../src/api-keys.js';
import { Challenges } from '../src/challenge.js';
import { Gate } from '../src/gate.js';
import { leaseCredits } from '../src/leases.js';
import { Ledger } from '../src/ledger.js';
import { RateLimiter } from '../src/rate-limit.js';
import { Sessions } from '../src/sessions.js';
import { SignInThrottle } from '../src/sign-in-throttle.js';
import type { BillingStore } from '../src/stores/store.js';
import { openSqliteStore } from '../src/stores/store-sqlite.js';
import { verificationIn } from './verification-in.js';

describe('credit leases: how many credits billing grants', () => {
  it('a twentieth of what the caller has left, 16 to 100 credits, and at least twice the call', () => {
    expect(leaseCredits(100_000, 1)).to.equal(100);
    expect(leaseCredits(1_000, 1)).to.equal(50);
    // Below 16 a small balance has each call held on its own.
    expect(leaseCredits(319, 1)).to.equal(0);
    expect(leaseCredits(320, 1)).to.equal(16);
    // A lease pays this call and at least as many again.
    expect(leaseCredits(1_000, 25)).to.equal(50);
    expect(leaseCredits(1_000, 26)).to.equal(0);
  });

  describe('through Authorize (embedded store, injected clock)', () => {
    const GRACE_MS = 1_000;
    let dir: string;
    let store: BillingStore;
    let now: number;
    let ledger: Ledger;
    let accounts: Accounts;
    let apiKeys: ApiKeys;
    let gate: Gate;

    beforeEach(() => {
      dir = mkdtempSync(path.join(os.tmpdir(), 'billing-leases-'));
      store = openSqliteStore(path.join(dir, 'billing.sqlite'));
      now = Date.UTC(2026, 0, 31, 10);
      const clock = () => now;
      const anonymous = { creditsPerDay: 10_000, requestsPerMinute: 1_000, rendersInFlight: 2 };
      ledger = new Ledger(store, clock, { anonymous, reservationGraceMs: GRACE_MS });
      accounts = new Accounts(store, clock);
      apiKeys = new ApiKeys(store, clock);
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
    });
    afterEach(async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });

    /** An API key of a new Starter account with `credits` a cycle. */
    async function keyWith(credits: number): Promise<string> {
      const created = await accounts.create({ email: `${credits}@example.test`, plan: 'STARTER' });
      const account = await accounts.changePlan(created, 'STARTER', { creditsPerCycle: credits });
      return (await apiKeys.mint(account, 'test')).secret;
    }

    const call = (apiKey: string | undefined, leaseHoldMs?: number): AuthorizeRequest => ({
      credential: { apiKey, clientIp: '203.0.113.9' },
      operation: 'down-check',
      credits: 1,
      challenge: false,
      callers: CallerPolicy.CALLER_POLICY_ANY,
      stateChanging: false,
      holdMs: 15_000,
      leaseHoldMs,
    });

    it('grants an API-key caller that offers to carry one a lease, held for the time asked', async () => {
      const apiKey = await keyWith(5_000);
      const { outcome } = await gate.authorize(call(apiKey, 120_000));
      expect(outcome?.$case).to.equal('grant');
      const grant = outcome?.$case === 'grant' ? outcome.grant : undefined;
      expect(grant?.lease).to.deep.equal({ credits: 100 });
      expect(grant?.quota?.remaining).to.equal(4_900);
      now += 120_000 + GRACE_MS - 1;
      expect((await ledger.expireHolds()).holds, 'the lease outlives the call’s own deadline').to.equal(0);
      now += 2;
      expect((await ledger.expireHolds()).holds).to.equal(1);
    });

    it('holds the call alone when none is offered, the balance is small, or the caller is not an API key', async () => {
      const rich = await keyWith(5_000);
      const poor = await keyWith(300);
      const answers = [
        await gate.authorize(call(rich)),
        await gate.authorize(call(poor, 120_000)),
        await gate.authorize(call(undefined, 120_000)),
      ];
      expect(
        answers.map(({ outcome }) =>
          outcome?.$case === 'grant' ? [outcome.grant.lease, outcome.grant.quota?.remaining] : outcome,
        ),
      ).to.deep.equal([
        [undefined, 4_999],
        [undefined, 299],
        [undefined, 9_999],
      ]);
    });
  });
});
