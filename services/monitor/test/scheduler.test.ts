import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '@webutil/kit';
import { expect } from 'chai';
import { Scheduler } from '../src/scheduler.js';
import { slotAt } from '../src/slots.js';
import type { MonitorRecord } from '../src/store/store.js';
import { SqliteMonitorStore } from '../src/store/store-sqlite.js';

const log = createLogger('scheduler-test', 'silent');

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
    for (const id of ids) {
      const monitor: MonitorRecord = {
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
        nextRunAt: slotAt(id, 60, now) + 60_000,
        failures: 0,
        successes: 0,
      };
      await stores[0]?.insertMonitor(monitor);
    }
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
});
