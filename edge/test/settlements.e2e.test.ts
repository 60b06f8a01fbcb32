import { randomUUID } from 'node:crypto';
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
import { account, creditsHeader, eventually, expectFailure, quota } from './billing-helpers.js';

/**
 * Issue 13, item 1, and issue 29, item 1: a metered call makes one blocking billing call
 * (Authorize) before its work; a success's settlement, batched, is recorded by billing before the
 * success is answered (decision 0255). Settling is idempotent; a success billing does not record
 * (the hold is gone, or billing cannot be reached within the bound) is a 503 with its credits
 * returned; so whatever is SIGKILLed, an answered success is spent and nothing else is.
 */
describe('settlements before the answer', function () {
  this.timeout(120_000);
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

  /** Waits until the slow page was requested (the call holds its credits). */
  const requested = (tag: string) =>
    eventually(async () => expect(site.requests.some((r) => r.path.includes(tag))).to.equal(true));

  /** Past every hold's expiry (30 s + 60 s grace) at billing, once its expiry sweep has run. */
  async function pastHoldExpiry(): Promise<void> {
    stack.advanceClock(100_000);
    await new Promise((r) => setTimeout(r, 1_000)); // several expiry sweeps run
  }

  it('settles a hold once, however often its settlement is sent, and says whether it is spent', async () => {
    const { apiKey } = await account(stack, 'STARTER', '--credits', '10');
    const client = new BillingServiceClient(`127.0.0.1:${stack.ports.billing}`, grpc.credentials.createInsecure());
    const unary = <T>(call: (done: (err: grpc.ServiceError | null, res: T) => void) => void) =>
      new Promise<T>((resolve, reject) => call((err, res) => (err ? reject(err) : resolve(res))));
    const hold = async (holdMs: number) => {
      const authorized = await unary<AuthorizeResponse>((done) =>
        client.authorize(
          {
            credential: { apiKey, clientIp: '127.0.0.1' },
            operation: 'broken-links',
            credits: 2,
            challenge: false,
            callers: CallerPolicy.CALLER_POLICY_ANY,
            stateChanging: true,
            holdMs,
          },
          done,
        ),
      );
      return authorized.outcome?.$case === 'grant' ? authorized.outcome.grant : undefined;
    };
    try {
      const grant = await hold(30_000);
      expect(grant?.quota?.remaining, 'the hold took the credits').to.equal(8);
      const reservationId = grant?.reservationId ?? '';
      const spend = { reservationId, spent: [{ operation: 'broken-links', credits: 2 }], keepOpen: false };
      const first = await unary<SettleResponse>((done) => client.settle({ settlements: [spend, spend] }, done));
      expect(first).to.deep.equal({ settled: [reservationId], spent: [reservationId, reservationId], expired: [] });
      // A retry is told its call is spent (billing remembers the settled hold); a refund of it changes nothing.
      const again = await unary<SettleResponse>((done) =>
        client.settle({ settlements: [spend, { reservationId, spent: [], keepOpen: false }] }, done),
      );
      expect(again).to.deep.equal({ settled: [], spent: [reservationId], expired: [] });
      expect(await quota(stack, { apiKey })).to.include({ remaining: 8 });
      // A hold that expired (its credits returned) is no spend: billing says so.
      const lost = (await hold(1_000))?.reservationId ?? '';
      await pastHoldExpiry();
      await eventually(async () => expect(await quota(stack, { apiKey })).to.include({ remaining: 8 }));
      const late = await unary<SettleResponse>((done) =>
        client.settle({ settlements: [{ ...spend, reservationId: lost }] }, done),
      );
      expect(late).to.deep.equal({ settled: [], spent: [], expired: [lost] });
      expect(await quota(stack, { apiKey })).to.include({ remaining: 8 });
    } finally {
      client.close();
    }
  });

  it('an edge SIGKILLed right after answering a success: the success stays spent', async () => {
    const { apiKey } = await account(stack, 'STARTER', '--credits', '10');
    const call = stack.api(slowDownCheck('edge-killed'), { apiKey });
    await requested('edge-killed');
    // Billing is away when the work ends, and back within the bound: the success waits for it.
    await stack.kill('billing');
    const restarted = stack.start('billing');
    const res = await call;
    await stack.kill('edge');
    await restarted;
    expect(res.status).to.equal(200);
    expect(creditsHeader(res)).to.equal(9);
    await stack.start('edge');
    await pastHoldExpiry();
    expect(await quota(stack, { apiKey }), 'spent, not merely held').to.include({ remaining: 9 });
  });

  it('billing out of reach past the bound: the success is a 503 and costs nothing, whatever dies next', async () => {
    const { apiKey } = await account(stack, 'STARTER', '--credits', '10');
    const call = stack.api(slowDownCheck('billing-away'), { apiKey });
    await requested('billing-away');
    await stack.kill('billing');
    const res = await call;
    const body = await expectFailure(res, 503, 'service_unavailable');
    expect(body.error?.message).to.match(/billing/);
    expect(res.headers.get('retry-after')).to.match(/^\d+$/);
    await stack.kill('edge');
    await stack.start('billing');
    await stack.start('edge');
    await pastHoldExpiry();
    await eventually(async () => expect(await quota(stack, { apiKey })).to.include({ remaining: 10 }));
  });

  it('a hold billing let expire during the call: the success is a 503, its credits back', async () => {
    const { apiKey } = await account(stack, 'STARTER', '--credits', '10');
    const call = stack.api(slowDownCheck('expired'), { apiKey });
    await requested('expired');
    // Billing's clock passes the hold's expiry while the page is slow: the sweep returns its credits.
    stack.advanceClock(100_000);
    await eventually(async () => expect(await quota(stack, { apiKey })).to.include({ remaining: 10 }));
    const res = await call;
    await expectFailure(res, 503, 'service_unavailable');
    expect(creditsHeader(res)).to.equal(10);
    expect(await quota(stack, { apiKey })).to.include({ remaining: 10 });
  });

  it('an Idempotency-Key whose call was not charged is freed: the retry runs again, charged once', async () => {
    const { apiKey } = await account(stack, 'STARTER', '--credits', '10');
    const key = randomUUID();
    const brokenLinks = () =>
      stack.api('/v1/broken-links', {
        apiKey,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'Idempotency-Key': key },
        body: JSON.stringify({ url: site.url('/slow?ms=1500&idempotent') }),
      });
    const first = brokenLinks();
    await requested('idempotent');
    stack.advanceClock(200_000);
    await eventually(async () => expect(await quota(stack, { apiKey })).to.include({ remaining: 10 }));
    await expectFailure(await first, 503, 'service_unavailable');
    // Not replayed (that success was never charged), not 409 (its key was freed): run again.
    const retried = await brokenLinks();
    expect(retried.status).to.equal(200);
    expect(retried.headers.get('idempotent-replayed')).to.equal(null);
    expect(await quota(stack, { apiKey })).to.include({ remaining: 8 });
    const replayed = await brokenLinks();
    expect(replayed.headers.get('idempotent-replayed')).to.equal('true');
    expect(await quota(stack, { apiKey })).to.include({ remaining: 8 });
  });
});
