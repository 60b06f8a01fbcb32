import { counter, gauge, histogram } from '@webutil/kit';

/** Slots this replica claimed (won), by whether the run was late (Prometheus). */
export const runsClaimed = counter({
  name: 'webutil_monitor_runs_claimed_total',
  help: 'Monitor slots this replica claimed and ran, by whether the run was late',
  labelNames: ['late'],
});

/** Slots another replica had claimed first. */
export const claimsLost = counter({
  name: 'webutil_monitor_claims_lost_total',
  help: 'Monitor slots this replica tried to claim that another replica had claimed',
});

/** From a slot's start to its run's claim: the schedule's lag. */
export const scheduleLag = histogram({
  name: 'webutil_monitor_schedule_lag_seconds',
  help: 'From a monitor slot start to the start of its run on this replica',
  buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 15, 60],
});

/** Runs in flight on this replica. */
export const runsInFlight = gauge({
  name: 'webutil_monitor_runs_in_flight',
  help: 'Monitor runs this replica has claimed and not finished',
});

/** Runs the sweep marked interrupted (their replica stopped). */
export const runsInterrupted = counter({
  name: 'webutil_monitor_runs_interrupted_total',
  help: 'Monitor runs marked interrupted by this replica because the replica running them stopped',
});

/** Runs the retention sweep deleted (their slot older than MONITOR_RUN_RETENTION_DAYS). */
export const oldRunsDeleted = counter({
  name: 'webutil_monitor_runs_deleted_total',
  help: 'Monitor runs deleted by this replica because their slot is older than the retention window',
});
