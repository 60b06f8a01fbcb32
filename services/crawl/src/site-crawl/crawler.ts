import { setMaxListeners } from 'node:events';
import { type CheckerDeps, LinkChecker, SAMPLE_BYTES } from '../checking/checker.js';
import { type CheckOutcome, type Graded, gradeLink, scoreCard } from '../checking/grade.js';
import type { HostThrottle } from '../checking/throttle.js';
import { type VerdictSources, verdictFor } from '../checking/verdict.js';
import type { CrawlLimits } from '../config.js';
import type {
  CheckedLink,
  CrawledPage,
  CrawlKind,
  CrawlOptions,
  CrawlProgress,
  CrawlResult,
  FoundLink,
  Sourced,
} from '../model.js';
import { CrawlFailure } from '../model.js';
import { PageTargets } from '../page/fragments.js';
import { countLinks, LinkCollector } from '../page/links.js';
import { pageFormat, pageSink } from '../page/page-format.js';
import { normalizePageUrl, pageOf } from '../page/page-url.js';
import { nextTurn, parseStream } from '../page/parse-stream.js';
import { isStylesheet, StylesheetReader } from '../page/stylesheets.js';
import { compileScan, type ScanRules } from '../scan-options.js';
import { Frontier, type QueuedPage } from './frontier.js';
import { type LinkEntry as LedgerEntry, LinkLedger } from './link-ledger.js';
import { type CrawlCounts, checkingMessage, crawlingMessage, endMessage, nLinks, nPages } from './progress-messages.js';
import { CrawlRobots, type RobotsRules } from './robots.js';
import { discoverSitemaps, type SitemapDiscovery } from './sitemap.js';

export interface CrawlDeps extends CheckerDeps {
  /** The process's own throttle (its learned limits are read too). */
  throttle: HostThrottle;
  limits: CrawlLimits;
  /** Links read from one page at most. */
  linksPerPage: number;
}

/** Links taken from a page between two turns of the event loop. */
const ABSORB_SLICE = 500;

export { MAX_RESULT_BYTES } from './link-ledger.js';

type LinkEntry = LedgerEntry<PageVisit>;

/** What the crawl keeps of a page it fetched (its links are taken at once, not kept). */
interface PageVisit {
  queued: QueuedPage;
  outcome: CheckOutcome;
  targets: PageTargets;
  /** Read as HTML or Markdown (so `targets` is complete up to the page size cap). */
  html: boolean;
  /** Listed in `pages`: parsed, or answered with an error. Non-HTML files are links only. */
  isPage: boolean;
  /** Why it was not fetched (robots.txt), when it was not. */
  refused?: string;
}

/** The page row's reason for a page robots.txt keeps us from. */
export const DISALLOWED = 'disallowed by robots.txt';

/**
 * One site crawl: the site breadth first from the entry URL, each page fetched as soon as the
 * frontier lets it start (no level barrier), robots.txt and sitemaps read meanwhile, up to the
 * page cap and the time budget. A broken-link crawl checks each unique link once as soon as the
 * page it is on is read (crawled pages answer for themselves); an extract crawl only collects.
 * Reaching a cap or the budget ends the crawl with a result.
 */
export async function crawlSite(
  kind: CrawlKind,
  entry: URL,
  deps: CrawlDeps,
  onProgress: (progress: CrawlProgress) => void,
  signal: AbortSignal,
  options: CrawlOptions = { checkFragments: false },
): Promise<CrawlResult> {
  return new SiteCrawl(kind, entry, deps, onProgress, signal, options).run();
}

