import zlib from 'node:zlib';
import type { CrawlKind, CrawlProgress } from './crawler.js';

/**
 * Where crawl jobs live between the start call, the worker's events and the polls: the port, and
 * what both adapters (embedded SQLite, mongoose) share. One conformance suite tests them both.
 */

export type JobStatus = 'crawling' | 'done' | 'failed';

export interface JobError {
  code: string;
  message: string;
}

export interface CrawlJob {
  id: string;
  kind: CrawlKind;
  /** The entry URL, normalised. */
  url: string;
  status: JobStatus;
  progress: CrawlProgress;
  /** The crawl result, once done (BrokenLinkCrawlResult or ExtractResult by kind). */
  result?: unknown;
  error?: JobError;
  /** Which try of the job the stored progress belongs to, and its event number within it. */
  attempt: number;
  seq: number;
  createdAt: Date;
  updatedAt: Date;
  /** After this the job is gone, whether or not the store has deleted it yet. */
  expiresAt: Date;
}

export type NewJob = Pick<CrawlJob, 'id' | 'kind' | 'url' | 'progress' | 'createdAt' | 'expiresAt'>;

/** A worker's report; stale ones (an older attempt, or an earlier event) are ignored. */
export interface JobUpdate {
  attempt: number;
  seq: number;
  progress: CrawlProgress;
}

export interface JobStore {
  /** Adds a job in status `crawling`; rejects when the id exists. */
  create(job: NewJob): Promise<void>;
  /** The job, or undefined when unknown or expired (even if not deleted yet). */
  get(id: string, now?: Date): Promise<CrawlJob | undefined>;
  /** Stores progress of a crawling job when (attempt, seq) is newer than the stored one. */
  recordProgress(id: string, update: JobUpdate): Promise<boolean>;
  /** crawling -> done with the result; false when the job is not crawling (first end wins). */
  finish(id: string, update: JobUpdate & { result: unknown }): Promise<boolean>;
  /** crawling -> failed; false when the job is not crawling. */
  fail(id: string, error: JobError, update?: JobUpdate): Promise<boolean>;
  /** Jobs still crawling and not expired (to hand back to workers after a restart). */
  crawling(now?: Date): Promise<CrawlJob[]>;
  /** Deletes expired jobs; returns how many. */
  sweep(now?: Date): Promise<number>;
  close(): Promise<void>;
}

/** Results are kept as gzip'd JSON: a crawl result compresses ten-fold and is read whole. */
export function packResult(result: unknown): Buffer {
  return zlib.gzipSync(JSON.stringify(result));
}

export function unpackResult(packed: Buffer | Uint8Array): unknown {
  return JSON.parse(zlib.gunzipSync(packed).toString('utf8'));
}
