import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { DAY_MS, dayOf, daysReadRunByRun, recordRunInRollup, sampleOf } from '../src/rollup.js';
import { monitorFiguresOf } from '../src/status-page.js';
import { storeReads } from '../src/status-reads.js';
import type { RunRecord } from '../src/store/store.js';
import { SqliteMonitorStore } from '../src/store/store-sqlite.js';

const HOUR_MS = 3_600_000;
const NOW = Date.parse('2026-11-29T12:30:00Z');

describe('daily rollup', () => {
  it('adds a run to its day by verdict; response times only of checks that answered', () => {
    expect(sampleOf({ verdict: 'up', responseTimeMs: 80 })).to.deep.equal({
      runs: 1,
      ups: 1,
      degraded: 0,
      downs: 0,
      responseTimeSumMs: 80,
      responseTimeCount: 1,
      responseTimeMaxMs: 80,
    });
    expect(sampleOf({ verdict: 'down', responseTimeMs: 10_000 })).to.include({
      downs: 1,
      responseTimeSumMs: 0,
      responseTimeCount: 0,
    });
    expect(sampleOf({})).to.include({ runs: 1, ups: 0, degraded: 0, downs: 0, responseTimeCount: 0 });
  });

  it('reads five days run by run at most: today, yesterday and the first day of each longer window', () => {
    const days = daysReadRunByRun(NOW);
    expect(days).to.have.length(5);
    expect(days).to.include.members([dayOf(NOW), dayOf(NOW) - DAY_MS, dayOf(NOW) - 7 * DAY_MS]);
  });

  describe('status figures from the rollup (SQLite store)', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'monitor-rollup-'));
    const store = new SqliteMonitorStore(path.join(dir, 'monitors.sqlite'));
    after(async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('are the figures all runs give: every window, every daily bar and the response-time chart', async () => {
      // 100 days of hourly runs: every 13th down, every 29th without a verdict, one degraded in 7.
      const runs: RunRecord[] = Array.from({ length: 100 * 24 }, (_, i) => {
        const slot = dayOf(NOW) + 12 * HOUR_MS - i * HOUR_MS;
        const verdict = i % 29 === 0 ? undefined : i % 13 === 0 ? 'down' : i % 7 === 0 ? 'degraded' : 'up';
        return {
          id: `mon_r@${slot}`,
          monitorId: 'mon_r',
          slot,
          startedAt: slot + 10_000,
          late: false,
          outcome: verdict ? 'ok' : 'failed',
          verdict,
          responseTimeMs: verdict === 'down' || !verdict ? undefined : 100 + (i % 50),
          reason: '',
          creditsSpent: 1,
          replica: 'r1',
        };
      });
      for (const run of runs) {
        await store.claimRun(run);
        const { id, monitorId, slot, startedAt, late, replica, ...result } = run;
        await store.finishRun(id, result);
        await recordRunInRollup(store, run);
      }
      const monitor = { id: 'mon_r', name: 'r', kind: 'down-check', status: 'up' };
      const history = await storeReads(store).history('mon_r', NOW);
      expect(history.runs.length).to.be.at.most(5 * 24);
      expect(history.days.length).to.be.greaterThan(80);
      const all = runs.map((run) => ({
        startedAt: new Date(run.startedAt).toISOString(),
        verdict: run.verdict,
        responseTimeMs: run.responseTimeMs,
      }));
      const fromAll = monitorFiguresOf({ ...monitor, runs: all }, NOW);
      const fromRollup = monitorFiguresOf({ ...monitor, ...history }, NOW);
      expect(fromRollup).to.deep.equal(fromAll);
      expect(fromAll.uptime.at(-1)?.checks).to.be.greaterThan(2_000);
    });
  });
});
