import * as grpc from '@grpc/grpc-js';
import {
  type AuthorizeResponse,
  BillingServiceClient,
  CallerPolicy,
  type SettleResponse,
} from '@webutil/proto/webutil/billing/v1/billing';
import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { account, creditsHeader, eventually, quota } from './billing-helpers.js';

/**
 * Issue 13, item 1: a metered call makes one blocking billing call (Authorize); its settlement
 * follows the response, batched, and keeps the guarantees: settling is idempotent, a settlement
 * that cannot be sent yet is retried until billing is back, and one that never arrives (the edge
 * died) ends as the hold's expiry decides, so no credit is lost and none spent twice.
 */
describe('settlements after the response', function () {
  this.timeout(90_000);
  let site: FixtureSite;
  let stack: TestStack;
  const slowDownCheck = (tag: string) => `/v1/down-check?url=${encodeURIComponent(site.url(`/slow?ms=1500&${tag}`))}`;

  before(async () => {
    site = await startFixtureSite();
    stack = await startTestStack({
      allowTargets: '127.0.0.0/8',
      clock: true,
      env: { RESERVATION_SWEEP_MS: '200' },
    });
  });
  after(async () => {
    await stack?.stop();
    await site?.close();
  });

  /** Waits until the slow page was requested (the call holds its credits), then kills billing. */
  async function killBillingDuring(call: Promise<Response>, tag: string): Promise<Response> {
    await eventually(async () => expect(site.requests.some((r) => r.path.includes(tag))).to.equal(true));
    await stack.kill('billing');
    return call;
  }

  it('settles a hold once, however often its settlement is sent', async () => {
    const { apiKey } = await account(stack, 'STARTER', '--credits', '10');
    const client = new BillingServiceClient(`127.0.0.1:${stack.ports.billing}`, grpc.credentials.createInsecure());
    const unary = <T>(call: (done: (err: grpc.ServiceError | null, res: T) => void) => void) =>
      new Promise<T>((resolve, reject) => call((err, res) => (err ? reject(err) : resolve(res))));
    try {
      const authorized = await unary<AuthorizeResponse>((done) =>
        client.authorize(
          {
            credential: { apiKey, clientIp: '127.0.0.1' },
            operation: 'broken-links',
            credits: 2,
            challenge: false,
            callers: CallerPolicy.CALLER_POLICY_ANY,
            stateChanging: true,
            holdMs: 30_000,
          },
          done,
        ),
      );
      const grant = authorized.outcome?.$case === 'grant' ? authorized.outcome.grant : undefined;
      expect(grant?.quota?.remaining, 'the hold took the credits').to.equal(8);
      const reservationId = grant?.reservationId ?? '';
      const spend = { reservationId, spent: [{ operation: 'broken-links', credits: 2 }] };
      const first = await unary<SettleResponse>((done) => client.settle({ settlements: [spend, spend] }, done));
      expect(first.settled).to.deep.equal([reservationId]);
      const again = await unary<SettleResponse>((done) =>
        client.settle(
          {
            settlements: [spend, { reservationId, spent: [] }],
          },
          done,
        ),
      );
      expect(again.settled).to.deep.equal([]);
      expect(await quota(stack, { apiKey })).to.include({ remaining: 8 });
    } finally {
      client.close();
    }
  });

  it('retries a settlement billing could not take until billing is back, and spends it once', async () => {
    const { apiKey } = await account(stack, 'STARTER', '--credits', '10');
    const logged = stack.logs.length;
    const settled = () =>
      stack.logs.slice(logged).filter((l) => l.startsWith('[billing]') && l.includes('"rpc":"Settle","ms"')).length;
    const res = await killBillingDuring(stack.api(slowDownCheck('retried'), { apiKey }), 'retried');
    expect(res.status).to.equal(200);
    expect(creditsHeader(res), 'known from the hold, without a second billing call').to.equal(9);
    await stack.start('billing');
    // The restarted billing took the retried batch (its log says so; the balance alone cannot tell a
    // spent credit from a held one).
    await eventually(async () => expect(settled()).to.be.greaterThan(0));
    expect(await quota(stack, { apiKey })).to.include({ remaining: 9 });
    // Spent, not merely held: past the hold's expiry (30 s + 60 s grace) the credit stays spent.
    stack.advanceClock(100_000);
    await new Promise((r) => setTimeout(r, 1_000)); // several expiry sweeps run
    expect(await quota(stack, { apiKey })).to.include({ remaining: 9 });
  });

  it('loses no credit when the edge dies with settlements unsent: the holds expire and return them', async () => {
    const { apiKey } = await account(stack, 'STARTER', '--credits', '10');
    const res = await killBillingDuring(stack.api(slowDownCheck('lost'), { apiKey }), 'lost');
    expect(res.status).to.equal(200);
    await stack.kill('edge');
    await stack.start('billing');
    await stack.start('edge');
    expect(await quota(stack, { apiKey }), 'still held').to.include({ remaining: 9 });
    stack.advanceClock(100_000);
    await eventually(async () => expect(await quota(stack, { apiKey })).to.include({ remaining: 10 }));
  });
});
