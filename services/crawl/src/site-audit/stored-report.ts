/**
 * The report of an audit made from its page records in the store, in passes over them
 * (docs/decisions/0472-site-audit-report-in-bounded-memory.md): the records are read a batch at a
 * time and never all held. Between passes the process keeps, per page, its number, a few bytes of
 * flags and counts, and its links as page numbers; per distinct title, description and body hash,
 * a count and four URLs; per issue, counts and its first URLs. Every affected URL goes to the store.
 */
import type { SiteAuditResult } from '@webutil/proto/webutil/crawl/v1/site_audit';
import type { AuditPageStore } from '../jobs/audit-pages.js';
import type { BrokenLinkCrawlResult } from '../model.js';
import { checkPage, type Finding } from './page-checks.js';
import { IssueBook, Tallies } from './report.js';
import {
  type AuditLink,
  brokenLinks,
  checkSitePage,
  DuplicateGroups,
  lookupsOf,
  missingFragments,
  type SiteView,
  sitemapFindings,
  sitemapMissing,
} from './site-checks.js';

/** Where the report reads the records from and writes its affected URLs to. */
export interface StoredAudit {
  store: AuditPageStore;
  jobId: string;
  expiresAt: Date;
}

/** Records looked up by URL at once (canonical targets, hreflang alternates, sitemap entries). */
const LOOKUP_BATCH = 500;

/** A growable list of 32-bit integers. */
class IntList {
  data = new Int32Array(1024);
  length = 0;
  push(value: number): void {
    if (this.length === this.data.length) {
      const grown = new Int32Array(this.data.length * 2);
      grown.set(this.data);
      this.data = grown;
    }
    this.data[this.length++] = value;
  }
}

/** The audited pages numbered in the order the store reads them, with their links as numbers. */
class SiteGraph {
  readonly number = new Map<string, number>();
  /** Per page: fetched (not refused by robots.txt). */
  audited = new Uint8Array(0);
  /** Per page: where its links start in `targets`, and how many. */
  private start = new Int32Array(0);
  private count = new Int32Array(0);
  private readonly targets = new IntList();
  incoming = new Int32Array(0);
  /** Clicks from the entry page; -1 when no path of anchors reaches the page. */
  depth = new Int32Array(0);
  entry: string | undefined;
  auditedCount = 0;

  /** Pass 1: numbers each page. */
  note(page: { url: string; depth: number; refused: boolean }): void {
    if (this.number.has(page.url)) return;
    this.number.set(page.url, this.number.size);
    if (this.entry === undefined && page.depth === 0) this.entry = page.url;
  }

  sized(): void {
    const n = this.number.size;
    this.audited = new Uint8Array(n);
    this.start = new Int32Array(n);
    this.count = new Int32Array(n);
    this.incoming = new Int32Array(n);
    this.depth = new Int32Array(n).fill(-1);
  }

  /** Pass 2: each page's links to audited pages. */
  link(page: { url: string; refused: boolean; links: readonly string[] }): void {
    const from = this.number.get(page.url);
    if (from === undefined) return;
    if (!page.refused) {
      this.audited[from] = 1;
      this.auditedCount++;
    }
    this.start[from] = this.targets.length;
    for (const url of page.links) {
      const to = this.number.get(url);
      if (to === undefined) continue;
      this.targets.push(to);
      this.incoming[to] = (this.incoming[to] as number) + 1;
    }
    this.count[from] = this.targets.length - (this.start[from] as number);
  }

  /** Breadth first from the entry page over the links. */
  walk(): void {
    const entry = this.entry === undefined ? undefined : this.number.get(this.entry);
    if (entry === undefined) return;
    this.depth[entry] = 0;
    let level = [entry];
    for (let d = 1; level.length > 0; d++) {
      const next: number[] = [];
      for (const from of level) {
        const start = this.start[from] as number;
        for (let i = start; i < start + (this.count[from] as number); i++) {
          const to = this.targets.data[i] as number;
          if (this.depth[to] !== -1) continue;
          this.depth[to] = d;
          next.push(to);
        }
      }
      level = next;
    }
  }
}

/**
 * The report of the audit's stored pages: `crawled` is the crawl's result (its checked links),
 * `sitemap` the site's pages its sitemaps list, `siteFiles` the findings of robots.txt and the
 * sitemaps. The result lists each issue's first URLs; the store holds them all.
 */
/** What the report reads of the crawl: its counts and caps, and its checked links with their sources. */
export type CrawlForReport = Pick<
  BrokenLinkCrawlResult,
  'url' | 'scannedAt' | 'pagesDiscovered' | 'truncatedPages' | 'totalUniqueLinks' | 'truncatedLinks' | 'linksCutBy'
