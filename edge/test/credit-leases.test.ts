import type { SpentCall } from '@webutil/proto/webutil/billing/v1/billing';
import { expect } from 'chai';
import * as rules from '../src/metering/lease-rules.js';

const TTL_MS = 60_000;
const T0 = Date.UTC(2026, 0, 1);

/** The lease rules of one caller, driven event by event as the meter drives them, with a clock of its own. */
class Caller {
  state = rules.newCaller(T0);
  now = T0;
  settled: rules.LeaseSettlement[] = [];

  private step(step: rules.Step): rules.Step {
    this.state = step.state;
    this.settled.push(...step.settle);
    return step;
  }

  /** Paid calls that went to billing: whether each offered a lease. */
  offers(calls: number): boolean[] {
    return Array.from({ length: calls }, () => {
      const { state, offer } = rules.toBilling(this.state, this.now, TTL_MS);
      this.state = state;
      return offer;
    });
  }

  /** Billing granted lease `reservationId` of `credits` on a call of `callCredits`, its first. */
  granted(reservationId: string, credits: number, callCredits: number): void {
    this.step(rules.answered(this.state, { granted: { reservationId, credits, callCredits } }, this.now, TTL_MS));
  }

  take(credits: number): string | undefined {
    return (this.step(rules.take(this.state, credits, this.now)) as ReturnType<typeof rules.take>).paidBy;
  }

  finish(reservationId: string | undefined, call: SpentCall, spent: boolean): void {
    this.step(rules.finish(this.state, reservationId ?? 'none', call, spent));
  }

  end(): void {
    this.step(rules.end(this.state));
  }

  get unused(): number {
    return rules.unused(this.state);
  }
}

const check = { operation: 'down-check', credits: 1 };
const scan = { operation: 'meta-scan', credits: 2 };

