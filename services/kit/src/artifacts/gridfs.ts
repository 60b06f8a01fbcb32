import { pipeline } from 'node:stream/promises';
import mongoose, { type Connection } from 'mongoose';
import {
  type ArtifactInfo,
  type ArtifactStore,
  chunksOf,
  isArtifactName,
  type NewArtifact,
  newArtifactName,
  type OpenArtifact,
} from './store.js';

interface ArtifactMetadata {
  contentType: string;
  /** The store's clock, not GridFS's uploadDate, so tests that move the clock see one time. */
  createdAt: Date;
  expiresAt: Date;
  downloadName?: string;
  cacheKey?: string;
  attributes?: Record<string, string>;
}

type FileDoc = mongoose.mongo.GridFSFile & { metadata?: ArtifactMetadata };

/**
 * Artifacts in MongoDB GridFS (the cluster store), so any replica serves any download. Expiry is
 * checked on every read and enforced by sweep(): a TTL index on the files collection would orphan
 * the chunks. Only what MongoDB and jongodb share: inserts, finds with filters and sort, deletes.
 */
export class GridFsArtifactStore implements ArtifactStore {
  private constructor(
    private readonly connection: Connection,
    private readonly bucket: mongoose.mongo.GridFSBucket,
    private readonly now: () => number,
  ) {}

  static async connect(
    url: string,
    bucketName: string,
    options: { dbName?: string; now?: () => number } = {},
  ): Promise<GridFsArtifactStore> {
    const connection = await mongoose
      .createConnection(url, {
        autoCreate: false,
        autoIndex: false,
        ...(options.dbName ? { dbName: options.dbName } : {}),
      })
      .asPromise();
    const db = connection.db;
    if (!db) throw new Error('MongoDB connection has no database');
    await db
      .collection(`${bucketName}.files`)
      .createIndexes([
        { key: { filename: 1, uploadDate: 1 } },
        { key: { 'metadata.cacheKey': 1, uploadDate: -1 } },
        { key: { 'metadata.expiresAt': 1 } },
      ]);
    await db.collection(`${bucketName}.chunks`).createIndexes([{ key: { files_id: 1, n: 1 }, unique: true }]);
    return new GridFsArtifactStore(
      connection,
      new mongoose.mongo.GridFSBucket(db, { bucketName }),
      options.now ?? Date.now,
    );
  }

  async put(artifact: NewArtifact): Promise<ArtifactInfo> {
    const name = newArtifactName(artifact.extension);
    const now = this.now();
    const metadata: ArtifactMetadata = {
      contentType: artifact.contentType,
      createdAt: new Date(now),
      expiresAt: new Date(now + artifact.ttlMs),
      ...(artifact.downloadName !== undefined ? { downloadName: artifact.downloadName } : {}),
      ...(artifact.cacheKey !== undefined ? { cacheKey: artifact.cacheKey } : {}),
      ...(artifact.attributes !== undefined ? { attributes: artifact.attributes } : {}),
    };
    const upload = this.bucket.openUploadStream(name, { metadata });
    try {
      await pipeline(chunksOf(artifact.body), upload);
    } catch (err) {
      // Deletes the chunks written so far.
      await upload.abort().catch(() => undefined);
      throw err;
    }
    return infoOf({ filename: name, length: upload.length, metadata });
  }

  async stat(name: string): Promise<ArtifactInfo | undefined> {
    const file = await this.liveFile(name);
    return file && infoOf(file);
  }

  async open(name: string): Promise<OpenArtifact | undefined> {
    const file = await this.liveFile(name);
    if (!file) return undefined;
    return { info: infoOf(file), body: this.bucket.openDownloadStream(file._id) };
  }

  async findCached(cacheKey: string): Promise<ArtifactInfo | undefined> {
    const [file] = (await this.bucket
      .find({ 'metadata.cacheKey': cacheKey })
      .sort({ uploadDate: -1, _id: -1 })
      .limit(1)
      .toArray()) as FileDoc[];
    const info = file && infoOf(file);
    return info && info.expiresAt > this.now() ? info : undefined;
  }

  async delete(name: string): Promise<void> {
    if (!isArtifactName(name)) return;
    for (const file of await this.bucket.find({ filename: name }).toArray()) {
      // Another replica may have deleted it first.
      await this.bucket.delete(file._id).catch(() => undefined);
    }
  }

  async sweep(): Promise<number> {
    const expired = await this.bucket.find({ 'metadata.expiresAt': { $lte: new Date(this.now()) } }).toArray();
    let removed = 0;
    for (const file of expired) {
      // Another replica's sweeper may have deleted it first.
      if (
        await this.bucket.delete(file._id).then(
          () => true,
          () => false,
        )
      )
        removed++;
    }
    return removed;
  }

  async close(): Promise<void> {
    await this.connection.close();
  }

  private async liveFile(name: string): Promise<FileDoc | undefined> {
    if (!isArtifactName(name)) return undefined;
    const [file] = (await this.bucket
      .find({ filename: name, 'metadata.expiresAt': { $gt: new Date(this.now()) } })
      .limit(1)
      .toArray()) as FileDoc[];
    return file;
  }
}

function infoOf(file: Pick<FileDoc, 'filename' | 'length' | 'metadata'>): ArtifactInfo {
  const metadata = file.metadata as ArtifactMetadata;
  return {
    name: file.filename,
    contentType: metadata.contentType,
    sizeBytes: file.length,
    createdAt: new Date(metadata.createdAt).getTime(),
    expiresAt: new Date(metadata.expiresAt).getTime(),
    ...(metadata.downloadName !== undefined ? { downloadName: metadata.downloadName } : {}),
    ...(metadata.attributes !== undefined ? { attributes: metadata.attributes } : {}),
  };
}