class SiteCrawl {
  private readonly limits: CrawlLimits;
  private readonly budget: AbortSignal;
  private readonly scan: AbortSignal;
  /** Aborted when the crawl ends either way, so nothing it started (sitemap reads) outlives it. */
  private readonly ended = new AbortController();
  private readonly checker: LinkChecker;
  private readonly frontier: Frontier;
  /** The unique links found, under the caps. */
  private readonly links: LinkLedger<PageVisit>;
  private readonly pages: CrawledPage[] = [];
  /**
   * Pages the crawl plans to fetch (found as links): their link checks wait for the fetch instead
   * of asking again. A waiter is made only when a check asks (at most one per checked link), not
   * one per queued page, which would be a promise and two closures for each of 150,000 URLs.
   */
  private readonly planned = new Set<string>();
  private readonly visits = new Map<string, PageVisit>();
  private readonly waiting = new Map<string, Deferred<PageVisit | undefined>>();
  private planning = true;
  private readonly checking: boolean;
  private site: URL;
  private progress: CrawlProgress;
  private linksChecked = 0;
  private pagesCrawled = 0;
  /** Pages being fetched and read now. */
  private pagesReading = 0;
  /** Pages handed out for fetching that the time budget cut off. */
  private pagesCutOff = 0;
  /** Each origin's robots.txt rules, read before its first page is fetched, and its Crawl-delay. */
  private readonly robots: CrawlRobots;
  /** Pages robots.txt kept the crawl from (listed up to the page cap). */
  private pagesRefused = 0;
  /** Hands out what the frontier lets start; set while pages are crawled. */
  private pump: () => void = () => undefined;
  /** The start's options, compiled (resources, include/exclude, acceptStatus, headers, caps). */
  private readonly rules: ScanRules;
  /** Pages fetched at most: the page cap, or the start's maxPages when lower. */
  private readonly pageCap: number;
  /** The site's stylesheets, each read once in the crawl for the URLs in it. */
  private readonly stylesheets: StylesheetReader;

  constructor(
    private readonly kind: CrawlKind,
    private readonly entry: URL,
    private readonly deps: CrawlDeps,
    private readonly onProgress: (progress: CrawlProgress) => void,
    private readonly signal: AbortSignal,
    private readonly options: CrawlOptions,
  ) {
    this.limits = deps.limits;
    this.checking = kind === 'broken-links';
    this.rules = compileScan(options.scan ?? {}, entry, this.checking);
    this.links = new LinkLedger(this.limits, this.checking, options.checkFragments);
    this.pageCap = Math.min(this.limits.pages, this.rules.maxPages ?? this.limits.pages);
    this.budget = AbortSignal.timeout(this.limits.timeBudgetMs);
    this.scan = AbortSignal.any([signal, this.budget, this.ended.signal]);
    setMaxListeners(0, this.scan); // every request in flight listens to it
    this.checker = new LinkChecker(deps, this.scan, Date.now() + this.limits.timeBudgetMs, {
      soft404: this.checking,
      originHeaders: this.rules.originHeaders,
    });
    this.robots = new CrawlRobots((url, read) => this.checker.fetchFile(url, read), this.scan);
    this.stylesheets = new StylesheetReader(
      (url) => this.checker.fetchStylesheet(url),
      deps.linksPerPage,
      this.checking,
      this.scan,
    );
    this.frontier = new Frontier({ maxShapeChain: this.limits.maxShapeChain, maxKnown: this.limits.frontierPages });
    this.site = entry;
    this.progress = {
      phase: 'sitemap',
      message: 'Reading robots.txt and sitemaps',
      sitemapFound: false,
      sitemapUrlCount: 0,
      pagesCrawled: 0,
      pagesDiscovered: 0,
      pagesCap: this.pageCap,
      linksFound: 0,
      linksChecked: 0,
      linksTotal: 0,
    };
  }

  async run(): Promise<CrawlResult> {
    try {
      return await this.crawl();
    } finally {
      this.ended.abort();
    }
  }

