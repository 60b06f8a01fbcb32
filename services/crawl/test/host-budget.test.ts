import { expect } from 'chai';
import type { HostSignal } from '../src/checking/host-concurrency.js';
import {
  type BudgetAnswer,
  type BudgetRound,
  budgetRound,
  crawlDelayTurn,
  type HostBudgetRecord,
} from '../src/site-audit/distributed/host-budget.js';

const settings = { initial: 2, ceiling: 6, maxPauseMs: 30_000, timeoutsToGiveUp: 3, downForMs: 60_000 };
const permitMs = 5_000;

/** Replicas taking rounds on one record, as the key-value store would hold it. */
function sharedHost() {
  let record: HostBudgetRecord | undefined;
  let n = 0;
  const round = (replica: string, wanted: number, now: number, answers: BudgetAnswer[] = []): BudgetRound => {
    const r = budgetRound({ record, settings, answers, wanted, permitId: () => `${replica}${++n}`, permitMs, now });
    record = r.record;
    return r;
  };
  const answer = (grant: BudgetRound['granted'][number], signal: HostSignal, retryAfterMs?: number) => ({
    ...grant,
    signal,
    retryAfterMs,
  });
  return { round, answer, record: () => record as HostBudgetRecord };
}

/** The round's n-th permit, which the test expects it to have granted. */
function granted<G>(round: { granted: G[] }, n: number): G {
  const permit = round.granted[n];
  if (permit === undefined) throw new Error(`the round granted ${round.granted.length} permits, not ${n + 1}`);
  return permit;
}

describe('host budget rounds (the record replicas share)', () => {
  it('grants no more permits than the limit to all replicas together, and gives them back', () => {
    const host = sharedHost();
    const a = host.round('a', 5, 0);
    const b = host.round('b', 5, 1);
    expect(a.granted).to.have.length(2);
    expect(b.granted).to.have.length(0);
    expect(b.retryAt).to.equal(permitMs); // a's permits expire then at the latest
    const back = host.round('a', 0, 2, [host.answer(granted(a, 0), 'neutral')]);
    expect(back.changed).to.equal(true);
    expect(host.round('b', 5, 3).granted).to.have.length(1);
    expect(Object.keys(host.record().permits)).to.have.length(2);
  });

  it("takes back a dead replica's permits when they expire", () => {
    const host = sharedHost();
    expect(host.round('a', 2, 0).granted).to.have.length(2);
    expect(host.round('b', 2, permitMs - 1).granted).to.have.length(0);
    const later = host.round('b', 2, permitMs);
    expect(later.granted.map((g) => g.permit)).to.deep.equal(['b3', 'b4']);
    expect(Object.keys(host.record().permits)).to.deep.equal(['b3', 'b4']);
  });

  it('grows the limit on fast answers from any replica, under load', () => {
    const host = sharedHost();
    let now = 0;
    for (const replica of ['a', 'b']) {
      const got = host.round(replica, 10, ++now);
      host.round(
        replica,
        0,
        ++now,
        got.granted.map((g) => host.answer(g, 'fast')),
      );
    }
    expect(host.record().limit).to.equal(settings.ceiling);
    expect(host.round('a', 10, ++now).granted).to.have.length(settings.ceiling);
  });

  it('halves the limit on a 503 and holds every replica back for its Retry-After', () => {
    const host = sharedHost();
    const a = host.round('a', 2, 0);
    const hit = host.round('a', 0, 10, [host.answer(granted(a, 0), 'overloaded', 2_000)]);
    expect(hit.record.limit).to.equal(1);
    expect(hit.record.pausedUntil).to.equal(2_010);
    host.round('a', 0, 11, [host.answer(granted(a, 1), 'fast')]);
    const held = host.round('b', 1, 1_000);
    expect(held.granted).to.have.length(0);
    expect(held.retryAt).to.equal(2_010);
    expect(host.round('b', 1, 2_010).granted).to.have.length(1);
  });

  it('marks the host down after time-outs in a row, for every replica', () => {
    const host = sharedHost();
    let now = 0;
    for (let i = 0; i < settings.timeoutsToGiveUp; i++) {
      const got = host.round('a', 1, ++now);
      host.round(
        'a',
        0,
        ++now,
        got.granted.map((g) => host.answer(g, 'timeout')),
      );
    }
    expect(host.round('b', 1, ++now))
      .to.include({ down: true })
      .and.have.property('granted').that.is.empty;
  });

  it('writes nothing when nothing happened', () => {
    const host = sharedHost();
    host.round('a', 2, 0);
    expect(host.round('b', 1, 1).changed).to.equal(false);
  });

  it("takes Crawl-delay turns one after another, from the record's next time", () => {
    expect(crawlDelayTurn(undefined, 500, 1_000)).to.deep.equal({ at: 1_000, nextAt: 1_500 });
    expect(crawlDelayTurn(1_500, 500, 1_100)).to.deep.equal({ at: 1_500, nextAt: 2_000 });
    expect(crawlDelayTurn(1_500, 500, 3_000)).to.deep.equal({ at: 3_000, nextAt: 3_500 });
  });
});
