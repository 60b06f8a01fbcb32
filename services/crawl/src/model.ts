/**
 * The crawl service's vocabulary. Links, checked links, pages, progress and results are the proto
 * messages (crawl.proto), under the names the domain code speaks: only their message fields are
 * required here (ts-proto makes them optional), the crawl-only `sources` split off, and the closed
 * value sets the proto carries as strings (link types, severities, job statuses) narrowed to the
 * values crawl.proto's enums name. Job kinds are the crawl's own.
 */

import type { SafeResponse } from '@webutil/kit';
import type * as proto from '@webutil/proto/webutil/crawl/v1/crawl';
import type * as values from '@webutil/proto/webutil/crawl/v1/crawl.fields';
import type { SiteAuditResult } from '@webutil/proto/webutil/crawl/v1/site_audit';
import type { CheckOutcome } from './checking/grade.js';
import type { LinkCollector } from './page/links.js';
import type { HtmlSink } from './page/markdown-links.js';
import type { ScanOptions } from './scan-options.js';

/** Link types of the spec's link records and link items. */
export type LinkType = keyof typeof values.LinkType.values;

export type Severity = keyof typeof values.Severity.values;

/** Where a link was seen in a crawl: the first pages (at most 25) and how many pages in all. */
export interface Sourced {
  sources: string[];
  sourceCount: number;
}

/** A link as found on a page. */
export interface FoundLink extends Omit<proto.ExtractedLink, keyof Sourced | 'type' | 'element'> {
  type: LinkType;
  /** The element the URL was first found on: a, area, or a resource's (img, script, link, ...). */
  element: string;
  /** Found in an `<a>` or `<area>` on the page (a crawl may follow it), not only as a resource. */
  viaAnchor?: boolean;
  /**
   * Link checking only: the distinct fragments (decoded, at most 25) this URL was linked with;
   * `url` is then the URL without its fragment.
   */
  fragments?: string[];
}

/** A link after its check, graded (docs/grading.md). */
export interface CheckedLink extends Omit<proto.LinkRecord, keyof Sourced | 'type' | 'severity' | 'fragments'> {
  fragments?: proto.LinkFragment[];
  type: LinkType;
  severity: Severity;
}

export type LinkCounts = proto.LinkCounts;
export type LinkSummary = proto.LinkSummary;
export interface BreakdownRow extends Omit<proto.StatusBreakdownRow, 'severity'> {
  severity: Severity;
}
export interface CrawledPage extends Omit<proto.CrawledPage, 'severity'> {
  severity: Severity;
}
export type JobError = proto.JobError;

/** The grading of a set of checked links. */
export interface ScoreCard extends Pick<proto.CheckLinksResponse, 'healthScore' | 'grade'> {
  summary: LinkSummary;
  statusBreakdown: BreakdownRow[];
}

/** Links of one page (GET /v1/link-extract). */
export interface PageLinks extends Omit<proto.ExtractResult, 'counts' | 'links'> {
  counts: LinkCounts;
  links: FoundLink[];
  /** Resources were asked for: each link item names its element. */
  withElements?: boolean;
}

/** One page's links checked (POST /v1/broken-links). */
export interface PageCheck extends Omit<proto.CheckLinksResponse, keyof ScoreCard | 'links'>, ScoreCard {
  links: CheckedLink[];
}

/**
 * `bookmarks`: a bookmark check (bookmark-check/), a list of URLs rather than a site. `site-audit`:
 * a broken-link crawl whose pages are audited as they are read (site-audit/).
 */
export type CrawlKind = 'broken-links' | 'link-extract' | 'bookmarks' | 'site-audit';

/** A crawl's options; an extract crawl has no checkFragments and its resources default to false. */
export interface CrawlOptions {
  /** Verify each distinct #fragment against its page's ids and anchor names. */
  checkFragments: boolean;
  /** The request's LinkOptions, checked (scan-options.ts). */
  scan?: ScanOptions;
  /** Sees each page as it is read (a site audit); absent for a plain crawl. */
  observer?: PageObserver;
}

/** What a site audit sees of its crawl: each page's body as it is read, each page once done. */
export interface PageObserver {
  /** The sink a page's HTML is read through: `links` (the page's link collector), or one feeding it. */
  reading(url: string, res: SafeResponse, links: LinkCollector): HtmlSink;
  /** A page fetched (or kept out by robots.txt `refused`), once, with the links read from it. */
  visited(page: ObservedPage): void;
  /** The pages of the site its sitemaps list. */
  sitemap(urls: readonly string[]): void;
}

export interface ObservedPage {
  url: string;
  depth: number;
  fromSitemap: boolean;
  outcome: CheckOutcome;
  /** Read as HTML or Markdown. */
  html: boolean;
  /** A page (parsed, or answered with an error), not a file linked as one. */
  isPage: boolean;
  refused?: string;
  links: readonly FoundLink[];
}

/**
 * A crawl's progress. One shape for both kinds, the broken-link crawl's; the extract crawl's poll
 * shows the subset its spec names (pagesCrawled as pagesScanned). `linksFound` counts by the same
 * rule as the result: every unique link of a broken-link crawl (`totalUniqueLinks`), the counted
 * types of an extract crawl (`counts.total`: no in-page anchors, no non-HTTP schemes).
 */
export type CrawlProgress = proto.BrokenLinkCrawlProgress;

export interface BrokenLinkCrawlResult
  extends Omit<proto.BrokenLinkCrawlResult, keyof ScoreCard | 'links' | 'pages'>,
    ScoreCard {
  links: (CheckedLink & Sourced)[];
  pages: CrawledPage[];
}

export interface LinkExtractCrawlResult extends Omit<PageLinks, 'links'> {
  links: (FoundLink & Sourced)[];
}

export type CrawlResult =
  | { kind: 'broken-links'; result: BrokenLinkCrawlResult }
  | { kind: 'link-extract'; result: LinkExtractCrawlResult }
  | { kind: 'bookmarks'; result: BookmarkCheckResult }
  | { kind: 'site-audit'; result: SiteAuditReport };

/**
 * A site audit's report as stored: each issue with its first affected URLs, the rest in the audit page
 * store (decision 0472).
 */
export type SiteAuditReport = SiteAuditResult;

/** A bookmark check's result (crawl.proto's message, severities narrowed). */
export interface CheckedBookmark extends Omit<proto.CheckedBookmark, 'severity'> {
  severity: Severity;
}
export interface BookmarkCheckResult extends Omit<proto.BookmarkCheckResult, 'bookmarks' | 'statusBreakdown'> {
  statusBreakdown: BreakdownRow[];
  bookmarks: CheckedBookmark[];
}

export type JobStatus = keyof typeof values.JobStatus.values;

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

/** A crawl or list check that cannot produce a result at all (the entry page never answered). */
export class CrawlFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'CrawlFailure';
  }
}
