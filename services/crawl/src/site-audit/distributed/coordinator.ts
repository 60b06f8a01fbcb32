/**
 * A site audit spread over every crawl replica (docs/decisions/0491-distributed-audit-frontier.md):
 * the job's runner coordinates. It opens the job's frontier in the store, audits the entry page
 * itself (with the page workers' code), seeds the sitemap's pages, and waits while every replica's
 * page workers take the pages as work items; it publishes again any page whose item may be lost,
 * and ends the audit when no page is queued or leased (or the time budget ends it). The report is
 * then made from the stored records, as the one-worker audit's is.
 */
import type { SiteAuditResult } from '@webutil/proto/webutil/crawl/v1/site_audit';
import { MISSING_ANCHOR } from '../../checking/grade.js';
import type { AuditPageStore } from '../../jobs/audit-pages.js';
import { CrawlFailure, type CrawlOptions, type CrawlProgress } from '../../model.js';
import { MAX_FRAGMENTS_PER_LINK } from '../../page/links.js';
import { pageOf } from '../../page/page-url.js';
import type { CrawlDeps } from '../../site-crawl/crawler.js';
import { checkingMessage, crawlingMessage, endMessage, nLinks, nPages } from '../../site-crawl/progress-messages.js';
import { discoverSitemaps } from '../../site-crawl/sitemap.js';
import { type AuditPagesOf, auditLimits } from '../audit-site.js';
import { noteFindings } from '../compare-audits.js';
import type { AuditedPage } from '../page-checks.js';
import type { AuditLink } from '../site-checks.js';
import { checkSiteFiles } from '../site-files.js';
import { type SiteLevel, type SiteServicesOf, siteLevelChecks } from '../site-services.js';
import { reportFromStore } from '../stored-report.js';
import type { HostBudget } from './host-budget.js';
import { FragmentCursor, GRADE_BATCH, gradeLinkRows, linkStatuses } from './link-grades.js';
import type { PageFrontier } from './page-frontier.js';
import type { PageWorkQueue } from './page-work.js';
import {
  type AuditContext,
  type AuditedVisit,
  type AuditPageWorker,
  anchorsOf,
  fragmentsOf,
  type JobRuntime,
  linkKey,
  linksOf,
} from './page-worker.js';

export interface DistributedAuditDeps {
  frontier: PageFrontier;
  work: PageWorkQueue;
  /** This replica's page workers (the coordinator audits the entry page with them). */
  worker: AuditPageWorker;
  /** Lease of a page row: a page held longer by a silent replica is published again. */
  leaseMs: number;
  /** Hosts' politeness held with the other replicas (decision 0494): the site files are read through it too. */
  budget?: HostBudget;
}

/** How often the coordinator looks at the frontier (at once when this replica's page workers go idle). */
const POLL_MS = 250;
/**
 * How often it counts the rows themselves: the counters it watches between (`tally`) miss a row a
 * replica changed just before it died, and its last look at a job that seems done counts too.
 */
const COUNT_EVERY_MS = 10_000;

