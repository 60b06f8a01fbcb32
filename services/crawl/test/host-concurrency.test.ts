import { expect } from 'chai';
import {
  HostConcurrency,
  type HostConcurrencySettings,
  type HostSignal,
  type Sent,
} from '../src/checking/host-concurrency.js';

/** The controller on a clock the test moves by hand. */
function controller(over: Partial<HostConcurrencySettings> = {}) {
  let now = 1_000_000;
  const control = new HostConcurrency(
    { initial: 4, ceiling: 64, maxPauseMs: 30_000, timeoutsToGiveUp: 3, downForMs: 60_000, ...over },
    () => now,
  );
  const clock = {
    advance: (ms: number) => {
      now += ms;
    },
  };
  /** Sends as many requests as the limit allows (a busy host), returns them in flight. */
  const fill = (): Sent[] => {
    const sent: Sent[] = [];
    while (control.canSend()) sent.push(control.send(100));
    return sent;
  };
  /** One round: the host is filled, and every request answers with `signal`. */
  const round = (signal: HostSignal) => {
    for (const s of fill()) control.answered(s, signal);
  };
  return { control, clock, fill, round };
}

describe('per-host concurrency (AIMD)', () => {
  it('starts small and doubles per round of fast answers (slow start), up to the ceiling', () => {
    const { control, round } = controller();
    expect(control.limit).to.equal(4);
    const limits: number[] = [];
    for (let i = 0; i < 6; i++) {
      round('fast');
      limits.push(control.limit);
    }
    expect(limits).to.deep.equal([8, 16, 32, 64, 64, 64]);
    expect(control.peak).to.equal(64);
  });

  it('does not grow on answers to requests sent while the host was far from its limit', () => {
    const { control } = controller({ initial: 8 });
    for (let i = 0; i < 50; i++) control.answered(control.send(0), 'fast');
    expect(control.limit).to.equal(8);
  });

  it('halves at once on a 429/503, a time-out or a refused connection; one decrease per window', () => {
    for (const signal of ['overloaded', 'timeout', 'failed'] as const) {
      const { control, fill } = controller({ initial: 16, timeoutsToGiveUp: 100 });
      const inFlight = fill();
      expect(inFlight).to.have.length(16);
      // The whole window answers 503 at once: it was sent under the old limit, so it halves once.
      for (const s of inFlight) control.answered(s, signal);
      expect(control.limit, signal).to.equal(8);
      // The next window's trouble halves again.
      const next = fill();
      control.answered(next[0] as Sent, signal);
      expect(control.limit, signal).to.equal(4);
    }
  });

  it('takes a quarter off on a slow answer, and never goes below one', () => {
    const { control, round } = controller({ initial: 16 });
    round('slow');
    expect(control.limit).to.equal(12);
    for (let i = 0; i < 20; i++) round('slow');
    expect(control.limit).to.equal(1);
  });

  it('after trouble, grows by one per window of fast answers (congestion avoidance)', () => {
    const { control, round } = controller({ initial: 16 });
    round('overloaded');
    expect(control.limit).to.equal(8);
    round('fast'); // 8 answers: one window
    expect(control.limit).to.equal(9);
    round('fast');
    expect(control.limit).to.equal(10);
  });

  it('ignores answers that say nothing about load', () => {
    const { control, round } = controller({ initial: 8 });
    round('neutral');
    expect(control.limit).to.equal(8);
    round('fast');
    expect(control.limit).to.equal(16); // still in slow start
  });

  it('honours a Retry-After: nothing is sent until it has passed, at most maxPauseMs', () => {
    const { control, clock, fill } = controller({ maxPauseMs: 5_000 });
    const [first, ...rest] = fill();
    control.answered(first as Sent, 'overloaded', 2_000);
    for (const s of rest) control.answered(s, 'fast');
    expect(control.canSend()).to.equal(false);
    clock.advance(1_999);
    expect(control.canSend()).to.equal(false);
    clock.advance(1);
    expect(control.canSend()).to.equal(true);
    const [next, ...others] = fill();
    control.answered(next as Sent, 'overloaded', 3_600_000);
    for (const s of others) control.answered(s, 'fast');
    clock.advance(4_999);
    expect(control.canSend()).to.equal(false);
    clock.advance(1);
    expect(control.canSend()).to.equal(true);
  });

  it('a host that starts answering 503 and recovers: down at once, back up over windows', () => {
    const { control, round, clock } = controller();
    round('fast');
    round('fast');
    expect(control.limit).to.equal(16);
    round('overloaded');
    expect(control.limit).to.equal(8);
    round('overloaded');
    expect(control.limit).to.equal(4);
    clock.advance(1_000);
    const limits: number[] = [];
    for (let i = 0; i < 10; i++) {
      round('fast');
      limits.push(control.limit);
    }
    expect(limits).to.deep.equal([5, 6, 7, 8, 9, 10, 11, 12, 13, 14]);
  });

  it('gives a host up after time-outs in a row, until downForMs has passed', () => {
    const { control, clock, fill } = controller({ initial: 3 });
    for (const s of fill()) control.answered(s, 'timeout');
    expect(control.isDown()).to.equal(true);
    expect(control.canSend()).to.equal(false);
    clock.advance(60_000);
    expect(control.isDown()).to.equal(false);
  });

  it('counts the most requests in flight at once', () => {
    const { control, fill } = controller({ initial: 6 });
    const sent = fill();
    for (const s of sent) control.answered(s, 'slow');
    expect(control.peakActive).to.equal(6);
    expect(control.active).to.equal(0);
  });
});