  private async crawl(): Promise<CrawlResult> {
    this.report({});
    this.frontier.seed(normalizePageUrl(this.entry));
    // The sitemap is read beside the entry page, as a source of depth 0: what it lists is depth 1.
    this.frontier.startReading(0);
    const sitemaps = this.untilBudget(
      this.robots
        .of(this.entry.origin)
        .then((robots) =>
          discoverSitemaps(
            this.entry.origin,
            (url, read) => this.checker.readFile(url, read),
            { maxFiles: this.limits.sitemapFiles, maxUrls: this.limits.sitemapUrls, maxBytes: this.deps.maxPageBytes },
            robots.sitemaps,
          ),
        )
        .catch(() => ({ found: false, urls: [] as string[] })),
    );
    const entry = this.frontier.take() as QueuedPage;
    const first = await this.visit(entry).catch((err: unknown) => {
      if (this.scan.aborted) return undefined;
      throw err;
    });
    this.failOnEntry(first);
    this.frontier.finishReading(entry.depth);
    this.report({ phase: 'crawling', message: crawlingMessage(this.counts()) });
    await Promise.all([this.crawlPages(), this.seedFromSitemap(sitemaps)]);
    if (this.signal.aborted) throw this.signal.reason;
    // Pages that will not be fetched now: links to them are checked like any other.
    this.planning = false;
    for (const deferred of this.waiting.values()) deferred.resolve(undefined);
    if (this.checking) this.report({ phase: 'checking', message: checkingMessage(this.counts()) });
    return this.finish();
  }

