/** The status views' reads (MonitorReads) over the core's store: lean shapes, runs read a page at a time. */
import type { StatusIncidentInput } from './status-page.js';
import type { MonitorReads } from './status-server.js';
import type { MonitorStore } from './store/store.js';
import type { UptimeRun } from './uptime.js';

/** Runs read per page: 90 days of one-minute runs is about 130,000, never held as full records at once. */
const RUNS_PAGE = 5_000;
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

    async runs(monitorId, from, to) {
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
