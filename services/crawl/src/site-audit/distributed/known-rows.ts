import type { FoundPage } from './page-frontier.js';

/**
 * A row as an insert left it: its depth and same-shape chain, or values above them (they can only
 * have gone lower since).
 */
export interface NotedRow {
  url: string;
  depth: number;
  shapeChain: number;
}

/** Rows kept per job (those noted last): a page's navigation links are the same few rows. */
const KNOWN_ROWS_PER_JOB = 4_096;
const KNOWN_JOBS = 16;

/**
 * The rows a frontier handle knows exist, per job and generation (a job's frontier opened again,
 * after a clear by any handle, is another generation): a found page no lower than its row needs no
 * read (docs/decisions/0497-frontier-remembers-known-rows.md).
 */
export class KnownRows {
  private readonly jobs = new Map<string, { generation: string; rows: Map<string, NotedRow> }>();

  /** The pages an insert must look at: new to this handle, or lower than their row was. */
  unknown(jobId: string, generation: string, pages: readonly FoundPage[]): readonly FoundPage[] {
    const job = this.jobs.get(jobId);
    if (!job || job.generation !== generation) return pages;
    // A hit is not moved to the back: a row seen on every page is read again once it is dropped.
    return pages.filter((page) => {
      const row = job.rows.get(page.url);
      return !row || row.depth > page.depth || row.shapeChain > (page.shapeChain ?? 0);
    });
  }

  note(jobId: string, generation: string, rows: readonly NotedRow[]): void {
    let job = this.jobs.get(jobId);
    if (!job || job.generation !== generation) {
      this.jobs.delete(jobId);
      job = { generation, rows: new Map() };
      this.jobs.set(jobId, job);
      for (const oldest of this.jobs.keys()) {
        if (this.jobs.size <= KNOWN_JOBS) break;
        this.jobs.delete(oldest);
      }
    }
    for (const row of rows) {
      job.rows.delete(row.url);
      job.rows.set(row.url, row);
    }
    for (const oldest of job.rows.keys()) {
      if (job.rows.size <= KNOWN_ROWS_PER_JOB) break;
      job.rows.delete(oldest);
    }
  }

  forget(jobId: string): void {
    this.jobs.delete(jobId);
  }
}