export async function auditSiteDistributed(
  entry: URL,
  pagesCap: number,
  crawlDeps: CrawlDeps,
  onProgress: (progress: CrawlProgress) => void,
  signal: AbortSignal,
  options: CrawlOptions,
  out: AuditPagesOf,
  d: DistributedAuditDeps,
  attempt: number,
  services?: SiteServicesOf,
): Promise<SiteAuditResult> {
  // The site-level checks of other services run beside the crawl; none of them fails the audit.
  const siteChecks = siteLevelChecks(entry, services, out);
  const { frontier } = d;
  const { jobId } = out;
  const links = linksOf(jobId);
  const spaces = [jobId, links, anchorsOf(jobId), fragmentsOf(jobId)];
  const limits = auditLimits(crawlDeps, pagesCap).limits;
  const pageCap = Math.min(pagesCap, options.scan?.maxPages ?? pagesCap);
  let progress: CrawlProgress = {
    phase: 'sitemap',
    message: 'Reading robots.txt and sitemaps',
    sitemapFound: false,
    sitemapUrlCount: 0,
    pagesCrawled: 0,
    pagesDiscovered: 0,
    pagesCap: pageCap,
    linksFound: 0,
    linksChecked: 0,
    linksTotal: 0,
  };
  const report_ = (change: Partial<CrawlProgress>) => {
    progress = { ...progress, ...change };
    onProgress(progress);
  };
  report_({});
  // A later try of a job whose entry page was audited resumes: the frontier and records stay.
  const stored = attempt > 1 ? await frontier.context(jobId) : undefined;
  let context: AuditContext;
  if (stored) context = JSON.parse(stored) as AuditContext;
  else {
    await Promise.all([
      ...spaces.map((space) => frontier.clear(space)),
      out.store.clear(jobId),
      out.store.clearAffected(jobId),
    ]);
    context = {
      entry: entry.href,
      site: entry.href,
      scan: options.scan,
      pageCap,
      deadline: Date.now() + limits.timeBudgetMs,
      expiresAt: out.expiresAt.getTime(),
      checkFragments: options.checkFragments,
    };
    await frontier.open(jobId, pageCap, out.expiresAt);
    await frontier.open(links, limits.checkedLinks, out.expiresAt);
    if (options.checkFragments) {
      await frontier.open(anchorsOf(jobId), pageCap, out.expiresAt);
      await frontier.open(fragmentsOf(jobId), limits.checkedLinks * MAX_FRAGMENTS_PER_LINK, out.expiresAt);
    }
    await frontier.setContext(jobId, JSON.stringify(context));
  }
  d.worker.forget(jobId);
  const job = (await d.worker.runtime(jobId)) as JobRuntime;
  let reported = false;
  const budget = AbortSignal.any([signal, AbortSignal.timeout(Math.max(0, context.deadline - Date.now()))]);
  try {
    // The sitemaps robots.txt names, robots.txt read once (the page workers' rules), as the one-worker crawl.
    const sitemap = job.robots
      .of(entry.origin)
      .then((robots) =>
        discoverSitemaps(
          entry.origin,
          (url, read) => job.checker.readFile(url, read),
          { maxFiles: limits.sitemapFiles, maxUrls: limits.sitemapUrls, maxBytes: crawlDeps.maxPageBytes },
          robots.sitemaps,
        ),
      )
      .catch(() => ({ found: false, urls: [] as string[] }));
    if (!stored) {
      const entryPage = pageOf(entry.href, entry) ?? entry.href;
      await frontier.insert(jobId, [{ url: entryPage, depth: 0, fromSitemap: false }], out.expiresAt);
      const leased = await frontier.claim(jobId, entryPage, d.worker.owner, d.leaseMs);
      const visit = leased ? await d.worker.audit(job, leased).catch(orTimeout(budget)) : undefined;
      failOnEntry(signal, visit);
    }
    const found = await untilAborted(sitemap, budget);
    const onSite = (found?.urls ?? []).flatMap((u) => job.pages.of(u) ?? []);
    const sitemapUrls = new Set(onSite);
    if (onSite.length > 0 && job.rules.maxDepth !== 0) {
      const admitted = await frontier.insert(
        jobId,
        onSite.filter((u) => job.rules.inScope(u)).map((url) => ({ url, depth: 1, fromSitemap: true })),
        out.expiresAt,
      );
      await d.work.publish(admitted.queued.map((p) => ({ jobId, url: p.url })));
    }
    report_({ phase: 'crawling', sitemapFound: found?.found ?? false, sitemapUrlCount: onSite.length });
    // Until no page is queued or leased. Pages whose work item may be lost are published again once
    // no page has been done for a lease (a replica died holding them, or before publishing them).
    let lastCount = Date.now();
    let lastDone = { count: -1, at: Date.now() };
    for (;;) {
      if (signal.aborted) throw signal.reason;
      let [pages, linkRows] = await Promise.all([frontier.tally(jobId), frontier.tally(links)]);
      if (pages.open === 0 || Date.now() - lastCount >= COUNT_EVERY_MS) {
        lastCount = Date.now();
        const counted = await frontier.counts(jobId);
        pages = { open: counted.queued + counted.leased, done: counted.done, over: counted.over };
      }
      const read = pages.done;
      const linksTotal = linkRows.open + linkRows.done;
      report_({
        pagesCrawled: read,
        pagesDiscovered: pages.open + pages.done + pages.over,
        linksFound: linksTotal + linkRows.over,
        linksChecked: linkRows.done,
        linksTotal,
        message: crawlingMessage({
          checking: true,
          pagesCrawled: read,
          pagesToRead: pages.open,
          linksFound: linksTotal,
          linksChecked: linkRows.done,
          linksTotal,
        }),
      });
      if (pages.open === 0 || budget.aborted) break;
      if (pages.done !== lastDone.count) lastDone = { count: pages.done, at: Date.now() };
      else if (Date.now() - lastDone.at >= d.leaseMs) {
        lastDone.at = Date.now();
        const now = new Date();
        const lost = await frontier.stranded(jobId, new Date(now.getTime() - d.leaseMs), now, 500);
        await d.work.publish(lost.map((url) => ({ jobId, url })));
      }
      await d.worker.idleOr(POLL_MS, budget);
    }
    const cutByBudget = budget.aborted && !signal.aborted;
    report_({
      phase: 'checking',
      message: checkingMessage({
        checking: true,
        pagesCrawled: progress.pagesCrawled,
        pagesToRead: 0,
        linksFound: progress.linksFound,
        linksChecked: progress.linksChecked,
        linksTotal: progress.linksTotal,
      }),
    });
    const site = await siteChecks;
    const result = {
      ...(await finish(entry, pageCap, crawlDeps, signal, out, d, job, sitemapUrls, cutByBudget, site)),
      site: site.site,
    };
    reported = true;
    // The last word counts what the report counts: pages fetched (not rows done: robots.txt refusals, files).
    report_({
      phase: 'done',
      pagesCrawled: result.pagesAudited,
      message:
        `${endMessage(cutByBudget ? Math.round(limits.timeBudgetMs / 1000) : undefined)}: ` +
        `checked ${nLinks(progress.linksChecked)} on ${nPages(result.pagesAudited)}`,
    });
    return result;
  } finally {
    // The report carries what the pages showed: rows and records go once it is made (or the try failed for good).
    if (!signal.aborted) {
      await Promise.all([...spaces.map((space) => frontier.clear(space)), out.store.clear(jobId)]).catch(
        () => undefined,
      );
      // A failed try's affected URLs go too (a finished one's stay with the job until it expires).
      if (!reported) await out.store.clearAffected(jobId).catch(() => undefined);
      d.worker.forget(jobId);
    }
  }
}

