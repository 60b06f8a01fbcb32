import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type MongoUnderTest, startMongo } from '@webutil/scripts/mongo-under-test';
import { expect } from 'chai';
import type { MonitorRecord, MonitorStore, RollupSample, RunRecord } from '../src/store/store.js';
import { MongoMonitorStore } from '../src/store/store-mongo.js';
import { SqliteMonitorStore } from '../src/store/store-sqlite.js';

interface Adapter {
  name: string;
  open(): Promise<MonitorStore>;
  cleanup(): Promise<void>;
}

function sqlite(): Adapter {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'monitor-store-'));
  return {
    name: 'SQLite (embedded)',
    open: async () => new SqliteMonitorStore(path.join(dir, `${randomUUID()}.sqlite`)),
    cleanup: async () => rmSync(dir, { recursive: true, force: true }),
  };
}

function mongo(): Adapter {
  let server: MongoUnderTest | undefined;
  return {
    name: `mongoose on ${process.env.MONGO_URL ? 'MONGO_URL' : 'jongodb'}`,
    open: async () => {
      server ??= await startMongo();
      return MongoMonitorStore.connect(server.url, `monitor_${randomUUID().slice(0, 8)}`);
    },
    cleanup: async () => server?.stop(),
  };
}

const monitor = (over: Partial<MonitorRecord> = {}): MonitorRecord => ({
  id: `mon_${randomUUID()}`,
  subject: 'account:a1',
  name: 'home page',
  kind: 'down-check',
  inputJson: '{"url":"https://a.test/"}',
  requestJson: '{"url":"https://a.test/"}',
  intervalSeconds: 60,
  alertsJson: '{}',
  state: 'active',
  status: 'unknown',
  createdAt: 1_000,
  updatedAt: 1_000,
  nextRunAt: 60_000,
  failures: 0,
  successes: 0,
  ...over,
});

const run = (monitorId: string, slot: number, over: Partial<RunRecord> = {}): RunRecord => ({
  id: `${monitorId}@${slot}`,
  monitorId,
  slot,
  startedAt: slot + 10,
  late: false,
  outcome: 'running',
  reason: '',
  creditsSpent: 0,
  replica: 'r1',
  ...over,
});

