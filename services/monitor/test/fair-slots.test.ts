import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '@webutil/kit';
import { expect } from 'chai';
import { type DueMonitor, fairPicks, HeldSlots } from '../src/fair-slots.js';
import { Scheduler } from '../src/scheduler.js';
import { slotAfter } from '../src/slots.js';
import type { MonitorRecord } from '../src/store/store.js';
import { SqliteMonitorStore } from '../src/store/store-sqlite.js';

const log = createLogger('fair-slots-test', 'silent');
const due = (id: string, subject: string, nextRunAt: number): DueMonitor => ({ id, subject, nextRunAt });
const ids = (picks: DueMonitor[]) => picks.map((m) => m.id);

describe('fair slots: a replica’s run slots shared max-min among accounts', () => {
  it('with one account is the most overdue first, up to the room', () => {
    const list = [due('a3', 'A', 3), due('a1', 'A', 1), due('a2', 'A', 2)];
    expect(ids(fairPicks(list, new Map(), 2))).to.deep.equal(['a1', 'a2']);
    expect(ids(fairPicks(list, new Map(), 10))).to.deep.equal(['a1', 'a2', 'a3']);
    expect(fairPicks(list, new Map(), 0)).to.deep.equal([]);
  });

  it('gives a freed slot to the account holding the fewest, however overdue the flood is', () => {
    const flood = Array.from({ length: 50 }, (_, i) => due(`a${i}`, 'A', i));
    const quiet = due('b0', 'B', 1_000);
    // A holds 4 runs here, B none: the one free slot is B's, though A's monitors waited longer.
    expect(ids(fairPicks([...flood, quiet], new Map([['A', 4]]), 1))).to.deep.equal(['b0']);
    // Room for three: B's one, then A's most overdue.
    expect(ids(fairPicks([...flood, quiet], new Map([['A', 4]]), 3))).to.deep.equal(['b0', 'a0', 'a1']);
  });

  it('levels the accounts’ loads: each slot to the lowest, counting what this tick gave', () => {
    const list = [
      ...Array.from({ length: 6 }, (_, i) => due(`a${i}`, 'A', i)),
      ...Array.from({ length: 6 }, (_, i) => due(`b${i}`, 'B', 100 + i)),
      ...Array.from({ length: 6 }, (_, i) => due(`c${i}`, 'C', 200 + i)),
    ];
    const held = new Map([
      ['A', 3],
      ['B', 1],
    ]);
    const picks = fairPicks(list, held, 6);
    const count = (subject: string) => picks.filter((m) => m.subject === subject).length;
    // Loads before: A 3, B 1, C 0; six slots level them to 4, 3, 3 (the last tie to A, the most overdue).
    expect([count('A'), count('B'), count('C')]).to.deep.equal([1, 2, 3]);
    // A tie goes to the account whose next monitor waited longest.
    expect(ids(fairPicks(list, new Map(), 3))).to.deep.equal(['a0', 'b0', 'c0']);
  });

  it('counts runs in flight per account and gives each back once', () => {
    const held = new HeldSlots();
    const first = held.hold('A');
    const second = held.hold('A');
    held.hold('B');
    expect([...held.counts]).to.deep.equal([
      ['A', 2],
      ['B', 1],
    ]);
    first();
    first();
    expect(held.counts.get('A')).to.equal(1);
    second();
    expect(held.counts.has('A')).to.equal(false);
  });
});

