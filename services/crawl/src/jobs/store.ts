import zlib from 'node:zlib';
import type { CrawlJobView, CrawlProgress, CrawlResult, JobError } from '../model.js';
import type { ScanOptions } from '../scan-options.js';

/**
 * Where crawl jobs live between the start call, the worker's events and the polls: the port, and
 * what both adapters (embedded SQLite, mongoose) share. One conformance suite tests them both.
 */

/** A stored job: what a poll sees, and the bookkeeping of its tries. */
export interface CrawlJob extends CrawlJobView {
  /** The entry URL, normalised. */
  url: string;
  /** Who started it (the start's CrawlCaller key); absent for an internal consumer's start. */
  caller?: string;
  /** A broken-link crawl's checkFragments option (absent: false). */
  checkFragments?: boolean;
  /** The start's LinkOptions (absent: none); never shown by a poll. */
  scan?: ScanOptions;
  /** What a job of a list (a bookmark check) works on, packed (gzip'd JSON); absent for a site crawl. */
  input?: Buffer;
  /** Which try of the job the stored progress belongs to, and its event number within it. */
  attempt: number;
  seq: number;
  createdAt: Date;
  updatedAt: Date;
  /** After this the job is gone, whether or not the store has deleted it yet. */
  expiresAt: Date;
}

export type NewJob = Pick<
  CrawlJob,
  'id' | 'kind' | 'url' | 'caller' | 'checkFragments' | 'scan' | 'input' | 'progress' | 'createdAt' | 'expiresAt'
>;

/** A worker's report; stale ones (an older attempt, or an earlier event) are ignored. */
export interface JobUpdate {
  attempt: number;
  seq: number;
  progress: CrawlProgress;
}

export interface JobStore {
  /**
   * Adds a job in status `crawling`; rejects when the id exists. With `perCaller`, a job whose
   * caller already has that many jobs crawling (and not expired) is not added, and nothing is
   * stored: false. Counted in the store, so the bound holds across replicas.
   */
  create(job: NewJob, perCaller?: number): Promise<boolean>;
  /** The job, or undefined when unknown or expired (even if not deleted yet). */
  get(id: string, now?: Date): Promise<CrawlJob | undefined>;
  /** Stores progress of a crawling job when (attempt, seq) is newer than the stored one. */
  recordProgress(id: string, update: JobUpdate): Promise<boolean>;
  /**
   * crawling -> done with the result (as packed by the worker); false when the job is not crawling
   * (first end wins).
   */
  finish(id: string, update: JobUpdate & { result: PackedResult }): Promise<boolean>;
  /** crawling -> failed; false when the job is not crawling. */
  fail(id: string, error: JobError, update?: JobUpdate): Promise<boolean>;
  /**
   * Deletes a job no worker has reported on (still crawling, attempt 0): a start that could not be
   * queued leaves nothing behind. False when it is gone or a worker already reported.
   */
  discard(id: string): Promise<boolean>;
  /** Jobs still crawling and not expired (to hand back to workers after a restart). */
  crawling(now?: Date): Promise<CrawlJob[]>;
  /** Deletes expired jobs; returns how many. */
  sweep(now?: Date): Promise<number>;
  close(): Promise<void>;
}

/**
 * A crawl result as it travels and rests: gzip'd JSON (a result compresses ten-fold and is read
 * whole). The worker packs it once; the transport and the store carry the bytes as they are; a
 * poll unpacks it once.
 */
export type PackedResult = Buffer & { readonly __packed: 'CrawlResult' };

/**
 * Packing is on the path from a crawl's last answer to its job reading `done`, so it compresses
 * fast (level 1) rather than small: the default level took several times longer for a slightly
 * smaller result (docs/decisions/0030-crawl-job-transport.md).
 */
const PACK_LEVEL = 1;

export function packResult(result: CrawlResult): PackedResult {
  return zlib.gzipSync(JSON.stringify(result), { level: PACK_LEVEL }) as PackedResult;
}

export function asPacked(bytes: Buffer | Uint8Array): PackedResult {
  return (
    Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  ) as PackedResult;
}

export function unpackResult(packed: PackedResult): CrawlResult {
  return JSON.parse(zlib.gunzipSync(packed).toString('utf8')) as CrawlResult;
}
