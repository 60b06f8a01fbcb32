import { createLogger, exitOnFatalErrors, processOptions, runService } from '@webutil/kit';
import { openArtifactStore, sweepArtifacts } from '@webutil/kit/artifacts';
import { BookmarkWorkers } from './bookmark-workers.js';
import { readConfig } from './config.js';
import { keyDerivation } from './floccus-crypto.js';
import { bookmarkService } from './server.js';

const config = readConfig();

const log = createLogger('bookmark', config.LOG_LEVEL);
exitOnFatalErrors(log);
const store = await openArtifactStore({ dataDir: config.DATA_DIR, mongoUrl: config.MONGO_URL, bucket: 'bookmark' });
const stopSweeping = sweepArtifacts(store, config.ARTIFACT_SWEEP_MS, log);

await runService({
  name: 'bookmark',
  ...processOptions(config),
  protoFiles: ['webutil/bookmark/v1/bookmark.proto'],
  bindings: [
    bookmarkService(
      {
        store,
        ttlMs: config.XBEL_TTL_MS,
        deriveKey: keyDerivation(config.KDF_CONCURRENCY),
        workers: new BookmarkWorkers({
          concurrency: config.BOOKMARK_WORKERS,
          heapMb: config.BOOKMARK_WORKER_HEAP_MB,
          timeoutMs: config.BOOKMARK_WORKER_TIMEOUT_MS,
        }),
      },
      log,
    ),
  ],
  log,
  onShutdown: async () => {
    stopSweeping();
    await store.close();
  },
});