/**
 * Makes the report from the store (docs/decisions/0492-distributed-audit-report-in-bounded-memory.md):
 * the link rows are graded a batch at a time (those to audited pages by the page's own fetch) and
 * only the broken ones kept; their sources come from a pass over the page records' links. A
 * canonical target's status is looked up by the report for each batch of pages.
 */
async function finish(
  entry: URL,
  pageCap: number,
  crawlDeps: CrawlDeps,
  signal: AbortSignal,
  out: AuditPagesOf,
  d: DistributedAuditDeps,
  job: JobRuntime,
  sitemapUrls: Set<string>,
  cutByBudget: boolean,
  site: SiteLevel,
): Promise<SiteAuditResult> {
  const { frontier } = d;
  const { jobId } = out;
  const linkSpace = linksOf(jobId);
  const pageCounts = await frontier.counts(jobId);
  const linkCounts = await frontier.counts(linkSpace);
  // Only the links the report finds something of are kept: broken ones, and those to a missing fragment.
  const found = new Map<string, AuditLink>();
  let broken = 0;
  const fragments = job.context.checkFragments
    ? new FragmentCursor(frontier.results(fragmentsOf(jobId), GRADE_BATCH))
    : undefined;
  for await (const rows of frontier.results(linkSpace, GRADE_BATCH))
    for (const link of await gradeLinkRows(frontier, job, rows, fragments)) {
      if (link.severity === 'broken') broken++;
      else if (link.category !== MISSING_ANCHOR) continue;
      found.set(linkKey(link), { ...link, sources: [], sourceCount: 0 });
    }
  // Their pages, from the links each page record lists.
  if (found.size > 0)
    for await (const batch of out.store.read(jobId))
      for (const page of batch)
        for (const key of page.outLinks ?? []) {
          const link = found.get(key);
          if (!link) continue;
          link.sourceCount++;
          if (link.sources.length < crawlDeps.limits.sources) link.sources.push(page.url);
        }
  for (const link of found.values()) link.sources.sort();
  const unchecked = linkCounts.queued + linkCounts.leased;
  const files = await checkSiteFiles(entry, d.budget ? { ...crawlDeps, throttle: d.budget } : crawlDeps, signal);
  const { result, findings } = await reportFromStore(
    entry,
    pageCap,
    {
      url: entry.href,
      scannedAt: new Date().toISOString(),
      pagesDiscovered: pageCounts.queued + pageCounts.leased + pageCounts.done + pageCounts.over,
      truncatedPages: pageCounts.over > 0 || pageCounts.queued + pageCounts.leased > 0,
      totalUniqueLinks: linkCounts.queued + linkCounts.leased + linkCounts.done + linkCounts.over,
      truncatedLinks: linkCounts.over > 0,
      linksCutBy: cutByBudget && unchecked > 0 ? ['time_budget'] : [],
      summary: { broken },
      links: [...found.values()],
      linkStatuses: (urls) => linkStatuses(frontier, job, linkSpace, urls),
    },
    { ...out, store: new SitemapMarked(out.store, sitemapUrls) },
    [...sitemapUrls],
    [...files, ...site.findings],
  );
  return noteFindings(result, findings);
}