describe('the scheduler shares its slots fairly (one replica, embedded store)', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'monitor-fair-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const monitorOf = (id: string, subject: string, now: number): MonitorRecord => ({
    id,
    subject,
    name: id,
    kind: 'down-check',
    inputJson: '{}',
    requestJson: '{}',
    intervalSeconds: 60,
    alertsJson: '{}',
    state: 'active',
    status: 'unknown',
    createdAt: now,
    updatedAt: now,
    nextRunAt: slotAfter(id, 60, now),
    failures: 0,
    successes: 0,
  });

  it('starts the quiet account’s run at the first slot that frees while a flood of overdue runs waits', async () => {
    const store = new SqliteMonitorStore(path.join(dir, 'fair.sqlite'));
    let now = 1_800_000_000_000;
    // The flood: 300 one-minute monitors of one account, all overdue by the time they are read.
    for (let i = 0; i < 300; i++) await store.insertMonitor(monitorOf(`flood_${i}`, 'account:flood', now));
    const quiet = monitorOf('quiet_0', 'account:quiet', now);
    await store.insertMonitor(quiet);
    // Runs never end until released: the replica's 4 slots stay full until the test frees one.
    const pending: { monitorId: string; startedAt: number; end: () => void }[] = [];
    const scheduler = new Scheduler(
      store,
      (_monitor, run) =>
        new Promise<void>((resolve) =>
          pending.push({ monitorId: run.monitorId, startedAt: run.startedAt, end: resolve }),
        ),
      { replica: 'r1', tickMs: 1_000, graceMs: 5_000, concurrency: 4, now: () => now },
      log,
    );
    now += 61_000;
    await scheduler.tick();
    const quietSlot = quiet.nextRunAt;
    expect(now).to.be.greaterThan(quietSlot);
    // The four free slots: the quiet account holds none and gets one; the flood the other three.
    expect(pending.map((p) => p.monitorId).filter((id) => id.startsWith('quiet'))).to.have.length(1);
    expect(pending).to.have.length(4);
    // Its next slot, a minute on: the replica is full of the flood's runs until one ends.
    now += 60_000;
    for (const p of pending.filter((p) => p.monitorId.startsWith('quiet'))) p.end();
    await new Promise((resolve) => setImmediate(resolve));
    for (const p of pending.filter((p) => p.monitorId.startsWith('flood')).slice(0, 1)) p.end();
    await new Promise((resolve) => setImmediate(resolve));
    const before = pending.length;
    await scheduler.tick();
    const started = pending.slice(before).map((p) => p.monitorId);
    // Two slots freed (the quiet run's and one flood run's): the quiet monitor has one, though ~297
    // flood monitors have waited since before its slot.
    expect(started).to.have.length(2);
    expect(started.filter((id) => id.startsWith('quiet'))).to.have.length(1);
    for (const p of pending) p.end();
    await scheduler.stop();
    await store.close();
  });

  it('deletes runs past the retention window, in batches, and keeps newer ones', async () => {
    const store = new SqliteMonitorStore(path.join(dir, 'retention.sqlite'));
    const day = 86_400_000;
    const now = 200 * day;
    const m = monitorOf('kept', 'account:a', now);
    await store.insertMonitor(m);
    // 2,500 runs: one a minute between day 99 and day 101 minus a bit (1,000 per store call).
    const first = 99 * day;
    for (let k = 0; k < 2_500; k++) {
      await store.claimRun({
        id: `kept@${first + k * 60_000}`,
        monitorId: 'kept',
        slot: first + k * 60_000,
        startedAt: first + k * 60_000,
        late: false,
        outcome: 'ok',
        reason: '',
        creditsSpent: 1,
        replica: 'r',
      });
    }
    const scheduler = new Scheduler(
      store,
      async () => undefined,
      { replica: 'r', tickMs: 1_000, graceMs: 5_000, concurrency: 4, now: () => now },
      log,
    );
    // 100 days kept: slots before day 100 go (1,440 runs of day 99).
    expect(await scheduler.deleteOldRuns(100 * day)).to.equal(1_440);
    const left = await store.listRuns('kept', { limit: 5_000 });
    expect(left).to.have.length(2_500 - 1_440);
    expect(left.every((r) => r.slot >= 100 * day)).to.equal(true);
    expect(await scheduler.deleteOldRuns(100 * day)).to.equal(0);
    await store.close();
  });
});
