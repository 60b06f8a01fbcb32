import { createLogger } from '@webutil/kit';
import { BillingServiceService } from '@webutil/proto/webutil/billing/v1/billing';
import { expect } from 'chai';
import { connect } from '../src/grpc-clients.js';
import { CallerViews } from '../src/metering/caller-views.js';

describe('the edge’s view of a caller (counting against its rate)', () => {
  // Reports go nowhere here (a port nothing listens on): they are best effort and not what is tested.
  const billing = connect(BillingServiceService, '127.0.0.1:1');
  const log = createLogger('test', 'silent');
  let views: CallerViews;
  const quota = { callerKind: 'apikey', plan: 'STARTER', limit: 3000, remaining: 3000 };
  const minute = () => String(Math.floor(Date.now() / 60_000));
  const window = (used: number) => ({ key: 'account:a', perMinute: 5, used, minute: minute(), rendersInFlight: 2 });

  beforeEach(() => {
    views = new CallerViews(60_000, billing, log);
  });
  afterEach(() => views.close());
  after(() => billing.close());

  it('answers reads until the rate is used up, then refuses them with the wait to the window’s end', () => {
    views.remember('key:k', quota, window(3));
    expect(views.check('key:k', true)).to.deep.include({ quota });
    expect(views.check('key:k', true)).to.deep.include({ quota });
    const refused = views.check('key:k', true);
    expect(refused?.retryAfterSeconds).to.be.within(1, 60);
    // A metered call is not answered here, but refused here once the caller is past its rate.
    expect(views.check('key:k', false)?.retryAfterSeconds).to.be.within(1, 60);
  });

  it('counts requests still on their way to billing, so reads meanwhile cannot pass the rate', () => {
    views.remember('key:k', quota, window(1));
    const answered = views.asks('key:k'); // counted by billing when it gets there
    const statuses = Array.from({ length: 5 }, () => (views.check('key:k', true)?.retryAfterSeconds ? 429 : 200));
    expect(statuses).to.deep.equal([200, 200, 200, 429, 429]);
    answered();
  });

  it('keeps the larger count when an earlier request’s answer arrives after a later one’s', () => {
    views.remember('key:k', quota, window(4));
    views.remember('key:k', quota, window(2));
    expect(views.check('key:k', true)).to.deep.include({ quota });
    expect(views.check('key:k', true)?.retryAfterSeconds).to.be.within(1, 60);
  });

  it('leaves a caller it has no fresh view of, and a new window, to billing', () => {
    expect(views.check('key:unknown', true)).to.equal(undefined);
    views.remember('key:old', quota, { ...window(1), minute: String(Number(minute()) - 1) });
    expect(views.check('key:old', true)).to.equal(undefined);
  });

  it('tells a request to billing what this edge gave back meanwhile, which billing’s answer may lack', () => {
    const sentBefore = views.asks('key:k');
    views.refund('key:k', 3);
    const sentAfter = views.asks('key:k');
    views.refund('key:k', 2);
    expect(sentBefore()).to.equal(5);
    expect(sentAfter()).to.equal(2);
    expect(views.asks('key:k')()).to.equal(0);
  });

  it('keeps what it gave back to a caller it has no view of while a read of its credits is on its way', async () => {
    // Views dropped, and reports sent, every 20 ms: several of those turns pass during the read.
    const quick = new CallerViews(20, billing, log);
    try {
      const read = quick.returnedSince('key:k'); // a GetQuota, counting nothing, on its way
      quick.refund('key:k', 1);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(read()).to.equal(1);
      // Once the read is answered, nothing keeps the caller's count.
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(quick.returnedSince('key:k')()).to.equal(0);
    } finally {
      quick.close();
    }
  });
});