describe('credit lease rules (a busy caller’s calls paid from one hold; pure, no clock or I/O)', () => {
  let caller: Caller;
  beforeEach(() => {
    caller = new Caller();
  });

  it('offers a lease once a caller is busy, one offer at a time; refused, the next call offers again', () => {
    expect(caller.offers(10)).to.deep.equal([false, false, false, false, false, false, false, false, true, false]);
    caller.state = rules.answered(caller.state, { declined: false }, caller.now, TTL_MS).state;
    expect(caller.offers(1), 'billing refused the call or did not answer').to.deep.equal([true]);
  });

  it('does not offer again for a lease lifetime once billing held a call on its own instead', () => {
    caller.offers(9);
    caller.state = rules.answered(caller.state, { declined: true }, caller.now, TTL_MS).state;
    caller.now += TTL_MS - 1;
    expect(caller.offers(2)).to.deep.equal([false, false]);
    caller.now += 1;
    expect(caller.offers(9).at(-1), 'busy again in the next lease lifetime').to.equal(true);
  });

  it('counts a caller busy only within one lease lifetime', () => {
    caller.offers(8);
    caller.now += TTL_MS;
    expect(caller.offers(8)).to.not.include(true);
  });

  it('pays calls from the lease, gives failed calls’ credits back to it, and settles what was spent', () => {
    caller.granted('r1', 20, 1);
    expect(caller.unused).to.equal(19);
    const second = caller.take(2);
    const third = caller.take(1);
    expect([second, third]).to.deep.equal(['r1', 'r1']);
    expect(caller.unused).to.equal(16);
    caller.finish('r1', check, true);
    caller.finish(second, scan, false);
    expect(caller.unused, 'a failure’s credits are the lease’s again').to.equal(18);
    caller.end();
    expect(caller.take(1), 'an ended lease pays nothing more').to.equal(undefined);
    expect(caller.settled, 'not while a call is in flight').to.deep.equal([]);
    expect(caller.unused, 'still held at billing, still the caller’s').to.equal(18);
    caller.finish(third, check, true);
    expect(caller.settled).to.deep.equal([
      { reservationId: 'r1', spent: [check, check], expiresAt: T0 + TTL_MS + 60_000 + 60_000, returned: 18 },
    ]);
    expect(caller.unused).to.equal(0);
  });

  it('refuses a call the lease cannot pay whole, and a call finished twice finishes once', () => {
    caller.granted('r1', 3, 2);
    expect(caller.take(2)).to.equal(undefined);
    caller.finish('r1', { operation: 'down-check', credits: 2 }, true);
    caller.finish('r1', { operation: 'down-check', credits: 2 }, false);
    caller.finish('r1', { operation: 'down-check', credits: 2 }, false);
    expect(caller.unused).to.equal(1);
    caller.end();
    caller.finish('r1', { operation: 'down-check', credits: 2 }, false);
    expect(caller.settled.map(({ spent, returned }) => ({ spent, returned }))).to.deep.equal([
      { spent: [{ operation: 'down-check', credits: 2 }], returned: 1 },
    ]);
  });

  it('a newer lease replaces the open one, which settles on its own; a fully spent one returns nothing', () => {
    caller.granted('r1', 1, 1);
    caller.finish('r1', check, true);
    caller.granted('r2', 16, 1);
    caller.finish('r2', check, true);
    expect(
      caller.settled.map(({ reservationId, spent, returned }) => ({ reservationId, spent, returned })),
    ).to.deep.equal([{ reservationId: 'r1', spent: [check], returned: 0 }]);
    expect(caller.take(1)).to.equal('r2');
    expect(caller.unused).to.equal(14);
  });

  it('ends a lease when its time is up: on the next call, or at the periodic check', () => {
    caller.granted('r1', 16, 1);
    caller.finish('r1', check, true);
    caller.now += TTL_MS;
    expect(caller.take(1)).to.equal(undefined);
    expect(caller.settled.map((s) => s.reservationId)).to.deep.equal(['r1']);

    caller.granted('r2', 16, 1);
    caller.finish('r2', check, true);
    caller.now += TTL_MS;
    const swept = rules.sweep(caller.state, caller.now, TTL_MS);
    expect(swept.settle.map((s) => s.reservationId)).to.deep.equal(['r2']);
    expect(swept.forget, 'a caller with nothing open and nothing counted lately is forgotten').to.equal(true);
  });

  it('counts the unused credits of an ended lease still waiting for a call, until it settles', () => {
    caller.granted('r1', 20, 1);
    caller.granted('r2', 16, 1);
    caller.finish('r2', check, true);
    expect(caller.unused, '19 held by the ended lease, 15 by the open one').to.equal(34);
    caller.finish('r1', check, true);
    expect(caller.settled.map(({ reservationId, returned }) => ({ reservationId, returned }))).to.deep.equal([
      { reservationId: 'r1', returned: 19 },
    ]);
    expect(caller.unused).to.equal(15);
  });

  it('spends each success from its lease before it is answered (a partial settlement), open or ended', () => {
    const named = (callId: string) => ({ ...check, callId });
    caller.granted('r1', 20, 1);
    const expiresAt = T0 + TTL_MS + 60_000 + 60_000;
    expect(rules.spending(caller.state, 'r1', named('c1'))).to.deep.equal({
      reservationId: 'r1',
      spent: [named('c1')],
      expiresAt,
      returned: 0,
    });
    caller.finish('r1', named('c1'), true);
    caller.take(1);
    caller.end();
    expect(
      rules.spending(caller.state, 'r1', named('c2'))?.spent,
      'an ended lease with a call in flight',
    ).to.deep.equal([named('c2')]);
    caller.finish('r1', named('c2'), true);
    // The final settlement names every success: billing spends only those not spent yet.
    expect(caller.settled).to.deep.equal([
      { reservationId: 'r1', spent: [named('c1'), named('c2')], expiresAt, returned: 18 },
    ]);
    expect(rules.spending(caller.state, 'r1', named('c3')), 'a settled lease').to.equal(undefined);
  });

  it('a lease billing says is gone pays nothing more, counts nothing, and is never settled', () => {
    caller.granted('r1', 20, 1);
    caller.granted('r2', 16, 1);
    expect(caller.unused).to.equal(34);
    const step = rules.lost(caller.state, 'r1');
    expect(step.settle).to.deep.equal([]);
    caller.state = step.state;
    expect(caller.unused, 'only the open lease').to.equal(15);
    caller.finish('r1', check, true);
    expect(caller.settled).to.deep.equal([]);
    caller.state = rules.lost(caller.state, 'r2').state;
    expect(caller.take(1)).to.equal(undefined);
    expect(caller.unused).to.equal(0);
    caller.finish('r2', check, true);
    caller.end();
    expect(caller.settled).to.deep.equal([]);
  });

  it('returns the state it was given when nothing changes, and never changes a state it was given', () => {
    caller.granted('r1', 3, 2);
    const before = caller.state;
    const frozen = JSON.stringify(before);
    expect(rules.take(before, 2, caller.now).state).to.equal(before);
    rules.take(before, 1, caller.now);
    rules.finish(before, 'r1', check, true);
    rules.end(before);
    expect(JSON.stringify(before)).to.equal(frozen);
  });
});
