/**
 * The status views' reads (MonitorReads) over the core's store: lean shapes; uptime from the daily
 * rollup and the runs of at most five days (rollup.ts), read a page at a time.
 */
import { DAY_MS, dayCountsOf, dayOf, daysReadRunByRun } from './rollup.js';
import type { StatusIncidentInput } from './status-page.js';
import type { MonitorReads } from './status-server.js';
import type { MonitorStore } from './store/store.js';
import type { UptimeRun } from './uptime.js';

/** Runs read per page: a day of one-minute runs is 1,440. */
const RUNS_PAGE = 5_000;
/** The longest window figured (90 days). */
const HISTORY_DAYS = 90;
/** Runs looked through for the newest with an answer. */
const LATEST_RUNS = 10;

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

export function storeReads(store: MonitorStore, now: () => number = Date.now): MonitorReads {
  return {
    async monitor(subject, id) {
      const monitor = await store.getMonitor(subject, id);
      return (
        monitor && {
          id: monitor.id,
          name: monitor.name,
          kind: monitor.kind,
          status: monitor.status,
          lastRunAt: iso(monitor.lastRunAt),
        }
      );
    },

    async history(monitorId, at) {
      const byRun = daysReadRunByRun(at);
      const runs: UptimeRun[] = [];
      for (const day of byRun) runs.push(...(await runsOf(store, monitorId, day, Math.min(day + DAY_MS - 1, at))));
      const stored = await store.listDays(monitorId, dayOf(at - HISTORY_DAYS * DAY_MS), dayOf(at));
      return { runs, days: stored.filter((day) => !byRun.includes(day.day)).map(dayCountsOf) };
    },

    async incidents(monitorId, limit): Promise<StatusIncidentInput[]> {
      const at = now();
      return (await store.listIncidents(monitorId, limit)).map((incident) => ({
        id: incident.id,
        state: incident.state,
        openedAt: new Date(incident.openedAt).toISOString(),
        closedAt: iso(incident.closedAt),
        durationSeconds: Math.round(((incident.closedAt ?? at) - incident.openedAt) / 1000),
        reason: incident.reason,
      }));
    },

    async latestResult(monitorId) {
      const runs = await store.listRuns(monitorId, { limit: LATEST_RUNS });
      const answered = runs.find((run) => run.resultJson);
      return answered?.resultJson ? JSON.parse(answered.resultJson) : undefined;
    },
  };
}

/** A monitor's runs of slots in [from, to], as uptime reads them. */
async function runsOf(store: MonitorStore, monitorId: string, from: number, to: number): Promise<UptimeRun[]> {
  const runs: UptimeRun[] = [];
  let beforeSlot: number | undefined;
  for (;;) {
    const page = await store.listRuns(monitorId, { from, to, limit: RUNS_PAGE, beforeSlot });
    for (const run of page)
      runs.push({
        startedAt: new Date(run.startedAt).toISOString(),
        verdict: run.verdict,
        responseTimeMs: run.responseTimeMs,
      });
    if (page.length < RUNS_PAGE) return runs;
    beforeSlot = page.at(-1)?.slot;
  }
}
