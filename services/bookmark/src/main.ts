import { availableParallelism } from 'node:os';
import { createLogger, env, loadConfig, processOptions, runService, serviceEnv } from '@webutil/kit';
import { openArtifactStore, sweepArtifacts } from '@webutil/kit/artifacts';
import { keyDerivation } from './floccus-crypto.js';
import { bookmarkService } from './server.js';

const config = loadConfig({
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
});

const log = createLogger('bookmark', config.LOG_LEVEL);
const store = await openArtifactStore({ dataDir: config.DATA_DIR, mongoUrl: config.MONGO_URL, bucket: 'bookmark' });
const stopSweeping = sweepArtifacts(store, config.ARTIFACT_SWEEP_MS, log);

await runService({
  name: 'bookmark',
  ...processOptions(config),
  protoFiles: ['webutil/bookmark/v1/bookmark.proto'],
  bindings: [
    bookmarkService({ store, ttlMs: config.XBEL_TTL_MS, deriveKey: keyDerivation(config.KDF_CONCURRENCY) }, log),
  ],
  log,
  onShutdown: async () => {
    stopSweeping();
    await store.close();
  },
});
