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
  /** The caller's weight in the workers' fair shares (its plan's crawl bound); absent: 1. */
  weight?: number;
  /** How many times a worker took the job up (claim); 0 while it is queued. */
  claims: number;
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
  | 'id'
  | 'kind'
  | 'url'
  | 'caller'
  | 'weight'
  | 'checkFragments'
  | 'scan'
  | 'input'
  | 'progress'
  | 'createdAt'
  | 'expiresAt'
>;

export type Claim = { turn: 'run'; attempt: number } | { turn: 'wait' } | { turn: 'gone' };

/** A job crawling and not expired, as the fair share counts it. */
export interface ActiveJob {
  caller: string;
  weight?: number | null;
  claims?: number | null;
}

/**
 * Whether a queued job of `caller` must leave the worker to another caller: one with a job still
 * queued that holds fewer workers for its weight (max-min fairness; ties go to whoever asks).
 */
export function owedToAnother(caller: string, active: readonly ActiveJob[]): boolean {
  const callers = new Map<string, { running: number; weight: number; queued: boolean }>();
  for (const job of active) {
    const entry = callers.get(job.caller) ?? { running: 0, weight: 1, queued: false };
    if ((job.claims ?? 0) > 0) entry.running++;
    else entry.queued = true;
    entry.weight = Math.max(entry.weight, job.weight ?? 1);
    callers.set(job.caller, entry);
  }
  const own = callers.get(caller);
  if (!own) return false;
  const load = own.running / own.weight;
  for (const [other, entry] of callers) {
    if (other !== caller && entry.queued && entry.running / entry.weight < load) return true;
  }
  return false;
}

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
  /**
   * A worker's turn at a job it was handed: `run` (counted as a claim; `attempt` is which try),
   * `wait` when another caller with a job queued holds fewer workers for its weight (the
   * worker hands the job back for a moment and takes the next), `gone` when it is not crawling.
   * A job taken up before (its worker died) is run again at once. Across replicas the count is the
   * store's, so workers everywhere share out fairly (docs/decisions/0262-fair-crawl-workers.md).
   */
  claim(id: string, now?: Date): Promise<Claim>;
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
