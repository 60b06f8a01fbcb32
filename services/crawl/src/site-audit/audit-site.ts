/**
 * One site audit: a broken-link crawl (site-crawl/crawler.ts) up to the audit's page cap and time
 * budget, each page's facts read from the same fetch as its links (page-facts.ts), then the page
 * and site checks and the report. Each page's record goes to the job store as it is audited
 * (jobs/audit-pages.ts); the report is made from the stored records in passes (stored-report.ts).
 */
import type { SiteAuditResult } from '@webutil/proto/webutil/crawl/v1/site_audit';
import type { AuditPageStore } from '../jobs/audit-pages.js';
import type { CrawlOptions, CrawlProgress, ObservedPage, PageObserver } from '../model.js';
import { pageOf } from '../page/page-url.js';
import { type CrawlDeps, crawlSite } from '../site-crawl/crawler.js';
import { noteFindings } from './compare-audits.js';
import type { AuditedPage } from './page-checks.js';
import { type PageFacts, PageFactsReader } from './page-facts.js';
import { checkSiteFiles } from './site-files.js';
import { type SiteServicesOf, siteLevelChecks } from './site-services.js';
import { reportFromStore } from './stored-report.js';

/** The smallest time budget of an audit (a spec crawl's 6 minutes), and what each page adds beyond 250. */
const BASE_BUDGET_MS = 6 * 60_000;
const BUDGET_PER_PAGE_MS = 150;
/** Links checked per audited page at most, on average (a spec crawl: 1,500 for 250 pages). */
const CHECKED_LINKS_PER_PAGE = 6;

/** An audit's time budget for its page cap: a crawl's 6 minutes, plus 150 ms for each page past 250. */
export function auditBudgetMs(pagesCap: number): number {
  return BASE_BUDGET_MS + Math.max(0, pagesCap - 250) * BUDGET_PER_PAGE_MS;
}

/** The crawl limits of an audit of `pagesCap` pages. */
export function auditLimits(deps: CrawlDeps, pagesCap: number): CrawlDeps {
  const { limits } = deps;
  return {
    ...deps,
    limits: {
      ...limits,
      pages: pagesCap,
      timeBudgetMs: Math.max(limits.timeBudgetMs, auditBudgetMs(pagesCap)),
      checkedLinks: Math.max(limits.checkedLinks, pagesCap * CHECKED_LINKS_PER_PAGE),
      frontierPages: Math.max(limits.frontierPages, pagesCap * 2),
    },
  };
}

/** Where an audit's page records go: the job's pages in the store. */
export interface AuditPagesOf {
  store: AuditPageStore;
  jobId: string;
  /** The job's expiry: its pages go with it when a crashed try leaves them behind. */
  expiresAt: Date;
}

/** Page records written to the store in one go. */
const WRITE_BATCH = 100;

/** Collects what the crawl shows of each page and writes it to the store a batch at a time. */
class AuditObserver implements PageObserver {
  sitemapUrls: readonly string[] = [];
  private readonly reading_ = new Map<string, PageFactsReader>();
  private batch: AuditedPage[] = [];
  /** The writes so far, one after another; a failed write fails the audit when it ends. */
  private written: Promise<void> = Promise.resolve();
  private failure: unknown;

  constructor(
    private readonly site: URL,
    private readonly out: AuditPagesOf,
  ) {}

  reading(url: string, res: Parameters<PageObserver['reading']>[1], links: Parameters<PageObserver['reading']>[2]) {
    const reader = new PageFactsReader(links, res);
    this.reading_.set(url, reader);
    return reader;
  }

  visited(page: ObservedPage): void {
    const facts: PageFacts | undefined = this.reading_.get(page.url)?.facts;
    this.reading_.delete(page.url);
    if (!page.isPage && !page.refused) return;
    const targets = new Set<string>();
    for (const link of page.links) {
      if (link.type !== 'internal' || !link.viaAnchor) continue;
      const target = pageOf(link.url, this.site);
      if (target && target !== page.url) targets.add(target);
    }
    const { outcome } = page;
    this.batch.push({
      url: page.url,
      depth: page.depth,
      fromSitemap: page.fromSitemap,
      status: outcome.status,
      error: outcome.error?.message,
      redirects: outcome.redirects,
      redirectTrouble: outcome.redirectTrouble,
      finalUrl: outcome.finalUrl,
      refused: page.refused !== undefined,
      facts: page.html ? facts : undefined,
      links: [...targets],
    });
    if (this.batch.length >= WRITE_BATCH) this.write();
  }

  /** Every page visited so far, stored. */
  async flush(): Promise<void> {
    this.write();
    await this.written;
    if (this.failure !== undefined) throw this.failure;
  }

  /** Resolves once no write is in flight, whether or not they worked. */
  async settled(): Promise<void> {
    await this.written;
  }

  private write(): void {
    const pages = this.batch;
    this.batch = [];
    if (pages.length === 0) return;
    const { store, jobId, expiresAt } = this.out;
    this.written = this.written.then(
      () => store.add(jobId, pages, expiresAt).then(() => undefined),
      (err: unknown) => {
        this.failure ??= err;
      },
    );
  }

  sitemap(urls: readonly string[]): void {
    this.sitemapUrls = urls;
  }
}

export async function auditSite(
  entry: URL,
  pagesCap: number,
  deps: CrawlDeps,
  onProgress: (progress: CrawlProgress) => void,
  signal: AbortSignal,
  options: CrawlOptions,
  out: AuditPagesOf,
  services?: SiteServicesOf,
): Promise<SiteAuditResult> {
  // The site-level checks of other services run beside the crawl; none of them fails the audit.
  const siteChecks = siteLevelChecks(entry, services, out);
  // A new try starts over: what an interrupted one stored is not this crawl's.
  await out.store.clear(out.jobId);
  await out.store.clearAffected(out.jobId);
  const observer = new AuditObserver(entry, out);
  let reported = false;
  try {
    const crawl = await crawlSite('broken-links', entry, auditLimits(deps, pagesCap), onProgress, signal, {
      ...options,
      scan: { ...options.scan, maxPages: pagesCap },
      observer,
    });
    if (crawl.kind !== 'broken-links') throw new Error('a site audit crawls as a broken-link crawl');
    await observer.flush();
    const files = await checkSiteFiles(entry, deps, signal);
    const site = await siteChecks;
    const { result, findings } = await reportFromStore(entry, pagesCap, crawl.result, out, observer.sitemapUrls, [
      ...files,
      ...site.findings,
    ]);
    reported = true;
    return { ...noteFindings(result, findings), site: site.site };
  } finally {
    // The report carries what the pages showed: their records go once it is made (or the try failed).
    await observer.settled();
    await out.store.clear(out.jobId).catch(() => undefined);
    // A failed try's affected URLs go too (a finished one's stay with the job until it expires).
    if (!reported) await out.store.clearAffected(out.jobId).catch(() => undefined);
  }
}
