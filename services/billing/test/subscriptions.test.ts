import { expect } from 'chai';
import { type HeldPlan, refundedCredits, subscriptionChange } from '../src/payments/subscriptions.js';

const DAY = 86_400_000;
const GRACE = 7 * DAY;
const start = Date.UTC(2026, 0, 10);
const end = Date.UTC(2026, 1, 10);
const next = Date.UTC(2026, 2, 10);
const sub = (over: Partial<Parameters<typeof subscriptionChange>[0]> = {}) => ({
  id: 'sub_1',
  status: 'active',
  plan: 'STARTER' as const,
  periodStart: start,
  periodEnd: end,
  cancelAtPeriodEnd: false,
  ...over,
});
const free: HeldPlan = {
  plan: 'FREE',
  cycleEnd: Date.UTC(2026, 1, 1),
  creditsPerCycle: null,
  paidThrough: null,
  cycleCredits: 40,
};
const starter: HeldPlan = {
  plan: 'STARTER',
  cycleEnd: end,
  creditsPerCycle: null,
  paidThrough: end + GRACE,
  cycleCredits: 10,
};

describe('subscription rules (pure)', () => {
  it('a first paid period starts the plan’s cycle with Stripe’s dates, held through the grace', () => {
    expect(subscriptionChange(sub(), free, GRACE, start)).to.deep.equal({
      cycle: { plan: 'STARTER', cycleAnchor: start, cycleEnd: end, cycleCredits: 3000 },
      paidThrough: end + GRACE,
      key: `cycle:sub_1:${end}`,
    });
  });

  it('the same period again changes nothing; the next period renews', () => {
    expect(subscriptionChange(sub(), starter, GRACE, start + DAY)).to.deep.equal({ paidThrough: end + GRACE });
    const renewed = subscriptionChange(sub({ periodStart: end, periodEnd: next }), starter, GRACE, end + 1);
    expect(renewed.cycle).to.deep.equal({ plan: 'STARTER', cycleAnchor: end, cycleEnd: next, cycleCredits: 3000 });
    expect(renewed.key).to.equal(`cycle:sub_1:${next}`);
  });

  it('an upgrade applies at once, adding the allowances’ difference; a downgrade waits for the next period', () => {
    const up = subscriptionChange(sub({ plan: 'GROWTH' }), starter, GRACE, start + DAY);
    expect(up.upgrade).to.deep.equal({ plan: 'GROWTH', addCycleCredits: 12_000 });
    expect(up.cycle).to.equal(undefined);
    const growth = { ...starter, plan: 'GROWTH' as const };
    expect(subscriptionChange(sub({ plan: 'STARTER' }), growth, GRACE, start + DAY)).to.deep.equal({
      paidThrough: end + GRACE,
    });
    const later = subscriptionChange(sub({ plan: 'STARTER', periodStart: end, periodEnd: next }), growth, GRACE, end);
    expect(later.cycle?.plan).to.equal('STARTER');
  });

  it('set to cancel: held to the period’s end only; ended: to the paid cycle’s end, never later than kept', () => {
    expect(subscriptionChange(sub({ cancelAtPeriodEnd: true }), starter, GRACE, start)).to.deep.equal({
      paidThrough: end,
    });
    expect(subscriptionChange(sub({ status: 'canceled' }), starter, GRACE, start)).to.deep.equal({ paidThrough: end });
    // Stripe gave up after the grace's retries: the plan ends now.
    const late = end + 10 * DAY;
    expect(subscriptionChange(sub({ status: 'unpaid' }), starter, GRACE, late)).to.deep.equal({
      paidThrough: end + GRACE,
    });
    expect(subscriptionChange(sub({ status: 'canceled' }), free, GRACE, start)).to.deep.equal({});
  });

  it('a failed renewal (past_due), an unpaid start or a price not sold here change nothing', () => {
    expect(
      subscriptionChange(sub({ status: 'past_due', periodStart: end, periodEnd: next }), starter, GRACE, end),
    ).to.deep.equal({});
    expect(subscriptionChange(sub({ status: 'incomplete' }), free, GRACE, start)).to.deep.equal({});
    expect(subscriptionChange(sub({ plan: undefined }), free, GRACE, start)).to.deep.equal({});
  });

  it('a refund takes back its share of the pack', () => {
    expect(refundedCredits(5000, 3900, 3900)).to.equal(5000);
    expect(refundedCredits(5000, 3900, 1950)).to.equal(2500);
    expect(refundedCredits(5000, 3900, 0)).to.equal(0);
    expect(refundedCredits(5000, 0, 10)).to.equal(0);
  });
});
