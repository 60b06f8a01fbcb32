import os from 'node:os';
import { env, loadConfig, serviceEnv } from '@webutil/kit';
import { mailEnv } from '@webutil/kit/mail';

/** The service's settings from environment variables (a bad value stops the process, naming it). */
export function readConfig(source: NodeJS.ProcessEnv = process.env) {
  return loadConfig(
    {
      ...serviceEnv,
      HOST: env.string('0.0.0.0'),
      PORT: env.port(50057),
      DATA_DIR: env.string('.data'),
      MONGO_URL: env.optionalString(),
      // The scheduler (docs/decisions/0431, 0469).
      /** How often this replica asks the store for due monitors. */
      MONITOR_TICK_MS: env.int(1_000, 10),
      /** A run started later than this after its slot is marked late. */
      MONITOR_GRACE_MS: env.int(15_000, 0),
      /** Runs in flight at once on this replica. */
      MONITOR_CONCURRENCY: env.int(50, 1),
      /** The name kept on this replica's claims: the pod's (HOSTNAME) and the process id. */
      MONITOR_REPLICA: env.string(`${source.HOSTNAME || os.hostname()}:${process.pid}`),
      /** A run still `running` this long after it started lost its replica: marked interrupted. */
      MONITOR_STALE_RUN_MS: env.int(30 * 60_000, 1_000),
      /**
       * Intervals pass this many times faster (tests and benchmarks only: 60 makes a one-minute monitor run
       * every second). Only the environment sets it; the API's intervals keep their minimums.
       */
      MONITOR_TIME_SCALE: env.int(1, 1),
      /**
       * Runs are kept this many days, then deleted (decision 0485): the longest uptime window shown (90 days,
       * whose first day is read run by run) plus margin; the daily rollup keeps the figures of older days.
       */
      MONITOR_RUN_RETENTION_DAYS: env.int(100, 92),
      // The runs (decision 0461).
      /** Where the website and API are reached: the links in alerts (the edge's same setting). */
      PUBLIC_BASE_URL: env.string('http://127.0.0.1:8080'),
      /** The services a run calls: billing for its credits, and each kind's operation. */
      BILLING_ADDR: env.string('127.0.0.1:50051'),
      META_SCAN_ADDR: env.string('127.0.0.1:50055'),
      TLS_SCAN_ADDR: env.string('127.0.0.1:50054'),
      CRAWL_ADDR: env.string('127.0.0.1:50053'),
      RENDER_ADDR: env.string('127.0.0.1:50052'),
      /** The wait before the re-check that confirms a down-check incident. */
      MONITOR_RECHECK_DELAY_MS: env.int(10_000),
      /**
       * How often a broken-links-crawl run asks for its job, and how long it waits for it at most (less than
       * MONITOR_STALE_RUN_MS, or the sweep would mark the run interrupted).
       */
      MONITOR_CRAWL_POLL_MS: env.int(2_000, 10),
      MONITOR_CRAWL_DEADLINE_MS: env.int(25 * 60_000, 1_000),
      // Alerts (decision 0465): mail, and Slack-compatible URLs under the address policy of every fetch.
      ...mailEnv,
      WEBUTIL_ALLOW_TARGETS: env.cidrList(),
    },
    source,
  );
}

export type MonitorConfig = ReturnType<typeof readConfig>;
