/**
 * What the monitor service keeps: monitors, their runs (one per slot: the claim), incidents, and each
 * monitor's daily rollup of its runs.
 */

export interface MonitorRecord {
  id: string;
  /** Billing's subject of the owning account (`account:<id>`). */
  subject: string;
  name: string;
  kind: string;
  /** The operation's input as the caller gave it (its route's fields), JSON. */
  inputJson: string;
  /** The RPC request each run sends, JSON. */
  requestJson: string;
  intervalSeconds: number;
  /** MonitorAlerts, JSON. */
  alertsJson: string;
  state: 'active' | 'paused';
  pausedReason?: string;
  /** up, down, unknown; ok or failed for the kinds without a verdict. */
  status: string;
  createdAt: number;
  updatedAt: number;
  lastRunAt?: number;
  /** The start of the slot it waits for (epoch ms). */
  nextRunAt: number;
  /** Consecutive failed and succeeded down-checks, for opening and closing incidents. */
  failures: number;
  successes: number;
}

export interface RunRecord {
  id: string;
  monitorId: string;
  /** The slot's start (epoch ms); (monitorId, slot) is unique: the claim. */
  slot: number;
  startedAt: number;
  finishedAt?: number;
  late: boolean;
  /** running, ok, failed, skipped, interrupted */
  outcome: string;
  verdict?: string;
  responseTimeMs?: number;
  reason: string;
  creditsSpent: number;
  changesJson?: string;
  resultJson?: string;
  /** The replica that claimed it. */
  replica: string;
}

export type RunResult = Pick<
  RunRecord,
  'finishedAt' | 'outcome' | 'verdict' | 'responseTimeMs' | 'reason' | 'creditsSpent' | 'changesJson' | 'resultJson'
>;

export interface IncidentRecord {
  id: string;
  monitorId: string;
  state: 'open' | 'closed';
  openedAt: number;
  closedAt?: number;
  reason: string;
  silenced: boolean;
}

/** What one finished run adds to its day's rollup. */
export interface RollupSample {
  /** Finished runs, and of them the checks by verdict (a run without one is a gap). */
  runs: number;
  ups: number;
  degraded: number;
  downs: number;
  /** Response times of the checks that answered (up or degraded). */
  responseTimeSumMs: number;
  responseTimeCount: number;
  responseTimeMaxMs: number;
}

/** One monitor's runs of one UTC day, summed as each finishes: what uptime over days is read from. */
export interface DayRollup extends RollupSample {
  monitorId: string;
  /** The UTC day's start (epoch ms) of the runs' slots. */
  day: number;
}

export type MonitorChanges = Partial<
  Pick<
    MonitorRecord,
    | 'name'
    | 'inputJson'
    | 'requestJson'
    | 'intervalSeconds'
    | 'alertsJson'
    | 'state'
    | 'pausedReason'
    | 'status'
    | 'updatedAt'
    | 'lastRunAt'
    | 'nextRunAt'
    | 'failures'
    | 'successes'
  >
>;

export interface RunPage {
  from?: number;
  to?: number;
  limit: number;
  /** Runs strictly older than this slot (the previous page's last). */
  beforeSlot?: number;
}

export interface MonitorStore {
  insertMonitor(monitor: MonitorRecord): Promise<void>;
  countMonitors(subject: string): Promise<number>;
  listMonitors(subject: string): Promise<MonitorRecord[]>;
  /** A monitor of this subject's (another's id: undefined). */
  getMonitor(subject: string, id: string): Promise<MonitorRecord | undefined>;
  /** Changes a monitor of this subject's; false when there is none. */
  updateMonitor(subject: string, id: string, changes: MonitorChanges): Promise<boolean>;
  /** Deletes a monitor of this subject's with its runs, incidents and days; false when there is none. */
  deleteMonitor(subject: string, id: string): Promise<boolean>;
  /**
   * Pauses every active monitor of the subject (out of credits); the ids this call moved from active
   * (each once, whoever races).
   */
  pauseAll(subject: string, reason: string, at: number): Promise<string[]>;

  /** Active monitors whose slot has come, the most overdue first; none of the accounts in `exceptSubjects`. */
  dueMonitors(now: number, limit: number, exceptSubjects?: readonly string[]): Promise<MonitorRecord[]>;
  /** Moves a monitor on from the slot it waited for (only if it still waits for it). */
  advance(id: string, fromNextRunAt: number, nextRunAt: number): Promise<boolean>;
  /** The claim of a slot: inserts the run unless (monitorId, slot) exists; false when another replica has it. */
  claimRun(run: RunRecord): Promise<boolean>;
  finishRun(id: string, result: RunResult): Promise<void>;
  /** Runs still `running` that started before `before` (their replica died): marked interrupted. */
  interruptStale(before: number, at: number): Promise<number>;
  /** Deletes up to `limit` runs (of any monitor) whose slot is before `slot`: the retention sweep. */
  deleteRunsBefore(slot: number, limit: number): Promise<number>;
  listRuns(monitorId: string, page: RunPage): Promise<RunRecord[]>;
  /** The monitor's last finished run before this one (what a comparison compares with). */
  previousRun(monitorId: string, beforeSlot: number): Promise<RunRecord | undefined>;

  /** Adds a finished run to its monitor's day (created at its first run). */
  addToDay(monitorId: string, day: number, sample: RollupSample): Promise<void>;
  /** The monitor's days from `fromDay` to `toDay` (inclusive) that had runs, oldest first. */
  listDays(monitorId: string, fromDay: number, toDay: number): Promise<DayRollup[]>;

  openIncident(incident: IncidentRecord): Promise<void>;
  openIncidentOf(monitorId: string): Promise<IncidentRecord | undefined>;
  closeIncident(id: string, closedAt: number): Promise<void>;
  listIncidents(monitorId: string, limit: number): Promise<IncidentRecord[]>;

  close(): Promise<void>;
}
