/**
 * The scheduler every replica runs (docs/decisions/0431): it reads the monitors whose slot has come,
 * claims each (monitor, slot) with a unique insert of the run, and runs the claims it won. A slot is
 * run once across replicas; a replica killed mid-run leaves its claim, so the slot is not run again
 * (the run is marked interrupted later); slots missed in an outage give one late run, not a burst.
 */
import type { Logger } from '@webutil/kit';
import { fairPicks, HeldSlots } from './fair-slots.js';
import {
  claimsLost,
  oldRunsDeleted,
  runsClaimed,
  runsInFlight,
  runsInterrupted,
  scheduleLag,
} from './scheduler-metrics.js';
import { dueRun, slotAfter } from './slots.js';
import type { MonitorRecord, MonitorStore, RunRecord } from './store/store.js';

export interface SchedulerOptions {
  /** This replica's name, kept on its claims. */
  replica: string;
  /** How often the store is asked for due monitors. */
  tickMs: number;
  /** A run started later than this after its slot is marked late. */
  graceMs: number;
  /** Runs in flight at once on this replica: a due monitor beyond them waits for the next tick. */
  concurrency: number;
  /** A run still `running` this long after it started lost its replica: the sweep marks it interrupted. */
  staleRunMs?: number;
  /** Intervals pass this many times faster (tests and benchmarks only); default 1. */
  timeScale?: number;
  /** Runs whose slot is older than this are deleted by an hourly sweep (unset: kept). */
  runRetentionMs?: number;
  now?: () => number;
}

/** Reads of due monitors per tick past the accounts already read, for the fair share (decision 0484). */
const MAX_DUE_READS = 4;
/** Runs deleted per store call by the retention sweep. */
const DELETE_BATCH = 1_000;

/** What a claimed run does (the operation, its billing, incidents and alerts). */
export type RunClaimed = (monitor: MonitorRecord, run: RunRecord) => Promise<void>;

export class Scheduler {
  private timer: NodeJS.Timeout | undefined;
  private sweeper: NodeJS.Timeout | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  /** Runs in flight on this replica per account: the fair share's loads. */
  private readonly held = new HeldSlots();
  private retention: NodeJS.Timeout | undefined;
  private ticking = false;
  /** The last tick started by the timer, which stop() lets finish before the store closes. */
  private ticked: Promise<number> = Promise.resolve(0);
  private readonly now: () => number;

  constructor(
    private readonly store: MonitorStore,
    private readonly runClaimed: RunClaimed,
    private readonly options: SchedulerOptions,
    private readonly log: Logger,
  ) {
    this.now = options.now ?? Date.now;
  }

  start(): void {
    this.timer = setInterval(() => {
      // A store that does not answer (a restart, a network cut) costs this tick, not the process.
      this.ticked = this.tick().catch((err: unknown) => {
        this.log.warn({ err }, 'a scheduler tick failed');
        return 0;
      });
    }, this.options.tickMs);
    this.timer.unref();
    const retentionMs = this.options.runRetentionMs;
    if (retentionMs !== undefined) {
      // Every replica sweeps too (deletes are idempotent); hourly is far finer than the window.
      this.retention = setInterval(() => void this.deleteOldRuns(retentionMs), 60 * 60_000);
      this.retention.unref();
    }
    const staleRunMs = this.options.staleRunMs;
    if (staleRunMs === undefined) return;
    // Every replica sweeps (an idempotent update), so the claims of a dead one are closed by any survivor.
    this.sweeper = setInterval(() => void this.sweep(staleRunMs), Math.min(60_000, Math.ceil(staleRunMs / 2)));
    this.sweeper.unref();
  }

  /** Marks interrupted the runs whose replica died (still `running` after staleRunMs). */
  async sweep(staleRunMs: number): Promise<number> {
    const now = this.now();
    try {
      const interrupted = await this.store.interruptStale(now - staleRunMs, now);
      runsInterrupted.inc(interrupted);
      if (interrupted > 0) this.log.warn({ interrupted }, 'runs whose replica stopped were marked interrupted');
      return interrupted;
    } catch (err) {
      this.log.warn({ err }, 'the sweep for interrupted runs failed');
      return 0;
    }
  }

