/**
 * A distributed site audit's frontier in the job store (docs/decisions/0491-distributed-audit-frontier.md):
 * one row per job and page URL, whichever replica finds the page first, so no page is queued twice;
 * a page worker on any replica leases its row before fetching and marks it done after storing the
 * page's record, so a page is fetched once unless its replica died holding the lease. One
 * conformance suite tests both adapters (SQLite on one machine, MongoDB in a cluster).
 */

/** A page found on the site (or in its sitemap), at the depth it was found. */
export interface FoundPage {
  url: string;
  depth: number;
  fromSitemap: boolean;
  /** Same-shape hops that led to the page (the crawler-trap guard, site-crawl/frontier.ts); 0 if absent. */
  shapeChain?: number;
  /** Kept on the row from its insert until `finish` replaces it (JSON: what its inserter found). */
  payload?: string;
  /** Admitted already done, its payload its result (nothing to fetch: a link row the report grades). */
  done?: boolean;
}

/** Rows admitted by an insert go to their inserter at once (it works on them now): no claim. */
export interface LeaseTo {
  owner: string;
  leaseMs: number;
}

/** A row a page worker leased: the page to fetch, and which lease of it this is (1 the first time). */
export interface LeasedPage extends FoundPage {
  lease: number;
}

export interface RowResult {
  url: string;
  result: string;
  done: boolean;
}

export interface FrontierCounts {
  /** Admitted, no worker holds it yet (or its work item is on the way). */
  queued: number;
  /** A worker holds a live or expired lease. */
  leased: number;
  done: number;
  /** Found past the page cap: never fetched (the audit is truncated). */
  over: number;
}

/**
 * The job's rows as its counters tell them: cheap to read (no row is counted), exact unless a
 * replica died between a row's change and its counter's, which `counts` then tells right.
 */
export interface FrontierTally {
  /** Admitted rows not done yet (queued or leased). */
  open: number;
  done: number;
  over: number;
}

/** The rows `insert` admitted, and how many it found past the cap. */
export interface Admitted {
  /**
   * Pages new to the job and under its cap: the caller, alone, publishes their work items (or works
   * on them: inserted leased to it); rows inserted done are among them. Beside them, rows found
   * earlier over the cap that this insert found room for (MongoDB: room given back by a replica
   * that lost an insert race); the caller publishes those too.
   */
  queued: FoundPage[];
  over: number;
}

export interface PageFrontier {
  /**
   * Creates the job's frontier with its page cap (idempotent: a second call keeps the first cap).
   * Pages admitted never exceed the cap, whichever replicas insert them (a conditional increment).
   */
  open(jobId: string, pageCap: number, expiresAt: Date): Promise<void>;
  /** Sets what every worker needs to know of the job (JSON: its site, options); the last set stands. */
  setContext(jobId: string, context: string): Promise<void>;
  /** The job's context; undefined before it is set, or once the frontier is cleared. */
  context(jobId: string): Promise<string | undefined>;
  /**
   * Inserts the pages not yet known to the job (known ones keep the lower depth and same-shape
   * chain: a page not read yet that a shorter path reaches is no trap's). New pages are
   * admitted while the job's count is under its cap; the rest are kept as `over`. With `leaseTo`,
   * the rows admitted are leased to that owner (lease 1) rather than queued.
   */
  insert(jobId: string, pages: readonly FoundPage[], expiresAt: Date, leaseTo?: LeaseTo): Promise<Admitted>;
  /**
   * Leases a page for `leaseMs`: a queued row, or a leased one whose lease ran out (its worker is
   * presumed dead). Undefined when the page is done, held by a live lease, over the cap, or unknown.
   */
  claim(jobId: string, url: string, owner: string, leaseMs: number, now?: Date): Promise<LeasedPage | undefined>;
  /** Extends `owner`'s leases of these pages (a live worker's keep-alive); returns how many it still holds. */
  renew(jobId: string, urls: readonly string[], owner: string, leaseMs: number, now?: Date): Promise<number>;
  /**
   * Marks the page done when `owner` holds its lease; false when another worker took it over (its
   * lease had run out), whose record then stands as the page's (the page store keeps the first).
   */
  finish(jobId: string, url: string, owner: string, result?: string): Promise<boolean>;
  /**
   * `finish` of a row found to be no page (a file, a page robots.txt disallows, a redirect's landing
   * row): the page cap counts pages, so its room goes back and the next row over the cap (lowest
   * depth, then first found) is admitted. The rows admitted (the caller publishes them), or
   * undefined when the row was not `owner`'s to finish.
   */
  finishNoPage(jobId: string, url: string, owner: string, result?: string): Promise<FoundPage[] | undefined>;
  /**
   * What rows carry (JSON), `batch` at a time, by URL: a finished row's result, or an unfinished
   * row's payload (`done` false: its worker never finished it).
   */
  results(jobId: string, batch?: number): AsyncGenerator<RowResult[]>;
  /** What the rows of these URLs carry, as `results` gives it; a URL with no row or nothing on it is left out. */
  resultsOf(jobId: string, urls: readonly string[]): Promise<RowResult[]>;
  /** Every row counted: exact, and a scan of the job's rows on a server without counted indexes. */
  counts(jobId: string): Promise<FrontierCounts>;
  /** The job's counters (FrontierTally): what the coordinator watches while pages are read. */
  tally(jobId: string): Promise<FrontierTally>;
  /**
   * Pages whose work item may be lost: queued rows inserted before `queuedBefore` and leased rows
   * whose lease ran out by `now` (up to `limit`). The coordinator publishes them again; a row done
   * meanwhile is skipped by the worker's claim.
   */
  stranded(jobId: string, queuedBefore: Date, now: Date, limit: number): Promise<string[]>;
  /** Deletes the job's frontier (a new try starts over; an ended audit needs it no more). */
  clear(jobId: string): Promise<void>;
  /** Deletes the frontiers of expired jobs; returns how many rows. */
  sweep(now?: Date): Promise<number>;
  close(): Promise<void>;
}
