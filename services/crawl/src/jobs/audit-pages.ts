import type { AuditedPage } from '../site-audit/page-checks.js';

/**
 * Where a site audit's per-page results live while the audit runs: the job store's database (a
 * table of the embedded SQLite file, a collection beside the jobs in MongoDB), not the worker's
 * memory (docs/decisions/0471-site-audit-pages-in-the-store.md). One conformance suite tests both
 * adapters.
 */
export interface AuditPageStore {
  /**
   * Stores each page once per job and URL; a URL already stored keeps its first record (a page is
   * never counted twice). Returns how many of `pages` were new.
   */
  add(jobId: string, pages: readonly AuditedPage[], expiresAt: Date): Promise<number>;
  /** The job's pages, by depth then URL, `batch` at a time (the reader never holds more at once). */
  read(jobId: string, batch?: number): AsyncGenerator<AuditedPage[]>;
  /** The stored records of those of `urls` the job has (any order; at most READ_BATCH URLs a call). */
  get(jobId: string, urls: readonly string[]): Promise<AuditedPage[]>;
  /** Pages stored for the job. */
  count(jobId: string): Promise<number>;
  /** Deletes the job's pages (a new try of the audit starts over; a finished one keeps its report). */
  clear(jobId: string): Promise<number>;
  /**
   * Stores affected URLs of the job's report (decision 0472): they stay until the job expires, after
   * its page records are gone, and the issue route pages through them.
   */
  addAffected(jobId: string, rows: readonly StoredAffected[], expiresAt: Date): Promise<void>;
  /** One issue's affected URLs by URL then `seq`, `limit` from `offset`. */
  affected(jobId: string, issueId: string, offset: number, limit: number): Promise<StoredAffected[]>;
  /** Deletes the job's affected URLs (a new try makes its own). */
  clearAffected(jobId: string): Promise<number>;
  /** Deletes pages and affected URLs of expired jobs; returns how many. */
  sweep(now?: Date): Promise<number>;
  close(): Promise<void>;
}

/** One affected URL of an issue of a finished audit. */
export interface StoredAffected {
  issueId: string;
  url: string;
  /** Order among the issue's rows of the same URL (the order they were found in). */
  seq: number;
  detail: string;
  sources: string[];
}

/** Pages a read hands out at once. */
export const READ_BATCH = 500;

/** The stored form of a page: its record as JSON, with the keys the store orders and dedupes by. */
export function pageRecord(page: AuditedPage): string {
  return JSON.stringify(page);
}

export function fromRecord(record: string): AuditedPage {
  return JSON.parse(record) as AuditedPage;
}
