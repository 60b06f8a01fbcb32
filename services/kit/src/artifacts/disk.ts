import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import {
  type ArtifactInfo,
  type ArtifactStore,
  chunksOf,
  isArtifactName,
  type NewArtifact,
  newArtifactName,
  type OpenArtifact,
} from './store.js';

/**
 * Artifacts as files under one directory (the embedded default): `<name>` holds the bytes and
 * `<name>.json` its facts, written after the bytes are in place; `keys/<sha256 of the cache key>.json`
 * names the newest artifact per key.
 * A file is written under a temporary name and renamed, so a reader never sees half of one.
 */
export class DiskArtifactStore implements ArtifactStore {
  private constructor(
    private readonly dir: string,
    private readonly now: () => number,
  ) {}

  static async open(dir: string, now: () => number = Date.now): Promise<DiskArtifactStore> {
    await mkdir(path.join(dir, 'keys'), { recursive: true });
    // Half-written files of a process that died mid-write.
    await rm(path.join(dir, 'tmp'), { recursive: true, force: true });
    await mkdir(path.join(dir, 'tmp'), { recursive: true });
    return new DiskArtifactStore(dir, now);
  }

  async put(artifact: NewArtifact): Promise<ArtifactInfo> {
    const name = newArtifactName(artifact.extension);
    const tmp = path.join(this.dir, 'tmp', name);
    try {
      await pipeline(chunksOf(artifact.body), createWriteStream(tmp, { flags: 'wx' }));
      const now = this.now();
      const info: ArtifactInfo = {
        name,
        contentType: artifact.contentType,
        sizeBytes: (await stat(tmp)).size,
        createdAt: now,
        expiresAt: now + artifact.ttlMs,
        ...(artifact.downloadName !== undefined ? { downloadName: artifact.downloadName } : {}),
        ...(artifact.attributes !== undefined ? { attributes: artifact.attributes } : {}),
      };
      // The facts file is written last: its presence is what makes the artifact visible.
      await rename(tmp, path.join(this.dir, name));
      await writeFile(this.metaPath(name), JSON.stringify(info));
      if (artifact.cacheKey !== undefined) await writeFile(this.keyPath(artifact.cacheKey), JSON.stringify(info));
      return info;
    } catch (err) {
      await rm(tmp, { force: true });
      await rm(path.join(this.dir, name), { force: true });
      throw err;
    }
  }

  async stat(name: string): Promise<ArtifactInfo | undefined> {
    if (!isArtifactName(name)) return undefined;
    const info = await readInfo(this.metaPath(name));
    return info && info.expiresAt > this.now() ? info : undefined;
  }

  async open(name: string): Promise<OpenArtifact | undefined> {
    const info = await this.stat(name);
    if (!info) return undefined;
    const stream = createReadStream(path.join(this.dir, name));
    // The sweeper may delete the file between stat and open: that is a miss, not a failure.
    const opened = await new Promise<boolean>((resolve) => {
      stream.once('open', () => resolve(true));
      stream.once('error', () => resolve(false));
    });
    return opened ? { info, body: stream } : undefined;
  }

  async findCached(cacheKey: string): Promise<ArtifactInfo | undefined> {
    const info = await readInfo(this.keyPath(cacheKey));
    return info ? this.stat(info.name) : undefined;
  }

  async delete(name: string): Promise<void> {
    if (!isArtifactName(name)) return;
    await rm(this.metaPath(name), { force: true });
    await rm(path.join(this.dir, name), { force: true });
  }

  async sweep(): Promise<number> {
    const now = this.now();
    let removed = 0;
    for (const name of await readdir(this.dir)) {
      if (!isArtifactName(name)) continue;
      const info = await readInfo(this.metaPath(name));
      // Bytes without facts are a write that died between its two renames.
      const orphaned =
        !info &&
        (await stat(path.join(this.dir, name)).then(
          (s) => s.mtimeMs < now - ORPHAN_MS,
          () => true,
        ));
      if (!orphaned && (!info || info.expiresAt > now)) continue;
      await rm(this.metaPath(name), { force: true });
      await rm(path.join(this.dir, name), { force: true });
      removed++;
    }
    for (const entry of await readdir(path.join(this.dir, 'keys'))) {
      const file = path.join(this.dir, 'keys', entry);
      const info = await readInfo(file);
      if (!info || info.expiresAt <= now) await rm(file, { force: true });
    }
    return removed;
  }

  async close(): Promise<void> {}

  private metaPath(name: string): string {
    return path.join(this.dir, `${name}.json`);
  }

  private keyPath(cacheKey: string): string {
    return path.join(this.dir, 'keys', `${createHash('sha256').update(cacheKey).digest('hex')}.json`);
  }
}

/** Older than any write takes. */
const ORPHAN_MS = 10 * 60_000;

async function readInfo(file: string): Promise<ArtifactInfo | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as ArtifactInfo;
  } catch {
    return undefined; // absent, or removed by the sweeper while we read
  }
}
