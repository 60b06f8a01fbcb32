import { availableParallelism } from 'node:os';
import { env, loadConfig, serviceEnv } from '@webutil/kit';

/** The service's settings from environment variables (a bad value stops the process, naming it). */
export function readConfig(source: NodeJS.ProcessEnv = process.env) {
  return loadConfig(
    {
      ...serviceEnv,
      HOST: env.string('0.0.0.0'),
      PORT: env.port(50056),
      DATA_DIR: env.string('.data'),
      MONGO_URL: env.optionalString(),
      /** How long a converted or decrypted file can be downloaded (the spec's 30 minutes). */
      XBEL_TTL_MS: env.int(30 * 60_000, 1),
      /** How often expired files are deleted; reads check expiry themselves. */
      ARTIFACT_SWEEP_MS: env.int(60_000, 100),
      /** Floccus key derivations at once (CPU-bound): half the cores by default, at least one. */
      KDF_CONCURRENCY: env.int(Math.max(1, Math.floor(availableParallelism() / 2)), 1),
      /**
       * Reading bookmark HTML and writing cleaned copies, in worker threads (decision 0292): how
       * many at once, each thread's heap ceiling (MB) and time limit.
       */
      BOOKMARK_WORKERS: env.int(1, 1),
      BOOKMARK_WORKER_HEAP_MB: env.int(96, 8),
      BOOKMARK_WORKER_TIMEOUT_MS: env.int(30_000, 100),
    },
    source,
  );
}