/** One conformance suite; both store adapters must pass it. */
for (const adapter of [sqlite(), mongo()]) {
  describe(`monitor store conformance: ${adapter.name}`, function () {
    this.timeout(30_000);
    let store: MonitorStore;
    before(async () => {
      store = await adapter.open();
    });
    after(async () => {
      await store.close();
      await adapter.cleanup();
    });

    it("keeps each account's monitors to itself: another account's id reads, changes and deletes nothing", async () => {
      const mine = monitor({ createdAt: 1 });
      const newer = monitor({ createdAt: 2 });
      await store.insertMonitor(mine);
      await store.insertMonitor(newer);
      await store.insertMonitor(monitor({ subject: 'account:other' }));
      expect(await store.countMonitors('account:a1')).to.equal(2);
      expect((await store.listMonitors('account:a1')).map((m) => m.id)).to.deep.equal([newer.id, mine.id]);
      expect(await store.getMonitor('account:other', mine.id)).to.equal(undefined);
      expect(await store.updateMonitor('account:other', mine.id, { name: 'stolen' })).to.equal(false);
      expect(await store.deleteMonitor('account:other', mine.id)).to.equal(false);
      expect(await store.updateMonitor('account:a1', mine.id, { name: 'renamed', pausedReason: undefined })).to.equal(
        true,
      );
      const read = await store.getMonitor('account:a1', mine.id);
      expect(read).to.deep.equal({ ...mine, name: 'renamed' });
    });

    it('claims a slot once: a second claim of (monitor, slot) fails, the next slot is free', async () => {
      const m = monitor();
      await store.insertMonitor(m);
      expect(await store.claimRun(run(m.id, 60_000))).to.equal(true);
      expect(await store.claimRun(run(m.id, 60_000, { replica: 'r2' }))).to.equal(false);
      expect(await store.claimRun(run(m.id, 120_000))).to.equal(true);
      const runs = await store.listRuns(m.id, { limit: 10 });
      expect(runs.map((r) => [r.slot, r.replica])).to.deep.equal([
        [120_000, 'r1'],
        [60_000, 'r1'],
      ]);
    });

    it('hands out due monitors, most overdue first, and advances each from the slot it waited for only', async () => {
      const a = monitor({ subject: 'account:due', nextRunAt: 5_000 });
      const b = monitor({ subject: 'account:due', nextRunAt: 3_000 });
      const later = monitor({ subject: 'account:due', nextRunAt: 9_000_000 });
      const paused = monitor({ subject: 'account:due', nextRunAt: 1_000, state: 'paused' });
      for (const m of [a, b, later, paused]) await store.insertMonitor(m);
      const due = (await store.dueMonitors(6_000, 100)).filter((m) => m.subject === 'account:due');
      expect(due.map((m) => m.id)).to.deep.equal([b.id, a.id]);
      expect(await store.advance(a.id, 5_000, 65_000)).to.equal(true);
      expect(await store.advance(a.id, 5_000, 65_000)).to.equal(false);
      expect((await store.getMonitor('account:due', a.id))?.nextRunAt).to.equal(65_000);
      expect(await store.pauseAll('account:due', 'out of credits', 7_000)).to.have.members([a.id, b.id, later.id]);
      expect((await store.dueMonitors(10_000_000, 100)).filter((m) => m.subject === 'account:due')).to.deep.equal([]);
      // Paused already: a later call moves nothing, so it sends no second notice.
      expect(await store.pauseAll('account:due', 'out of credits', 8_000)).to.deep.equal([]);
    });

    it('pauses each monitor for one of two racing calls only (one notice per pause)', async () => {
      const ids = [];
      for (let i = 0; i < 6; i++) {
        const m = monitor({ subject: 'account:race', nextRunAt: 5_000 });
        await store.insertMonitor(m);
        ids.push(m.id);
      }
      const [one, two] = await Promise.all([
        store.pauseAll('account:race', 'out of credits', 7_000),
        store.pauseAll('account:race', 'out of credits', 7_000),
      ]);
      expect([...(one ?? []), ...(two ?? [])]).to.have.members(ids);
    });

    it('leaves out the due monitors of the accounts it is told to (the fair share reads past a flood)', async () => {
      const flood = [1, 2, 3].map((k) => monitor({ subject: 'account:flood', nextRunAt: 100 + k }));
      const other = monitor({ subject: 'account:quiet', nextRunAt: 500 });
      const third = monitor({ subject: 'account:third', nextRunAt: 400 });
      for (const m of [...flood, other, third]) await store.insertMonitor(m);
      const mine = (list: MonitorRecord[]) =>
        list.filter((m) => ['account:flood', 'account:quiet', 'account:third'].includes(m.subject)).map((m) => m.id);
      expect(mine(await store.dueMonitors(600, 100))).to.deep.equal([...flood.map((m) => m.id), third.id, other.id]);
      expect(mine(await store.dueMonitors(600, 100, ['account:flood']))).to.deep.equal([third.id, other.id]);
      expect(mine(await store.dueMonitors(600, 100, ['account:flood', 'account:third']))).to.deep.equal([other.id]);
      await store.pauseAll('account:flood', 'test', 700);
      await store.pauseAll('account:quiet', 'test', 700);
      await store.pauseAll('account:third', 'test', 700);
    });

    it('finishes runs, pages them by time, finds the previous finished one and interrupts stale ones', async () => {
      const m = monitor();
      await store.insertMonitor(m);
      for (const slot of [60_000, 120_000, 180_000, 240_000]) await store.claimRun(run(m.id, slot));
      await store.finishRun(`${m.id}@60000`, {
        finishedAt: 60_500,
        outcome: 'ok',
        verdict: 'up',
        responseTimeMs: 42,
        reason: 'HTTP 200',
        creditsSpent: 1,
        resultJson: '{}',
      });
      await store.finishRun(`${m.id}@120000`, { outcome: 'failed', reason: 'timed out', creditsSpent: 0 });
      const page = await store.listRuns(m.id, { limit: 2, from: 60_000, to: 240_000, beforeSlot: 240_000 });
      expect(page.map((r) => r.slot)).to.deep.equal([180_000, 120_000]);
      const first = (await store.listRuns(m.id, { limit: 1, to: 60_000 }))[0];
      expect(first).to.include({ outcome: 'ok', verdict: 'up', responseTimeMs: 42, creditsSpent: 1 });
      expect((await store.previousRun(m.id, 240_000))?.slot).to.equal(120_000);
      expect(await store.interruptStale(200_000, 300_000)).to.be.at.least(1);
      const runs = await store.listRuns(m.id, { limit: 10 });
      expect(runs.map((r) => r.outcome)).to.deep.equal(['running', 'interrupted', 'failed', 'ok']);
    });

    it('sums each day of a monitor’s runs (counts added, the slowest kept) and lists days in a range', async () => {
      const m = monitor();
      await store.insertMonitor(m);
      const sample = (over: Partial<RollupSample>): RollupSample => ({
        runs: 1,
        ups: 0,
        degraded: 0,
        downs: 0,
        responseTimeSumMs: 0,
        responseTimeCount: 0,
        responseTimeMaxMs: 0,
        ...over,
      });
      const day = 20_000 * 86_400_000;
      await store.addToDay(
        m.id,
        day,
        sample({ ups: 1, responseTimeSumMs: 120, responseTimeCount: 1, responseTimeMaxMs: 120 }),
      );
      await store.addToDay(
        m.id,
        day,
        sample({ degraded: 1, responseTimeSumMs: 900, responseTimeCount: 1, responseTimeMaxMs: 900 }),
      );
      await store.addToDay(
        m.id,
        day,
        sample({ ups: 1, responseTimeSumMs: 80, responseTimeCount: 1, responseTimeMaxMs: 80 }),
      );
      await store.addToDay(m.id, day + 86_400_000, sample({ downs: 1 }));
      await store.addToDay(m.id, day + 2 * 86_400_000, sample({}));
      await store.addToDay('mon_other', day, sample({ downs: 1 }));
      const days = await store.listDays(m.id, day, day + 86_400_000);
      expect(days).to.deep.equal([
        {
          monitorId: m.id,
          day,
          runs: 3,
          ups: 2,
          degraded: 1,
          downs: 0,
          responseTimeSumMs: 1_100,
          responseTimeCount: 3,
          responseTimeMaxMs: 900,
        },
        { ...sample({ downs: 1 }), monitorId: m.id, day: day + 86_400_000 },
      ]);
      expect(await store.deleteMonitor('account:a1', m.id)).to.equal(true);
      expect(await store.listDays(m.id, 0, Number.MAX_SAFE_INTEGER)).to.deep.equal([]);
      expect(await store.listDays('mon_other', day, day)).to.have.length(1);
    });

    it('opens and closes incidents, and deletes a monitor with its runs and incidents', async () => {
      const m = monitor();
      await store.insertMonitor(m);
      await store.claimRun(run(m.id, 60_000));
      await store.openIncident({
        id: `inc_${randomUUID()}`,
        monitorId: m.id,
        state: 'open',
        openedAt: 1_000,
        reason: 'connection refused',
        silenced: false,
      });
      const open = await store.openIncidentOf(m.id);
      expect(open).to.include({ state: 'open', reason: 'connection refused' });
      await store.closeIncident(open?.id ?? '', 5_000);
      expect(await store.openIncidentOf(m.id)).to.equal(undefined);
      expect((await store.listIncidents(m.id, 10))[0]).to.include({ state: 'closed', closedAt: 5_000 });
      expect(await store.deleteMonitor('account:a1', m.id)).to.equal(true);
      expect(await store.listRuns(m.id, { limit: 10 })).to.deep.equal([]);
      expect(await store.listIncidents(m.id, 10)).to.deep.equal([]);
    });

    it('deletes runs older than the retention cut in batches, of every monitor, and nothing newer', async () => {
      // A store of its own: the sweep reaches every monitor's runs.
      const own = await adapter.open();
      try {
        const [a, b] = [monitor(), monitor()];
        const day = 86_400_000;
        for (const m of [a, b]) {
          await own.insertMonitor(m);
          for (let k = 1; k <= 5; k++) await own.claimRun(run(m.id, k * day, { outcome: 'ok' }));
          await own.addToDay(m.id, day, {
            runs: 1,
            ups: 1,
            degraded: 0,
            downs: 0,
            responseTimeSumMs: 5,
            responseTimeCount: 1,
            responseTimeMaxMs: 5,
          });
        }
        // Cut at day 3: days 1 and 2 of both monitors go (4 runs), in batches of 3.
        expect(await own.deleteRunsBefore(3 * day, 3)).to.equal(3);
        expect(await own.deleteRunsBefore(3 * day, 3)).to.equal(1);
        expect(await own.deleteRunsBefore(3 * day, 3)).to.equal(0);
        for (const m of [a, b]) {
          const slots = (await own.listRuns(m.id, { limit: 10 })).map((r) => r.slot);
          expect(slots).to.deep.equal([5 * day, 4 * day, 3 * day]);
          // The rollup keeps the long-range figures.
          expect(await own.listDays(m.id, 0, 10 * day)).to.have.length(1);
        }
      } finally {
        await own.close();
      }
    });
  });
}
