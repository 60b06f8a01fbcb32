import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from '../logger.js';
import { DiskArtifactStore } from './disk.js';
import type { ArtifactStore } from './store.js';

export { DiskArtifactStore } from './disk.js';
export * from './send.js';
export * from './store.js';

export interface ArtifactStoreConfig {
  /** The embedded default: files under DATA_DIR/artifacts/<bucket>. */
  dataDir: string;
  /** When set, GridFS in this MongoDB. */
  mongoUrl?: string;
  /** One namespace per service, e.g. "render" or "bookmark". */
  bucket: string;
}

/**
 * Local disk under the data directory, or GridFS when MONGO_URL is set. The GridFS store (and with
 * it mongoose and the MongoDB driver) is loaded only then: a process on the embedded store never
 * holds their code.
 */
export async function openArtifactStore(config: ArtifactStoreConfig): Promise<ArtifactStore> {
  if (config.mongoUrl) {
    const { GridFsArtifactStore } = await import('./gridfs.js');
    return GridFsArtifactStore.connect(config.mongoUrl, config.bucket);
  }
  const dir = path.join(config.dataDir, 'artifacts', config.bucket);
  mkdirSync(dir, { recursive: true });
  return DiskArtifactStore.open(dir);
}

/** Sweeps expired artifacts every `everyMs`; returns the stop function. */
export function sweepArtifacts(store: ArtifactStore, everyMs: number, log: Logger): () => void {
  const timer = setInterval(() => {
    store.sweep().then(
      (removed) => removed > 0 && log.debug({ removed }, 'expired artifacts removed'),
      (err: unknown) => log.warn({ err }, 'artifact sweep failed'),
    );
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