  /** Deletes the runs whose slot is older than `retentionMs`, in batches; the daily rollup keeps their figures. */
  async deleteOldRuns(retentionMs: number): Promise<number> {
    const before = this.now() - retentionMs;
    let deleted = 0;
    try {
      for (;;) {
        const batch = await this.store.deleteRunsBefore(before, DELETE_BATCH);
        deleted += batch;
        if (batch < DELETE_BATCH) break;
      }
    } catch (err) {
      this.log.warn({ err }, 'the sweep for runs past their retention failed');
    }
    oldRunsDeleted.inc(deleted);
    return deleted;
  }

  /** Stops claiming; the runs in flight finish. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    clearInterval(this.sweeper);
    clearInterval(this.retention);
    await this.ticked;
    await Promise.allSettled([...this.inFlight]);
  }

  /**
   * One pass: the due monitors this replica has room for, shared max-min fairly among their accounts
   * (decision 0484), are claimed, and each claim won is run.
   */
  async tick(): Promise<number> {
    if (this.ticking) return 0;
    this.ticking = true;
    try {
      const room = this.options.concurrency - this.inFlight.size;
      if (room <= 0) return 0;
      const now = this.now();
      const picks = fairPicks(await this.dueAcrossAccounts(now, room), this.held.counts, room);
      // Every replica reads the same due monitors: each tries them in its own order, all at once, so
      // a tick costs the store's round trip once, not once per monitor, and the replicas collide less.
      const won = await Promise.all(shuffled(picks).map((monitor) => this.claim(monitor, now)));
      return won.filter(Boolean).length;
    } finally {
      this.ticking = false;
    }
  }

  /**
   * The due monitors, most overdue first, read again past the accounts already read while a read
   * comes back full: a flood of one account's overdue monitors would otherwise hide every other
   * account's. It stops once enough accounts holding no slot here are read to take all the room.
   */
  private async dueAcrossAccounts(now: number, room: number): Promise<MonitorRecord[]> {
    const due: MonitorRecord[] = [];
    const subjects = new Set<string>();
    for (let read = 0; read < MAX_DUE_READS; read++) {
      const page = await this.store.dueMonitors(now, room, [...subjects]);
      due.push(...page);
      for (const monitor of page) subjects.add(monitor.subject);
      if (page.length < room) break;
      const idle = [...subjects].filter((subject) => !this.held.counts.has(subject)).length;
      if (idle >= room) break;
    }
    return due;
  }

  /** Claims the monitor's due slot; the winner moves the monitor on and starts the run. */
  private async claim(monitor: MonitorRecord, now: number): Promise<boolean> {
    const { graceMs, timeScale } = this.options;
    const due = dueRun(monitor.id, monitor.intervalSeconds, monitor.nextRunAt, now, graceMs, timeScale);
    if (!due) return false;
    const run: RunRecord = {
      id: `${monitor.id}@${due.slotMs}`,
      monitorId: monitor.id,
      slot: due.slotMs,
      // The claim's own instant, for the schedule's lag.
      startedAt: this.now(),
      late: due.late,
      outcome: 'running',
      reason: '',
      creditsSpent: 0,
      replica: this.options.replica,
    };
    if (!(await this.store.claimRun(run))) {
      claimsLost.inc();
      return false;
    }
    // Only the winner moves the monitor on (guarded by the value read). A winner that dies first leaves
    // it due for a slot whose claim exists: nobody runs it again, and the next slot's run is marked late.
    await this.store.advance(
      monitor.id,
      monitor.nextRunAt,
      slotAfter(monitor.id, monitor.intervalSeconds, now, timeScale),
    );
    runsClaimed.labels({ late: String(run.late) }).inc();
    scheduleLag.observe(Math.max(0, run.startedAt - run.slot) / 1000);
    const release = this.held.hold(monitor.subject);
    const running = this.runClaimed(monitor, run).catch((err: unknown) =>
      this.log.warn({ err, monitorId: monitor.id }, 'a monitor run failed'),
    );
    this.inFlight.add(running);
    runsInFlight.set(this.inFlight.size);
    void running.finally(() => {
      release();
      this.inFlight.delete(running);
      runsInFlight.set(this.inFlight.size);
    });
    return true;
  }
}

/** A copy in random order (Fisher-Yates). */
function shuffled<T>(items: T[]): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [copy[i], copy[j]] = [copy[j] as T, copy[i] as T];
  }
  return copy;
}
