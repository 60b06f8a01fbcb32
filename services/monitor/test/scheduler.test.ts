import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '@webutil/kit';
import { expect } from 'chai';
import { Scheduler } from '../src/scheduler.js';
import { slotAfter } from '../src/slots.js';
import type { MonitorRecord } from '../src/store/store.js';
import { SqliteMonitorStore } from '../src/store/store-sqlite.js';

const log = createLogger('scheduler-test', 'silent');

/** A one-minute monitor waiting for its first slot after `now` (at this time scale). */
const monitorAt = (id: string, now: number, timeScale = 1): MonitorRecord => ({
  id,
  subject: 'account:a',
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
  nextRunAt: slotAfter(id, 60, now, timeScale),
  failures: 0,
  successes: 0,
});

describe('the scheduler, two replicas on one store file', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'monitor-scheduler-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('runs each slot of 200 monitors once, whichever replica claims it; an outage gives one late run', async () => {
    const file = path.join(dir, 'monitors.sqlite');
    const stores = [new SqliteMonitorStore(file), new SqliteMonitorStore(file)];
    let now = 1_800_000_000_000;
    const ids = Array.from({ length: 200 }, (_, i) => `mon_${i}`);
    for (const id of ids) await stores[0]?.insertMonitor(monitorAt(id, now));
    const runs: { monitorId: string; slot: number; late: boolean; replica: string }[] = [];
    const schedulers = stores.map(
      (store, i) =>
        new Scheduler(
          store,
          async (_monitor, run) => {
            runs.push({ monitorId: run.monitorId, slot: run.slot, late: run.late, replica: run.replica });
          },
          { replica: `r${i}`, tickMs: 1_000, graceMs: 5_000, concurrency: 500, now: () => now },
          log,
        ),
    );
    // Two minutes in 1 s steps, both replicas ticking at every step, each first in turn.
    for (let step = 0; step < 120; step++) {
      now += 1_000;
      const order = step % 2 === 0 ? schedulers : [...schedulers].reverse();
      await Promise.all(order.map((s) => s.tick()));
    }
    // Ten minutes with no scheduler at all, then one tick.
    now += 600_000;
    await Promise.all(schedulers.map((s) => s.tick()));
    for (const id of ids) {
      const mine = runs.filter((r) => r.monitorId === id);
      const slots = mine.map((r) => r.slot);
      expect(new Set(slots).size, `${id}: one run per slot`).to.equal(slots.length);
      expect(mine.filter((r) => !r.late).length, `${id}: on time in two minutes`).to.be.within(1, 2);
      expect(mine.filter((r) => r.late).length, `${id}: one catch-up run`).to.equal(1);
    }
    expect(new Set(runs.map((r) => r.replica)).size).to.equal(2);
    for (const store of stores) await store.close();
  });

  it('at a time scale of 60 runs one-minute monitors each second; a sweep closes dead claims', async () => {
    const store = new SqliteMonitorStore(path.join(dir, 'scaled.sqlite'));
    let now = 1_800_000_000_000;
    for (const id of ['mon_a', 'mon_b']) await store.insertMonitor(monitorAt(id, now, 60));
    const slots: number[] = [];
    // A replica that claims and never finishes: killed mid-run.
    const dying = new Scheduler(
      store,
      async (_monitor, run) => {
        slots.push(run.slot);
      },
      { replica: 'dead', tickMs: 100, graceMs: 200, concurrency: 10, timeScale: 60, staleRunMs: 5_000, now: () => now },
      log,
    );
    for (let step = 0; step < 30; step++) {
      now += 100;
      await dying.tick();
    }
    // Three seconds: three one-second slots for each of two monitors.
    expect(slots).to.have.length(6);
    const runs = await store.listRuns('mon_a', { limit: 10 });
    expect(runs.every((r, i) => i === 0 || (runs[i - 1] as { slot: number }).slot - r.slot === 1_000)).to.equal(true);
    expect(runs.every((r) => r.outcome === 'running')).to.equal(true);

    now += 5_100;
    const survivor = new Scheduler(
      store,
      async () => undefined,
      {
        replica: 'alive',
        tickMs: 100,
        graceMs: 200,
        concurrency: 10,
        timeScale: 60,
        staleRunMs: 5_000,
        now: () => now,
      },
      log,
    );
    expect(await survivor.sweep(5_000)).to.equal(6);
    const swept = await store.listRuns('mon_b', { limit: 10 });
    expect(swept.map((r) => r.outcome)).to.deep.equal(['interrupted', 'interrupted', 'interrupted']);
    await store.close();
  });
});