> & {
  summary: { broken: number };
  /** Every checked link, or (with `linkStatuses`) those with a finding (broken, a missing fragment). */
  links: readonly AuditLink[];
  /** The checked status of links by URL, looked up a batch at a time instead of read from `links`. */
  linkStatuses?: (urls: readonly string[]) => Promise<Map<string, number | undefined>>;
};

export async function reportFromStore(
  entry: URL,
  pagesCap: number,
  crawled: CrawlForReport,
  stored: StoredAudit,
  sitemap: readonly string[],
  siteFiles: readonly Finding[],
): Promise<{ result: SiteAuditResult; findings: ReadonlySet<string> }> {
  const { store, jobId } = stored;
  const graph = new SiteGraph();
  const duplicates = new DuplicateGroups();
  for await (const batch of store.read(jobId))
    for (const page of batch) {
      graph.note(page);
      duplicates.note(page);
    }
  graph.sized();
  for await (const batch of store.read(jobId)) for (const page of batch) graph.link(page);
  graph.walk();

  const entryPage = graph.entry ?? entry.href;
  // Every checked link's status, unless the crawl looks them up a batch at a time.
  let everyLinkStatus: Map<string, number | undefined> | undefined;
  if (!crawled.linkStatuses) {
    everyLinkStatus = new Map();
    for (const link of crawled.links) everyLinkStatus.set(link.url, link.statusCode);
  }
  const book = new IssueBook(graph.number.size, (url) => graph.number.get(url), stored);
  const tallies = new Tallies();
  for await (const batch of store.read(jobId)) {
    const lookups = new Set(batch.flatMap(lookupsOf));
    const records = new Map<string, (typeof batch)[number]>();
    for (const urls of chunks([...lookups], LOOKUP_BATCH))
      for (const page of await store.get(jobId, urls)) records.set(page.url, page);
    // The statuses a canonical target that is no audited page is judged by.
    const linkStatus =
      everyLinkStatus ?? (await crawled.linkStatuses?.([...lookups].filter((url) => !records.has(url)))) ?? new Map();
    const view: SiteView = {
      entry: entryPage,
      incoming: (url) => {
        const n = graph.number.get(url);
        return n === undefined ? 0 : (graph.incoming[n] as number);
      },
      depth: (url) => {
        const n = graph.number.get(url);
        const d = n === undefined ? -1 : (graph.depth[n] as number);
        return d === -1 ? undefined : d;
      },
      page: (url) => records.get(url),
      linkStatus: (url) => linkStatus.get(url),
    };
    // The order of the findings of one issue and URL is the order issuesOf keeps: page checks, then site checks.
    for (const page of batch) for (const finding of checkPage(page)) book.add(finding);
    for (const page of batch) {
      for (const finding of checkSitePage(page, view)) book.add(finding);
      for (const finding of duplicates.findingsOf(page)) book.add(finding);
      tallies.add(page, view.depth(page.url));
    }
    await book.flush();
  }
  if (sitemap.length === 0) book.add(sitemapMissing(entryPage));
  else
    for (const urls of chunks([...new Set(sitemap)], LOOKUP_BATCH)) {
      const records = new Map((await store.get(jobId, urls)).map((page) => [page.url, page]));
      for (const url of urls) for (const finding of sitemapFindings(url, records.get(url))) book.add(finding);
      await book.flush();
    }
  for (const finding of [...brokenLinks(crawled.links), ...missingFragments(crawled.links), ...siteFiles])
    book.add(finding);
  await book.flush(true);

  const { issues, healthScore, categories } = book.report((n) => graph.audited[n] === 1, graph.auditedCount);
  const result: SiteAuditResult = {
    url: crawled.url,
    scannedAt: crawled.scannedAt,
    pagesAudited: graph.auditedCount,
    pagesDiscovered: crawled.pagesDiscovered,
    pagesCap,
    truncatedPages: crawled.truncatedPages,
    healthScore,
    categories,
    issues,
    ...tallies.rows(),
    totalUniqueLinks: crawled.totalUniqueLinks,
    brokenLinks: crawled.summary.broken,
    cutBy: [...(crawled.truncatedLinks ? ['check_cap'] : []), ...crawled.linksCutBy],
    sitemapFound: sitemap.length > 0,
    sitemapUrlCount: sitemap.length,
    comparison: undefined,
  };
  return { result, findings: book.keys };
}

function* chunks<T>(items: readonly T[], size: number): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}