  /**
   * Fetches pages as the frontier hands them out, at most pageConcurrency at once and never more
   * than the page cap allows (pages crawled plus pages being read); each page's links are taken as
   * soon as it is read, which may let the next pages start. Resolves once nothing is being read and
   * nothing may start: the site is done, or a cap or the budget stopped the crawl.
   */
  private crawlPages(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let failed = false;
      this.pump = () => {
        if (failed) return;
        while (
          !this.scan.aborted &&
          this.pagesReading < this.limits.pageConcurrency &&
          this.pagesCrawled + this.pagesReading < this.pageCap
        ) {
          const page = this.frontier.take();
          if (!page) break;
          this.pagesReading++;
          this.visit(page)
            .catch((err: unknown) => {
              if (!this.scan.aborted) throw err;
              this.pagesCutOff++;
            })
            .then(
              () => {
                this.pagesReading--;
                this.frontier.finishReading(page.depth);
                this.pump();
              },
              (err: unknown) => {
                failed = true;
                reject(err);
              },
            );
        }
        if (this.pagesReading === 0 && !this.frontier.busy) resolve();
      };
      this.pump();
    });
  }

  /**
   * A page robots.txt keeps the crawl from: listed as an `info` row, never fetched; links to it
   * are still checked (a HEAD or GET of one URL is not crawling).
   */
  private refuse(queued: QueuedPage, robots: RobotsRules): PageVisit {
    this.planned.delete(queued.url);
    this.waiting.get(queued.url)?.resolve(undefined);
    const { url, depth, fromSitemap } = queued;
    const outcome = { redirects: 0, error: robots.failure };
    this.options.observer?.visited({
      url,
      depth,
      fromSitemap,
      outcome,
      html: false,
      isPage: false,
      refused: DISALLOWED,
      links: [],
    });
    if (this.pagesRefused++ < this.pageCap)
      this.pages.push({
        url: queued.url,
        statusCode: undefined,
        statusText: 'Disallowed',
        severity: 'info',
        linksOnPage: 0,
        depth: queued.depth,
        fromSitemap: queued.fromSitemap,
        reason: DISALLOWED,
      });
    // Nothing answered for robots.txt: the origin is down or blocked, which the entry page reports as such.
    return {
      queued,
      outcome,
      targets: new PageTargets(),
      html: false,
      isPage: false,
      refused: DISALLOWED,
    };
  }

  private async visit(queued: QueuedPage): Promise<PageVisit> {
    const origin = new URL(queued.url).origin;
    const robots = await this.robots.of(origin);
    if (!robots.allows(queued.url)) return this.refuse(queued, robots);
    await this.robots.turn(origin, robots.crawlDelayMs);
    let collector: LinkCollector | undefined;
    const outcome = await this.checker.fetchPage(queued.url, async (res) => {
      const final = new URL(res.url);
      if (queued.depth > 0) {
        // A redirect elsewhere: off the site, or to a page the crawl reads anyway, is not read here.
        const landed = this.asPage(res.url);
        if (!landed || (landed !== queued.url && this.frontier.has(landed))) return '';
        this.frontier.claim(landed);
      }
      collector = new LinkCollector(final, this.deps.linksPerPage, this.checking, this.rules.resources);
      const sink = this.options.observer?.reading(queued.url, res, collector) ?? collector;
      return parseStream(res, pageSink(pageFormat(res) ?? 'html', sink), SAMPLE_BYTES);
    });
    const html = collector !== undefined;
    this.links.tooLong += collector?.tooLong ?? 0;
    const isPage = html || outcome.error !== undefined || (outcome.status ?? 0) >= 300;
    const links = collector?.links ?? [];
    const visit: PageVisit = { queued, outcome, targets: collector?.targets ?? new PageTargets(), html, isPage };
    if (visit.isPage) {
      this.pagesCrawled++;
      const graded = gradeLink(
        {
          url: queued.url,
          originalHref: queued.url,
          text: '',
          rel: undefined,
          type: 'internal',
          scheme: this.entry.protocol.slice(0, -1),
          element: 'a',
        },
        outcome,
        undefined,
        this.rules.accepts,
      );
      this.pages.push({
        url: queued.url,
        statusCode: outcome.status,
        statusText: graded.record.statusText,
        severity: graded.record.severity,
        linksOnPage: links.length,
        depth: queued.depth,
        fromSitemap: queued.fromSitemap,
      });
    }
    // The site is where the entry page landed (http -> https, a www. host, another domain).
    if (queued.depth === 0 && visit.isPage && outcome.finalUrl) this.site = new URL(outcome.finalUrl);
    this.options.observer?.visited({ ...queued, outcome, html, isPage: visit.isPage, links });
    if (this.planned.has(queued.url)) this.visits.set(queued.url, visit);
    this.waiting.get(queued.url)?.resolve(visit);
    await this.absorb(visit, links);
    return visit;
  }

  /** Queues the pages the sitemaps list (depth 1) once they are read, and lets deeper pages start. */
  private async seedFromSitemap(sitemaps: Promise<SitemapDiscovery | undefined>): Promise<void> {
    const sitemap = await sitemaps;
    if (sitemap) {
      const onSite = sitemap.urls.flatMap((u) => this.asPage(u) ?? []);
      this.options.observer?.sitemap(onSite);
      // What the sitemap lists is depth 1: fetched unless maxDepth is 0; include/exclude apply.
      if (this.rules.maxDepth !== 0) this.frontier.addFromSitemap(onSite.filter((u) => this.rules.inScope(u)));
      this.report({
        sitemapFound: sitemap.found,
        sitemapUrlCount: onSite.length,
        message: crawlingMessage(this.counts()),
      });
    }
    this.frontier.finishReading(0);
    this.pump();
  }

  /**
   * The entry page must be a page to crawl: one that never answered (network error, time-out),
   * was blocked, answered an error status, or is not HTML ends the job failed, naming why.
   */
  private failOnEntry(visit: PageVisit | undefined): void {
    if (this.signal.aborted) throw this.signal.reason;
    if (!visit) throw new CrawlFailure('crawl_timeout', 'the time budget ended before the entry page answered');
    if (visit.html) return;
    const { error, status, redirectTrouble } = visit.outcome;
    if (error?.kind === 'blocked') throw new CrawlFailure('target_blocked', error.message);
    if (error) throw new CrawlFailure('target_unreachable', `the entry page could not be fetched: ${error.message}`);
    if (visit.refused) throw new CrawlFailure('robots_disallowed', `the entry page is ${visit.refused}`);
    if (redirectTrouble)
      throw new CrawlFailure('target_unreachable', 'the entry page redirects in a loop or too many times');
    if (status !== undefined && status >= 400)
      throw new CrawlFailure('target_http_error', `the entry page answered ${status}`);
    throw new CrawlFailure('not_html', `the entry page is not HTML or Markdown (status ${status})`);
  }

  /**
   * Takes a page's links in document order: queues pages for the next level, counts and checks
   * links. Each slice, the first too, waits for a turn of the event loop of its own: taken where
   * the page was read, the first slices of many pages ran back to back in one turn.
   */
  private async absorb(visit: PageVisit, links: readonly FoundLink[]): Promise<void> {
    const deeper = this.rules.maxDepth === undefined || visit.queued.depth < this.rules.maxDepth;
    // Stylesheets are read before their links are counted: that GET answers their check too.
    const sheets = this.rules.resources ? links.filter((link) => isStylesheet(link) && this.inScan(link)) : [];
    const inSheets = sheets.length > 0 ? this.stylesheets.linksOf(sheets) : undefined;
    for (const [i, link] of links.entries()) {
      if (i % ABSORB_SLICE === 0) await nextTurn();
      if (!this.inScan(link)) continue;
      // Resources are checked, never followed; nor are pages past maxDepth.
      if (link.type === 'internal' && link.viaAnchor && deeper && link.scheme.startsWith('http')) {
        // A link to a known page is already in page form (most internal links repeat on every page).
        const page = this.frontier.has(link.url) ? link.url : this.asPage(link.url);
        if (page && this.frontier.addLink(page, visit.queued)) this.planned.add(page);
      }
      this.count(link, visit);
    }
    // A stylesheet's links have the page that first linked it as their source.
    for (const link of (await inSheets) ?? []) if (this.inScan(link)) this.count(link, visit);
    this.report({ message: crawlingMessage(this.counts()) });
  }

  private inScan(link: FoundLink): boolean {
    return this.links.inScan(link, this.rules);
  }

  private count(link: FoundLink, visit: PageVisit): void {
    const entry = this.links.add(link, visit.queued.url, visit);
    if (entry && this.checking) entry.verdict = this.judge(entry, visit);
  }

  /** Checks and grades a link first found on `visit`'s page (whose targets answer its in-page anchors). */
  private async judge(entry: LinkEntry, visit: PageVisit): Promise<Graded | undefined> {
    try {
      const anchor = entry.link.type === 'anchor';
      return await verdictFor(
        entry.link,
        this.sourcesFor(visit),
        anchor && this.options.checkFragments,
        this.rules.accepts,
        this.rules.fragments,
      );
    } catch (err) {
      if (this.scan.aborted) return undefined; // out of time: not checked, so not reported
      throw err;
    } finally {
      this.linksChecked++;
      this.report({});
    }
  }

  /**
   * Grades a link again with its fragments verified, once every page is read (its HTTP outcome
   * is the one already had); the first verdict stands when the time budget ends first.
   */
  private async withFragments(entry: LinkEntry, first: Graded): Promise<Graded> {
    if (!entry.firstPage) return first;
    try {
      return await verdictFor(
        entry.link,
        this.sourcesFor(entry.firstPage),
        true,
        this.rules.accepts,
        this.rules.fragments,
      );
    } catch (err) {
      if (this.scan.aborted) return first;
      throw err;
    }
  }

  private sourcesFor(visit: PageVisit): VerdictSources {
    return {
      page: visit.queued.url,
      pageTargets: visit.targets,
      outcomeOf: async (url) => (await this.crawled(url))?.outcome ?? this.checker.check(url),
      targetsOf: async (url) => {
        const visit = await this.crawled(url);
        return visit ? (visit.html ? visit.targets : undefined) : (await this.checker.checkWithTargets(url)).targets;
      },
    };
  }

  /** The visit of a page this crawl fetches (waiting for it), or undefined when it is not fetched. */
  private async crawled(url: string): Promise<PageVisit | undefined> {
    const page = this.asPage(url);
    if (page === undefined || !this.planned.has(page)) return undefined;
    const visited = this.visits.get(page);
    if (visited || !this.planning) return visited;
    let waiter = this.waiting.get(page);
    if (!waiter) {
      waiter = deferred();
      this.waiting.set(page, waiter);
    }
    return waiter.promise;
  }

  /** The normalised URL when `url` is a page of this site the crawl may fetch. */
  private asPage(url: string): string | undefined {
    return pageOf(url, this.site);
  }

  private async untilBudget<T>(promise: Promise<T>): Promise<T | undefined> {
    if (this.scan.aborted) return undefined;
    return new Promise<T | undefined>((resolve, reject) => {
      const stop = () => resolve(undefined);
      this.scan.addEventListener('abort', stop, { once: true });
      promise.then(resolve, reject).finally(() => this.scan.removeEventListener('abort', stop));
    });
  }

  private async finish(): Promise<CrawlResult> {
    const truncatedPages = this.frontier.queued > 0 || this.pagesCutOff > 0;
    const totalUnique = this.links.uniqueTotal;
    const common = { url: this.entry.href, scannedAt: new Date().toISOString() };
    if (!this.checking) {
      const entries = [...this.links.entries.values()];
      const counts = countLinks(entries.map((e) => e.link));
      this.report({
        phase: 'done',
        message: `${this.doneMessage()}: found ${nLinks(this.links.found)} on ${nPages(this.pagesCrawled)}`,
      });
      return {
        kind: 'link-extract',
        result: {
          ...common,
          totalLinks: counts.total,
          truncated: this.links.cut,
          counts,
          links: entries.map(({ link: { viaAnchor: _, ...link }, sources, sourceCount }) => ({
            ...link,
            sources,
            sourceCount,
          })),
          withElements: this.rules.resources,
        },
      };
    }
    const entries = [...this.links.entries.values()];
    const verdicts = await Promise.all(
      entries.map(async (e) => {
        const first = await e.verdict;
        return first && this.withFragments(e, first);
      }),
    );
    if (this.signal.aborted) throw this.signal.reason;
    const graded: Graded[] = [];
    const records: (CheckedLink & Sourced)[] = [];
    entries.forEach((entry, i) => {
      const verdict = verdicts[i];
      if (!verdict) return;
      graded.push(verdict);
      records.push({ ...verdict.record, sources: entry.sources, sourceCount: entry.sourceCount });
    });
    const card = scoreCard(graded);
    this.report({
      phase: 'done',
      message: `${this.doneMessage()}: checked ${nLinks(records.length)} on ${nPages(this.pagesCrawled)}`,
    });
    return {
      kind: 'broken-links',
      result: {
        ...common,
        ...card,
        pagesCrawled: this.pagesCrawled,
        pagesDiscovered: this.frontier.discovered,
        totalUniqueLinks: totalUnique,
        truncatedPages,
        truncatedLinks: this.links.checkCapReached,
        linksCutBy: this.links.cutReasons(records.length < entries.length),
        links: records,
        pages: this.pages.sort(byDepthThenUrl),
      },
    };
  }

  private doneMessage(): string {
    return endMessage(this.budget.aborted ? Math.round(this.limits.timeBudgetMs / 1000) : undefined);
  }

  private counts(): CrawlCounts {
    return {
      checking: this.checking,
      pagesCrawled: this.pagesCrawled,
      pagesToRead: Math.max(0, Math.min(this.frontier.discovered, this.pageCap) - this.pagesCrawled),
      linksFound: this.links.found,
      linksChecked: this.linksChecked,
      linksTotal: this.links.entries.size,
    };
  }

  private report(change: Partial<CrawlProgress>): void {
    this.progress = {
      ...this.progress,
      ...change,
      pagesCrawled: this.pagesCrawled,
      pagesDiscovered: this.frontier.discovered,
      linksFound: this.links.found,
      linksChecked: this.linksChecked,
      linksTotal: this.checking ? this.links.entries.size : 0,
    };
    // While crawling and checking, the message always tells the counts it is sent with.
    if (this.progress.phase === 'crawling') this.progress.message = crawlingMessage(this.counts());
    else if (this.progress.phase === 'checking') this.progress.message = checkingMessage(this.counts());
    this.onProgress(this.progress);
  }
}

interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** Pages answer in any order; the result lists them breadth first, then by URL, so it reads the same each run. */
function byDepthThenUrl(a: CrawledPage, b: CrawledPage): number {
  return a.depth - b.depth || (a.url < b.url ? -1 : a.url > b.url ? 1 : 0);
}
