/**
 * The crawl service's own vocabulary: links, checked links, pages, progress and results. The
 * domain code speaks only these; server.ts maps them to the proto messages, once.
 */

/** Link types of the spec's link records and link items. */
export type LinkType = 'internal' | 'external' | 'mailto' | 'tel' | 'anchor' | 'other';

/** A link as found on a page. */
export interface FoundLink {
  /** Resolved absolute URL; the raw href for non-HTTP schemes. */
  url: string;
  originalHref: string;
  text: string;
  rel: string | undefined;
  type: LinkType;
  /** URL scheme without the colon. */
  scheme: string;
}

export type Severity = 'ok' | 'warning' | 'broken' | 'info';

/** A link after its check, graded (docs/grading.md). */
export interface CheckedLink {
  url: string;
  originalHref: string;
  text: string;
  type: LinkType;
  rel: string | undefined;
  /** Final status after redirects; absent when no answer came. */
  statusCode: number | undefined;
  statusText: string;
  severity: Severity;
  reason: string;
  category: string;
  redirected: boolean;
  finalUrl: string | undefined;
  responseTimeMs: number | undefined;
  errorCode: string | undefined;
}

/** Where a link was seen in a crawl: the first pages (at most 25) and how many pages in all. */
export interface Sourced {
  sources: string[];
  sourceCount: number;
}

export interface LinkCounts {
  total: number;
  internal: number;
  external: number;
  mailto: number;
  tel: number;
}

export interface LinkSummary {
  ok: number;
  warnings: number;
  broken: number;
  info: number;
  internal: number;
  external: number;
}

export interface BreakdownRow {
  code: string;
  label: string;
  severity: Severity;
  count: number;
}

export interface ScoreCard {
  healthScore: number;
  grade: string;
  summary: LinkSummary;
  statusBreakdown: BreakdownRow[];
}

/** Links of one page (GET /v1/link-extract). */
export interface PageLinks {
  url: string;
  scannedAt: string;
  totalLinks: number;
  truncated: boolean;
  counts: LinkCounts;
  links: FoundLink[];
}

/** One page's links checked (POST /v1/broken-links). */
export interface PageCheck extends ScoreCard {
  url: string;
  scannedAt: string;
  totalLinks: number;
  checkedLinks: number;
  truncated: boolean;
  links: CheckedLink[];
}

export type CrawlKind = 'broken-links' | 'link-extract';

/**
 * A crawl's progress. One shape for both kinds; the extract crawl's poll shows the subset its
 * spec names (pagesCrawled as pagesScanned). `linksFound` counts by the same rule as the result:
 * every unique link of a broken-link crawl (`totalUniqueLinks`), the counted types of an extract
 * crawl (`counts.total`: no in-page anchors, no non-HTTP schemes).
 */
export interface CrawlProgress {
  phase: string;
  message: string;
  sitemapFound: boolean;
  sitemapUrlCount: number;
  pagesCrawled: number;
  pagesDiscovered: number;
  pagesCap: number;
  linksFound: number;
  linksChecked: number;
  linksTotal: number;
}

/** A page a crawl fetched. */
export interface CrawledPage {
  url: string;
  statusCode: number | undefined;
  statusText: string;
  severity: Severity;
  linksOnPage: number;
  /** Breadth-first depth from the entry URL. */
  depth: number;
  fromSitemap: boolean;
}

export interface BrokenLinkCrawlResult extends ScoreCard {
  url: string;
  scannedAt: string;
  pagesCrawled: number;
  pagesDiscovered: number;
  totalUniqueLinks: number;
  truncatedPages: boolean;
  truncatedLinks: boolean;
  links: (CheckedLink & Sourced)[];
  pages: CrawledPage[];
}

export interface LinkExtractCrawlResult {
  url: string;
  scannedAt: string;
  totalLinks: number;
  truncated: boolean;
  counts: LinkCounts;
  links: (FoundLink & Sourced)[];
}

export type CrawlResult =
  | { kind: 'broken-links'; result: BrokenLinkCrawlResult }
  | { kind: 'link-extract'; result: LinkExtractCrawlResult };

export type JobStatus = 'crawling' | 'done' | 'failed';

export interface JobError {
  code: string;
  message: string;
}

/** A crawl job as a poll sees it. */
export interface CrawlJobView {
  id: string;
  kind: CrawlKind;
  status: JobStatus;
  progress: CrawlProgress;
  /** Present once the job is done. */
  result?: CrawlResult;
  error?: JobError;
}
