import { expect } from 'chai';
import { dueRun, slotAfter, slotAt, slotOffsetMs } from '../src/slots.js';

describe('monitor slots', () => {
  it('spreads 1,000 monitors on one interval over it, each always on the same offset', () => {
    const offsets = Array.from({ length: 1000 }, (_, i) => slotOffsetMs(`mon_${i}`, 60));
    expect(new Set(offsets).size).to.be.greaterThan(950);
    // Every ten-second band of the minute holds some (no pile-up at the start).
    for (let band = 0; band < 6; band++) {
      const inBand = offsets.filter((o) => o >= band * 10_000 && o < (band + 1) * 10_000).length;
      expect(inBand, `band ${band}`).to.be.within(100, 240);
    }
    expect(slotOffsetMs('mon_7', 60)).to.equal(slotOffsetMs('mon_7', 60));
  });

  it('places an instant in the slot that starts at or before it, the next one interval later', () => {
    const offset = slotOffsetMs('mon_a', 60);
    const base = 1_800_000_000_000 - (1_800_000_000_000 % 60_000);
    expect(slotAt('mon_a', 60, base + offset)).to.equal(base + offset);
    expect(slotAt('mon_a', 60, base + offset + 59_999)).to.equal(base + offset);
    expect(slotAt('mon_a', 60, base + offset - 1)).to.equal(base + offset - 60_000);
    expect(slotAfter('mon_a', 60, base + offset)).to.equal(base + offset + 60_000);
  });

  it('runs a due monitor once for the current slot, late when slots were missed or the grace passed', () => {
    const due = slotAt('mon_b', 60, 1_800_000_000_000);
    expect(dueRun('mon_b', 60, due, due - 1, 5_000)).to.equal(undefined);
    expect(dueRun('mon_b', 60, due, due + 200, 5_000)).to.deep.equal({ slotMs: due, late: false });
    expect(dueRun('mon_b', 60, due, due + 6_000, 5_000)).to.deep.equal({ slotMs: due, late: true });
    // Ten minutes down: one run, for the slot now, not ten.
    expect(dueRun('mon_b', 60, due, due + 600_000 + 100, 5_000)).to.deep.equal({ slotMs: due + 600_000, late: true });
  });

  it('a time scale of 60 makes a one-minute interval last 1 s, its slots spread over it', () => {
    const offsets = Array.from({ length: 1000 }, (_, i) => slotOffsetMs(`mon_${i}`, 60, 60));
    expect(Math.max(...offsets)).to.be.below(1_000);
    expect(new Set(offsets).size).to.be.above(500);
    const at = slotAt('mon_c', 60, 1_800_000_000_000, 60);
    expect(slotAfter('mon_c', 60, at, 60)).to.equal(at + 1_000);
    expect(dueRun('mon_c', 60, at, at + 3_050, 200, 60)).to.deep.equal({ slotMs: at + 3_000, late: true });
  });
});
