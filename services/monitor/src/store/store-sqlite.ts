/** The embedded store: one SQLite file (the kit's convention), shared by the replicas of one machine. */
import { setUpSqlite } from '@webutil/kit';
import Database from 'better-sqlite3';
import type {
  DayRollup,
  IncidentRecord,
  MonitorChanges,
  MonitorRecord,
  MonitorStore,
  RollupSample,
  RunPage,
  RunRecord,
  RunResult,
} from './store.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS monitors (
  id TEXT PRIMARY KEY, subject TEXT NOT NULL, name TEXT NOT NULL, kind TEXT NOT NULL,
  input_json TEXT NOT NULL, request_json TEXT NOT NULL, interval_seconds INTEGER NOT NULL,
  alerts_json TEXT NOT NULL, state TEXT NOT NULL, paused_reason TEXT, status TEXT NOT NULL,
  created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, last_run_at INTEGER,
  next_run_at INTEGER NOT NULL, failures INTEGER NOT NULL, successes INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS monitors_subject ON monitors (subject, created_at);
CREATE INDEX IF NOT EXISTS monitors_due ON monitors (state, next_run_at);
CREATE TABLE IF NOT EXISTS runs (
  id TEXT PRIMARY KEY, monitor_id TEXT NOT NULL, slot INTEGER NOT NULL, started_at INTEGER NOT NULL,
  finished_at INTEGER, late INTEGER NOT NULL, outcome TEXT NOT NULL, verdict TEXT, response_time_ms INTEGER,
  reason TEXT NOT NULL, credits_spent INTEGER NOT NULL, changes_json TEXT, result_json TEXT, replica TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS runs_claim ON runs (monitor_id, slot);
CREATE INDEX IF NOT EXISTS runs_running ON runs (outcome, started_at);
CREATE INDEX IF NOT EXISTS runs_slot ON runs (slot);
CREATE TABLE IF NOT EXISTS incidents (
  id TEXT PRIMARY KEY, monitor_id TEXT NOT NULL, state TEXT NOT NULL, opened_at INTEGER NOT NULL,
  closed_at INTEGER, reason TEXT NOT NULL, silenced INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS incidents_monitor ON incidents (monitor_id, opened_at);
CREATE TABLE IF NOT EXISTS run_days (
  monitor_id TEXT NOT NULL, day INTEGER NOT NULL, runs INTEGER NOT NULL, ups INTEGER NOT NULL,
  degraded INTEGER NOT NULL, downs INTEGER NOT NULL, response_time_sum_ms INTEGER NOT NULL,
  response_time_count INTEGER NOT NULL, response_time_max_ms INTEGER NOT NULL, PRIMARY KEY (monitor_id, day)
);
`;

const COLUMNS: Record<keyof MonitorChanges, string> = {
  name: 'name',
  inputJson: 'input_json',
  requestJson: 'request_json',
  intervalSeconds: 'interval_seconds',
  alertsJson: 'alerts_json',
  state: 'state',
  pausedReason: 'paused_reason',
  status: 'status',
  updatedAt: 'updated_at',
  lastRunAt: 'last_run_at',
  nextRunAt: 'next_run_at',
  failures: 'failures',
  successes: 'successes',
};

type Row = Record<string, unknown>;
const opt = <T>(value: unknown) => (value === null || value === undefined ? undefined : (value as T));

/** A record without the columns that are NULL (absent, as the Mongo store reads them). */
const compact = <T extends object>(record: T): T =>
  Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined)) as T;

function monitorOf(row: Row): MonitorRecord {
  return compact({
    id: row.id as string,
    subject: row.subject as string,
    name: row.name as string,
    kind: row.kind as string,
    inputJson: row.input_json as string,
    requestJson: row.request_json as string,
    intervalSeconds: row.interval_seconds as number,
    alertsJson: row.alerts_json as string,
    state: row.state as MonitorRecord['state'],
    pausedReason: opt(row.paused_reason),
    status: row.status as string,
    createdAt: row.created_at as number,
    updatedAt: row.updated_at as number,
    lastRunAt: opt(row.last_run_at),
    nextRunAt: row.next_run_at as number,
    failures: row.failures as number,
    successes: row.successes as number,
  });
}

function runOf(row: Row): RunRecord {
  return compact({
    id: row.id as string,
    monitorId: row.monitor_id as string,
    slot: row.slot as number,
    startedAt: row.started_at as number,
    finishedAt: opt(row.finished_at),
    late: row.late === 1,
    outcome: row.outcome as string,
    verdict: opt(row.verdict),
    responseTimeMs: opt(row.response_time_ms),
    reason: row.reason as string,
    creditsSpent: row.credits_spent as number,
    changesJson: opt(row.changes_json),
    resultJson: opt(row.result_json),
    replica: row.replica as string,
  });
}

function incidentOf(row: Row): IncidentRecord {
  return compact({
    id: row.id as string,
    monitorId: row.monitor_id as string,
    state: row.state as IncidentRecord['state'],
    openedAt: row.opened_at as number,
    closedAt: opt(row.closed_at),
    reason: row.reason as string,
    silenced: row.silenced === 1,
  });
}

export class SqliteMonitorStore implements MonitorStore {
  private readonly db: Database.Database;

  constructor(file: string) {
    this.db = setUpSqlite(new Database(file), { schema: SCHEMA });
  }

  async insertMonitor(m: MonitorRecord): Promise<void> {
    this.db
      .prepare(
        `INSERT INTO monitors VALUES (@id, @subject, @name, @kind, @inputJson, @requestJson, @intervalSeconds,
         @alertsJson, @state, @pausedReason, @status, @createdAt, @updatedAt, @lastRunAt, @nextRunAt, @failures,
         @successes)`,
      )
      .run({ ...m, pausedReason: m.pausedReason ?? null, lastRunAt: m.lastRunAt ?? null });
  }

  async countMonitors(subject: string): Promise<number> {
    const row = this.db.prepare('SELECT COUNT(*) AS n FROM monitors WHERE subject = ?').get(subject) as { n: number };
    return row.n;
  }

  async listMonitors(subject: string): Promise<MonitorRecord[]> {
    const rows = this.db
      .prepare('SELECT * FROM monitors WHERE subject = ? ORDER BY created_at DESC, id DESC')
      .all(subject) as Row[];
    return rows.map(monitorOf);
  }

  async getMonitor(subject: string, id: string): Promise<MonitorRecord | undefined> {
    const row = this.db.prepare('SELECT * FROM monitors WHERE id = ? AND subject = ?').get(id, subject) as
      | Row
      | undefined;
    return row && monitorOf(row);
  }

  async updateMonitor(subject: string, id: string, changes: MonitorChanges): Promise<boolean> {
    const entries = Object.entries(changes) as [keyof MonitorChanges, unknown][];
    if (entries.length === 0) return (await this.getMonitor(subject, id)) !== undefined;
    const sets = entries.map(([key]) => `${COLUMNS[key]} = ?`).join(', ');
    const values = entries.map(([, value]) => value ?? null);
    const result = this.db
      .prepare(`UPDATE monitors SET ${sets} WHERE id = ? AND subject = ?`)
      .run(...values, id, subject);
    return result.changes > 0;
  }

  async deleteMonitor(subject: string, id: string): Promise<boolean> {
    return this.db.transaction(() => {
      const result = this.db.prepare('DELETE FROM monitors WHERE id = ? AND subject = ?').run(id, subject);
      if (result.changes === 0) return false;
      this.db.prepare('DELETE FROM runs WHERE monitor_id = ?').run(id);
      this.db.prepare('DELETE FROM incidents WHERE monitor_id = ?').run(id);
      this.db.prepare('DELETE FROM run_days WHERE monitor_id = ?').run(id);
      return true;
    })();
  }

  async pauseAll(subject: string, reason: string, at: number): Promise<string[]> {
    const rows = this.db
      .prepare(
        `UPDATE monitors SET state = 'paused', paused_reason = ?, updated_at = ?
         WHERE subject = ? AND state = 'active' RETURNING id`,
      )
      .all(reason, at, subject) as { id: string }[];
    return rows.map((r) => r.id);
  }

  async dueMonitors(now: number, limit: number, exceptSubjects: readonly string[] = []): Promise<MonitorRecord[]> {
    const rows = this.db
      .prepare(
        `SELECT * FROM monitors WHERE state = 'active' AND next_run_at <= ?
         AND subject NOT IN (SELECT value FROM json_each(?)) ORDER BY next_run_at LIMIT ?`,
      )
      .all(now, JSON.stringify(exceptSubjects), limit) as Row[];
    return rows.map(monitorOf);
  }

  async advance(id: string, fromNextRunAt: number, nextRunAt: number): Promise<boolean> {
    const result = this.db
      .prepare('UPDATE monitors SET next_run_at = ? WHERE id = ? AND next_run_at = ?')
      .run(nextRunAt, id, fromNextRunAt);
    return result.changes > 0;
  }

  async claimRun(run: RunRecord): Promise<boolean> {
    const result = this.db
      .prepare(
        `INSERT INTO runs (id, monitor_id, slot, started_at, late, outcome, reason, credits_spent, replica)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (monitor_id, slot) DO NOTHING`,
      )
      .run(
        run.id,
        run.monitorId,
        run.slot,
        run.startedAt,
        run.late ? 1 : 0,
        run.outcome,
        run.reason,
        run.creditsSpent,
        run.replica,
      );
    return result.changes > 0;
  }

  async finishRun(id: string, r: RunResult): Promise<void> {
    this.db
      .prepare(
        `UPDATE runs SET finished_at = ?, outcome = ?, verdict = ?, response_time_ms = ?, reason = ?,
         credits_spent = ?, changes_json = ?, result_json = ? WHERE id = ?`,
      )
      .run(
        r.finishedAt ?? null,
        r.outcome,
        r.verdict ?? null,
        r.responseTimeMs ?? null,
        r.reason,
        r.creditsSpent,
        r.changesJson ?? null,
        r.resultJson ?? null,
        id,
      );
  }

  async interruptStale(before: number, at: number): Promise<number> {
    return this.db
      .prepare(
        `UPDATE runs SET outcome = 'interrupted', reason = 'the replica running it stopped', finished_at = ?
         WHERE outcome = 'running' AND started_at < ?`,
      )
      .run(at, before).changes;
  }

  async deleteRunsBefore(slot: number, limit: number): Promise<number> {
    return this.db.prepare('DELETE FROM runs WHERE id IN (SELECT id FROM runs WHERE slot < ? LIMIT ?)').run(slot, limit)
      .changes;
  }

  async listRuns(monitorId: string, page: RunPage): Promise<RunRecord[]> {
    const rows = this.db
      .prepare(
        `SELECT * FROM runs WHERE monitor_id = ? AND slot >= ? AND slot <= ? AND slot < ?
         ORDER BY slot DESC LIMIT ?`,
      )
      .all(
        monitorId,
        page.from ?? 0,
        page.to ?? Number.MAX_SAFE_INTEGER,
        page.beforeSlot ?? Number.MAX_SAFE_INTEGER,
        page.limit,
      ) as Row[];
    return rows.map(runOf);
  }

  async previousRun(monitorId: string, beforeSlot: number): Promise<RunRecord | undefined> {
    const row = this.db
      .prepare(
        `SELECT * FROM runs WHERE monitor_id = ? AND slot < ? AND outcome IN ('ok', 'failed')
         ORDER BY slot DESC LIMIT 1`,
      )
      .get(monitorId, beforeSlot) as Row | undefined;
    return row && runOf(row);
  }

  async addToDay(monitorId: string, day: number, s: RollupSample): Promise<void> {
    this.db
      .prepare(
        `INSERT INTO run_days VALUES (@monitorId, @day, @runs, @ups, @degraded, @downs, @responseTimeSumMs,
         @responseTimeCount, @responseTimeMaxMs)
         ON CONFLICT (monitor_id, day) DO UPDATE SET runs = runs + excluded.runs, ups = ups + excluded.ups,
         degraded = degraded + excluded.degraded, downs = downs + excluded.downs,
         response_time_sum_ms = response_time_sum_ms + excluded.response_time_sum_ms,
         response_time_count = response_time_count + excluded.response_time_count,
         response_time_max_ms = MAX(response_time_max_ms, excluded.response_time_max_ms)`,
      )
      .run({ monitorId, day, ...s });
  }

  async listDays(monitorId: string, fromDay: number, toDay: number): Promise<DayRollup[]> {
    const rows = this.db
      .prepare('SELECT * FROM run_days WHERE monitor_id = ? AND day >= ? AND day <= ? ORDER BY day')
      .all(monitorId, fromDay, toDay) as Row[];
    return rows.map((row) => ({
      monitorId: row.monitor_id as string,
      day: row.day as number,
      runs: row.runs as number,
      ups: row.ups as number,
      degraded: row.degraded as number,
      downs: row.downs as number,
      responseTimeSumMs: row.response_time_sum_ms as number,
      responseTimeCount: row.response_time_count as number,
      responseTimeMaxMs: row.response_time_max_ms as number,
    }));
  }

  async openIncident(i: IncidentRecord): Promise<void> {
    this.db
      .prepare('INSERT INTO incidents VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(i.id, i.monitorId, i.state, i.openedAt, i.closedAt ?? null, i.reason, i.silenced ? 1 : 0);
  }

  async openIncidentOf(monitorId: string): Promise<IncidentRecord | undefined> {
    const row = this.db
      .prepare(`SELECT * FROM incidents WHERE monitor_id = ? AND state = 'open' ORDER BY opened_at DESC LIMIT 1`)
      .get(monitorId) as Row | undefined;
    return row && incidentOf(row);
  }

  async closeIncident(id: string, closedAt: number): Promise<void> {
    this.db.prepare(`UPDATE incidents SET state = 'closed', closed_at = ? WHERE id = ?`).run(closedAt, id);
  }

  async listIncidents(monitorId: string, limit: number): Promise<IncidentRecord[]> {
    const rows = this.db
      .prepare('SELECT * FROM incidents WHERE monitor_id = ? ORDER BY opened_at DESC LIMIT ?')
      .all(monitorId, limit) as Row[];
    return rows.map(incidentOf);
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