/**
 * The stored records, each marked as listed in the sitemap or not by the sitemap's own list: a page
 * fetched before the sitemap was read was stored unmarked.
 */
class SitemapMarked implements AuditPageStore {
  constructor(
    private readonly store: AuditPageStore,
    private readonly sitemap: ReadonlySet<string>,
  ) {}
  private mark = (page: AuditedPage): AuditedPage => ({ ...page, fromSitemap: this.sitemap.has(page.url) });
  add: AuditPageStore['add'] = (...args) => this.store.add(...args);
  async *read(jobId: string, batch?: number): AsyncGenerator<AuditedPage[]> {
    for await (const pages of this.store.read(jobId, batch)) yield pages.map(this.mark);
  }
  get: AuditPageStore['get'] = async (jobId, urls) => (await this.store.get(jobId, urls)).map(this.mark);
  count: AuditPageStore['count'] = (jobId) => this.store.count(jobId);
  clear: AuditPageStore['clear'] = (jobId) => this.store.clear(jobId);
  addAffected: AuditPageStore['addAffected'] = (...args) => this.store.addAffected(...args);
  affected: AuditPageStore['affected'] = (...args) => this.store.affected(...args);
  clearAffected: AuditPageStore['clearAffected'] = (jobId) => this.store.clearAffected(jobId);
  sweep: AuditPageStore['sweep'] = (now) => this.store.sweep(now);
  close: AuditPageStore['close'] = () => this.store.close();
}

/** The entry page must be a page to audit, as in the one-worker crawl (crawler.ts failOnEntry). */
function failOnEntry(signal: AbortSignal, visit: AuditedVisit | undefined): void {
  if (signal.aborted) throw signal.reason;
  if (!visit) throw new CrawlFailure('crawl_timeout', 'the time budget ended before the entry page answered');
  if (visit.html) return;
  const { error, status, redirectTrouble } = visit.outcome;
  if (error?.kind === 'blocked') throw new CrawlFailure('target_blocked', error.message);
  if (error) throw new CrawlFailure('target_unreachable', `the entry page could not be fetched: ${error.message}`);
  if (visit.refused) throw new CrawlFailure('robots_disallowed', 'the entry page is disallowed by robots.txt');
  if (redirectTrouble)
    throw new CrawlFailure('target_unreachable', 'the entry page redirects in a loop or too many times');
  if (status !== undefined && status >= 400)
    throw new CrawlFailure('target_http_error', `the entry page answered ${status}`);
  throw new CrawlFailure('not_html', `the entry page is not HTML or Markdown (status ${status})`);
}

function orTimeout(budget: AbortSignal) {
  return (err: unknown): undefined => {
    if (budget.aborted) return undefined;
    throw err;
  };
}

async function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) return undefined;
  return new Promise<T | undefined>((resolve, reject) => {
    const stop = () => resolve(undefined);
    signal.addEventListener('abort', stop, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', stop));
  });
}
