/**
 * The scheduler every replica runs (docs/decisions/0431): it reads the monitors whose slot has come,
 * claims each (monitor, slot) with a unique insert of the run, and runs the claims it won. A slot is
 * run once across replicas; a replica killed mid-run leaves its claim, so the slot is not run again
 * (the run is marked interrupted later); slots missed in an outage give one late run, not a burst.
 */
import type { Logger } from '@webutil/kit';
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
  now?: () => number;
}

/** What a claimed run does (the operation, its billing, incidents and alerts). */
export type RunClaimed = (monitor: MonitorRecord, run: RunRecord) => Promise<void>;

export class Scheduler {
  private timer: NodeJS.Timeout | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  private ticking = false;
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
    this.timer = setInterval(() => void this.tick(), this.options.tickMs);
    this.timer.unref();
  }

  /** Stops claiming; the runs in flight finish. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await Promise.allSettled([...this.inFlight]);
  }

  /** One pass: every due monitor this replica has room for is claimed, and each claim won is run. */
  async tick(): Promise<number> {
    if (this.ticking) return 0;
    this.ticking = true;
    let claimed = 0;
    try {
      const room = this.options.concurrency - this.inFlight.size;
      if (room <= 0) return 0;
      const now = this.now();
      for (const monitor of await this.store.dueMonitors(now, room)) {
        const due = dueRun(monitor.id, monitor.intervalSeconds, monitor.nextRunAt, now, this.options.graceMs);
        if (!due) continue;
        const run: RunRecord = {
          id: `${monitor.id}@${due.slotMs}`,
          monitorId: monitor.id,
          slot: due.slotMs,
          startedAt: now,
          late: due.late,
          outcome: 'running',
          reason: '',
          creditsSpent: 0,
          replica: this.options.replica,
        };
        const won = await this.store.claimRun(run);
        // Winner or not, the monitor moves on past this slot (the winner may die before it does).
        await this.store.advance(monitor.id, monitor.nextRunAt, slotAfter(monitor.id, monitor.intervalSeconds, now));
        if (!won) continue;
        claimed++;
        const running = this.runClaimed(monitor, run).catch((err: unknown) =>
          this.log.warn({ err, monitorId: monitor.id }, 'a monitor run failed'),
        );
        this.inFlight.add(running);
        void running.finally(() => this.inFlight.delete(running));
      }
    } finally {
      this.ticking = false;
    }
    return claimed;
  }
}
