import { setMaxListeners } from 'node:events';
import type { Logger } from '@webutil/kit';
import { LinkChecker, SAMPLE_BYTES } from '../../checking/checker.js';
import type { CheckOutcome } from '../../checking/grade.js';
import { verdictFor } from '../../checking/verdict.js';
import type { AuditPageStore } from '../../jobs/audit-pages.js';
import type { CheckedLink, FoundLink } from '../../model.js';
import { PageTargets } from '../../page/fragments.js';
import { SitePages } from '../../page/page-url.js';
import { isStylesheet, StylesheetReader } from '../../page/stylesheets.js';
import { compileScan, inScan, type ScanOptions, type ScanRules } from '../../scan-options.js';
import type { CrawlDeps } from '../../site-crawl/crawler.js';
import { shapeChainOf, urlShape } from '../../site-crawl/frontier.js';
import { CrawlRobots } from '../../site-crawl/robots.js';
import type { AuditedPage } from '../page-checks.js';
import type { PageRead } from '../page-read.js';
import { PageReadThreads } from '../page-read-threads.js';
import type { HostBudget } from './host-budget.js';
import type { FoundPage, LeasedPage, PageFrontier } from './page-frontier.js';
import type { PageWorkItem, PageWorkLease, PageWorkQueue } from './page-work.js';

/** What every replica needs to know of a distributed audit (stored with its frontier). */
export interface AuditContext {
  entry: string;
  /** Where the entry page landed (http -> https, www.): the pages of this origin are the site's. */
  site: string;
  scan?: ScanOptions;
  pageCap: number;
  /** When the audit's time budget ends (epoch ms). */
  deadline: number;
  /** Fragments are verified: each page's anchors and each link's fragments are stored for the report. */
  checkFragments?: boolean;
  expiresAt: number;
}

/** What a finished page row carries: the fetch's outcome (links to the page are graded by it). */
export interface PageRowResult {
  outcome?: Omit<CheckOutcome, 'targets'>;
}

/** What a link row carries: the link, and its verdict, or the page that answers for it. */
export interface LinkRowResult {
  link: FoundLink;
  record?: CheckedLink;
  /** A page of the audit: graded from that page's fetch when the report is made. */
  page?: string;
  /** The check's outcome of a link to the site with fragments to verify when the report is made. */
  outcome?: Omit<CheckOutcome, 'targets'>;
}

/** The key-space of a job's link rows in the frontier (one row per link type and URL). */
export const linksOf = (jobId: string) => `${jobId} links`;
export const linkKey = (link: Pick<FoundLink, 'type' | 'url'>) => `${link.type} ${link.url}`;
/** The key-space of a job's pages' anchors (checkFragments): a row per page read as HTML, its `StoredTargets`. */
export const anchorsOf = (jobId: string) => `${jobId} anchors`;
/**
 * The key-space of the fragments links to the site were found with (checkFragments): a row per link
 * key and fragment, `<link key> <fragment>` (a space sorts below any URL's character, so a link's
 * rows follow one another in the order of the link keys).
 */
export const fragmentsOf = (jobId: string) => `${jobId} fragments`;
export const fragmentKey = (link: Pick<FoundLink, 'type' | 'url'>, fragment: string) => `${linkKey(link)} ${fragment}`;

/** One replica's view of a running audit: its robots.txt rules, checker, stylesheets read. */
export interface JobRuntime {
  jobId: string;
  context: AuditContext;
  rules: ScanRules;
  /** The site (where the entry page landed) and pageOf for it, remembered: made again when it moves. */
  pages: SitePages;
  checker: LinkChecker;
  robots: CrawlRobots;
  stylesheets: StylesheetReader;
  signal: AbortSignal;
  lastUsed: number;
}

/** A page a worker audited: how it went, for the coordinator when it is the entry page. */
export interface AuditedVisit {
  outcome: CheckOutcome;
  html: boolean;
  refused: boolean;
  /** A page, as the page cap counts them: read as HTML or Markdown, or answering an error. */
  page: boolean;
}

export interface PageWorkerDeps {
  frontier: PageFrontier;
  pages: AuditPageStore;
  work: PageWorkQueue;
  crawl: CrawlDeps;
  /** This replica (lease owner). */
  owner: string;
  /** A page row's lease; renewed a third of it at a time while the page is worked on. */
  leaseMs: number;
  /** Hosts' politeness held with the other replicas (decision 0494); else this replica's throttle and turns. */
  budget?: HostBudget;
  /** Where pages are parsed (decision 0501); unset, on the event loop. */
  reads?: PageReadThreads;
  log: Logger;
}

/** A link row's lease: its inserter checks it now; one whose inserter died is checked when the report is made. */
const LINK_LEASE_MS = 24 * 3_600_000;

/** A job's runtime unused this long is dropped (its audit ended, or moved on to other replicas). */
const IDLE_MS = 60_000;
/**
 * Link outcomes a job's checker keeps: the frontier knows what the audit checked, so the checker
 * needs only the recent ones (a stylesheet read, then checked as the page's link; checks in flight).
 */
const OUTCOMES_KEPT = 1_000;

/**
 * A replica's page workers: each takes a page's work item, leases its frontier row, fetches and
 * reads the page with the crawl's own modules, stores its record, adds the pages it links to the
 * frontier (publishing those it admitted) and checks the links it is first to find, then marks
 * the row done and acks the item (docs/decisions/0491-distributed-audit-frontier.md).
 */
export class AuditPageWorker {
  private readonly jobs = new Map<string, Promise<JobRuntime | undefined>>();
  private readonly shutdown = new AbortController();
  private readonly sweeper: NodeJS.Timeout;
  /** Work items in hand, and who waits for there to be none (a coordinator, for the end of the crawl). */
  private inHand = 0;
  private readonly idleWaiters = new Set<() => void>();
  private readonly reads: PageReadThreads;

  constructor(private readonly deps: PageWorkerDeps) {
    this.reads = deps.reads ?? new PageReadThreads(0);
    this.sweeper = setInterval(() => this.dropIdle(), IDLE_MS);
    this.sweeper.unref();
  }

  /** The lease owner this replica's workers claim rows as. */
  get owner(): string {
    return this.deps.owner;
  }

  start(concurrency: number): void {
    this.deps.work.work(concurrency, (item, lease) => this.handle(item, lease));
  }

  close(): void {
    clearInterval(this.sweeper);
    this.shutdown.abort(new Error('shutting down'));
    void this.reads.close();
  }

  /** The job's runtime on this replica; undefined once its audit ended (its frontier is gone). */
  runtime(jobId: string): Promise<JobRuntime | undefined> {
    let job = this.jobs.get(jobId);
    if (!job) {
      const made = this.deps.frontier
        .context(jobId)
        .then((json) => (json ? this.makeRuntime(jobId, JSON.parse(json) as AuditContext) : undefined));
      made.catch(() => this.jobs.delete(jobId));
      this.jobs.set(jobId, made);
      job = made;
    }
    return job.then((rt) => {
      if (!rt) this.jobs.delete(jobId);
      else rt.lastUsed = Date.now();
      return rt;
    });
  }

  /**
   * Resolves once this replica's workers hold no work item (as the last page of a crawl is done
   * here), or after `ms`, or on `signal`: a coordinator looks at the frontier then rather than a
   * poll later.
   */
  idleOr(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.idleWaiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener('abort', done, { once: true });
      this.idleWaiters.add(done);
    });
  }

  /** Forgets the job's runtime (its context changed, or it ended). */
  forget(jobId: string): void {
    this.jobs.delete(jobId);
  }

  private makeRuntime(jobId: string, context: AuditContext): JobRuntime {
    const entry = new URL(context.entry);
    const rules = compileScan(context.scan ?? {}, entry, true);
    const signal = AbortSignal.any([
      this.shutdown.signal,
      AbortSignal.timeout(Math.max(0, context.deadline - Date.now())),
    ]);
    setMaxListeners(0, signal);
    const { budget } = this.deps;
    const crawl = budget ? { ...this.deps.crawl, throttle: budget } : this.deps.crawl;
    const checker = new LinkChecker(crawl, signal, context.deadline, {
      soft404: true,
      originHeaders: rules.originHeaders,
      remembered: OUTCOMES_KEPT,
    });
    return {
      jobId,
      context,
      rules,
      pages: new SitePages(new URL(context.site)),
      checker,
      robots: new CrawlRobots((url, read) => checker.fetchFile(url, read), signal),
      stylesheets: new StylesheetReader(
        (url) => checker.fetchStylesheet(url),
        this.deps.crawl.linksPerPage,
        true,
        signal,
      ),
      signal,
      lastUsed: Date.now(),
    };
  }

  private dropIdle(): void {
    const now = Date.now();
    for (const [jobId, job] of this.jobs)
      void job.then((rt) => {
        if (!rt || now - rt.lastUsed > IDLE_MS) this.jobs.delete(jobId);
      });
  }

  private async handle(item: PageWorkItem, lease: PageWorkLease): Promise<void> {
    this.inHand += 1;
    try {
      const job = await this.runtime(item.jobId);
      if (!job || job.signal.aborted) return; // the audit ended: nothing to do
      const leased = await this.deps.frontier.claim(item.jobId, item.url, this.deps.owner, this.deps.leaseMs);
      if (!leased) return; // done, or another worker holds it
      await this.audit(job, leased, () => lease.keepAlive());
    } finally {
      this.inHand -= 1;
      if (this.inHand === 0) for (const wake of [...this.idleWaiters]) wake();
    }
  }

  /**
   * Audits a page whose row this replica leased, keeping the lease alive meanwhile. Throws when the
   * replica shuts down mid-page (the item goes back; the lease runs out and another takes it).
   */
  async audit(job: JobRuntime, leased: LeasedPage, keepAlive: () => void = () => undefined): Promise<AuditedVisit> {
    const { frontier, owner, leaseMs } = this.deps;
    const renew = setInterval(
      () => {
        keepAlive();
        frontier.renew(job.jobId, [leased.url], owner, leaseMs).catch(() => undefined);
      },
      Math.max(100, Math.floor(leaseMs / 3)),
    );
    try {
      const visit = await this.visit(job, leased);
      if (this.shutdown.signal.aborted) throw this.shutdown.signal.reason;
      // A page robots.txt keeps us from answers for no link to it: those are checked as links.
      const result: PageRowResult = visit.refused ? {} : { outcome: withoutTargets(visit.outcome) };
      // The page cap counts pages (as the one-worker crawl): a row that was none gives its room back.
      if (visit.page) await frontier.finish(job.jobId, leased.url, owner, JSON.stringify(result));
      else await this.publish(job, await frontier.finishNoPage(job.jobId, leased.url, owner, JSON.stringify(result)));
      return visit;
    } finally {
      clearInterval(renew);
    }
  }

  private async visit(job: JobRuntime, leased: LeasedPage): Promise<AuditedVisit> {
    const { url, depth, fromSitemap } = leased;
    const expiresAt = new Date(job.context.expiresAt);
    const origin = new URL(url).origin;
    const robots = await job.robots.of(origin);
    if (!robots.allows(url)) {
      const outcome: CheckOutcome = { redirects: 0, error: robots.failure };
      await this.deps.pages.add(
        job.jobId,
        [
          {
            url,
            depth,
            fromSitemap,
            status: undefined,
            redirects: 0,
            refused: true,
            links: [],
            error: robots.failure?.message,
          },
        ],
        expiresAt,
      );
      return { outcome, html: false, refused: true, page: false };
    }
    if (this.deps.budget) await this.deps.budget.turn(origin, robots.crawlDelayMs, job.signal);
    else await job.robots.turn(origin, robots.crawlDelayMs);
    let read: PageRead | undefined;
    let landedOn: string | undefined;
    const outcome = await job.checker.fetchPage(url, async (res) => {
      if (depth > 0) {
        // A redirect elsewhere: off the site, or to a page the audit reads anyway, is not read here.
        const landed = job.pages.of(res.url);
        if (!landed) return '';
        if (landed !== url) {
          const admitted = await this.deps.frontier.insert(
            job.jobId,
            [{ url: landed, depth, fromSitemap: false }],
            expiresAt,
          );
          await this.publish(
            job,
            admitted.queued.filter((p) => p.url !== landed),
          );
          if (!admitted.queued.some((p) => p.url === landed)) return '';
          // Ours now: read here, never queued (the row is leased and finished by this worker).
          await this.deps.frontier.claim(job.jobId, landed, this.deps.owner, this.deps.leaseMs);
          landedOn = landed;
        }
      }
      read = await this.reads.read(res, {
        linksPerPage: this.deps.crawl.linksPerPage,
        resources: job.rules.resources,
        sampleChars: SAMPLE_BYTES,
      });
      return read.sample;
    });
    // The page is the row that led here: the landing row takes no room under the cap.
    if (landedOn) await this.publish(job, await this.deps.frontier.finishNoPage(job.jobId, landedOn, this.deps.owner));
    const html = read !== undefined;
    const isPage = html || outcome.error !== undefined || (outcome.status ?? 0) >= 300;
    if (depth === 0 && isPage && outcome.finalUrl) {
      // The site is where the entry page landed: every replica reads it from the context.
      const site = new URL(outcome.finalUrl);
      if (site.href !== job.pages.site.href) {
        job.pages = new SitePages(site);
        job.context = { ...job.context, site: site.href };
        await this.deps.frontier.setContext(job.jobId, JSON.stringify(job.context));
      }
    }
    const links = read?.links ?? [];
    const inScope = links.filter((link) => inScan(link, job.rules));
    const found = this.pagesLinked(job, leased, inScope);
    const targets = new Set(found.filter((p) => p.url !== url).map((p) => p.url));
    // Stylesheets are read before the links are counted; their links count as the page's own.
    const sheets = job.rules.resources ? inScope.filter(isStylesheet) : [];
    const fromSheets =
      sheets.length > 0 ? (await job.stylesheets.linksOf(sheets)).filter((l) => inScan(l, job.rules)) : [];
    const checked = [...inScope, ...fromSheets];
    const record: AuditedPage | undefined = isPage
      ? {
          url,
          depth,
          fromSitemap,
          status: outcome.status,
          error: outcome.error?.message,
          redirects: outcome.redirects,
          redirectTrouble: outcome.redirectTrouble,
          finalUrl: outcome.finalUrl,
          refused: false,
          facts: read?.facts,
          links: [...targets],
          outLinks: [...new Set(checked.map(linkKey))],
        }
      : undefined;
    // Independent writes, asked for together: the embedded store commits them in this turn's groups
    // (decision 0499) rather than a turn each.
    await Promise.all([
      record && this.deps.pages.add(job.jobId, [record], expiresAt),
      job.context.checkFragments && this.storeFragments(job, url, read?.targets, checked),
      this.deps.frontier
        .insert(job.jobId, this.untrapped(leased, found), expiresAt)
        .then((admitted) => this.deps.work.publish(admitted.queued.map((p) => ({ jobId: job.jobId, url: p.url })))),
      this.checkLinks(job, url, read?.targets, checked),
    ]);
    return { outcome, html, refused: false, page: isPage };
  }

  /** Publishes the work items of pages admitted to the job's frontier. */
  private async publish(job: JobRuntime, admitted: readonly FoundPage[] | undefined): Promise<void> {
    if (admitted?.length) await this.deps.work.publish(admitted.map((p) => ({ jobId: job.jobId, url: p.url })));
  }

  /**
   * What fragment checks need of a page when the report is made: its anchors (read as HTML), and
   * the fragments its links to the site name (each link's are gathered from every page that has it).
   */
  private async storeFragments(
    job: JobRuntime,
    url: string,
    targets: PageTargets | undefined,
    links: readonly FoundLink[],
  ): Promise<void> {
    const expiresAt = new Date(job.context.expiresAt);
    const row = (key: string, payload: string): FoundPage => ({ url: key, depth: 0, fromSitemap: false, payload });
    if (targets)
      await this.deps.frontier.insert(anchorsOf(job.jobId), [row(url, JSON.stringify(targets.toStored()))], expiresAt);
    const named = links
      .filter((link) => link.type === 'internal')
      .flatMap((link) => (link.fragments ?? []).map((fragment) => row(fragmentKey(link, fragment), '1')));
    if (named.length > 0) await this.deps.frontier.insert(fragmentsOf(job.jobId), named, expiresAt);
  }

  /** The site's pages a page links with an anchor, one level deeper (maxDepth allowing). */
  private pagesLinked(job: JobRuntime, from: FoundPage, links: readonly FoundLink[]): FoundPage[] {
    const maxDepth = job.rules.maxDepth;
    if (maxDepth !== undefined && from.depth >= maxDepth) return [];
    const pages = new Map<string, FoundPage>();
    for (const link of links) {
      if (link.type !== 'internal' || !link.viaAnchor || !link.scheme.startsWith('http')) continue;
      const page = job.pages.of(link.url);
      if (page && !pages.has(page)) pages.set(page, { url: page, depth: from.depth + 1, fromSitemap: false });
    }
    return [...pages.values()];
  }

  /**
   * The linked pages the one-worker frontier's crawler-trap guard lets in, each with the same-shape
   * chain that led to it: a chain too long (a calendar, session ids) is not followed.
   */
  private untrapped(from: FoundPage, found: readonly FoundPage[]): FoundPage[] {
    const parent = { shape: urlShape(new URL(from.url)), shapeChain: from.shapeChain ?? 0 };
    const { maxShapeChain } = this.deps.crawl.limits;
    return found.flatMap((page) => {
      const shapeChain = shapeChainOf(urlShape(new URL(page.url)), parent, maxShapeChain);
      return shapeChain === undefined ? [] : [{ ...page, shapeChain }];
    });
  }

  /**
   * Inserts a row per link, leased to this worker; checks those it inserted (each link is checked
   * once in the audit, by whoever found it first). A link to a page of the site is inserted done:
   * it is graded by that page's own fetch when the report is made (or checked then, if the page was
   * not fetched), never fetched here.
   */
  private async checkLinks(
    job: JobRuntime,
    source: string,
    targets: PageTargets | undefined,
    links: readonly FoundLink[],
  ): Promise<void> {
    if (links.length === 0) return;
    const byKey = new Map(links.map((l) => [linkKey(l), l]));
    const space = linksOf(job.jobId);
    const rows = [...byKey].map(([url, link]): FoundPage => {
      const page = link.type === 'internal' ? job.pages.of(link.url) : undefined;
      // The link rides on its row, so that the coordinator can check it if this replica dies first.
      const result: LinkRowResult = page ? { link, page } : { link };
      return { url, depth: 0, fromSitemap: false, payload: JSON.stringify(result), done: page !== undefined };
    });
    const admitted = await this.deps.frontier.insert(space, rows, new Date(job.context.expiresAt), {
      owner: this.deps.owner,
      leaseMs: LINK_LEASE_MS,
    });
    const mine = admitted.queued.filter((row) => !row.done).map((row) => byKey.get(row.url) as FoundLink);
    await Promise.all(
      mine.map(async (link) => {
        let result: LinkRowResult;
        try {
          const checked: { outcome?: CheckOutcome } = {};
          const graded = await verdictFor(
            link,
            {
              page: source,
              pageTargets: targets ?? new PageTargets(),
              outcomeOf: async (u) => (checked.outcome = await job.checker.check(u)),
              targetsOf: async () => undefined,
            },
            // An in-page anchor is verified against this page; a link's fragments when the report is made.
            link.type === 'anchor' && job.context.checkFragments === true,
            job.rules.accepts,
            job.rules.fragments,
          );
          // Kept for the fragments other pages link it with (graded again when the report is made).
          const { outcome } = checked;
          const kept = job.context.checkFragments && link.type === 'internal' && outcome;
          result = { link, record: graded.record, ...(kept ? { outcome: withoutTargets(outcome) } : {}) };
        } catch (err) {
          if (job.signal.aborted) return; // out of time: left unchecked, as the crawl leaves it
          throw err;
        }
        await this.deps.frontier.finish(space, linkKey(link), this.deps.owner, JSON.stringify(result));
      }),
    );
  }
}

function withoutTargets(outcome: CheckOutcome): Omit<CheckOutcome, 'targets'> {
  const { targets: _, ...rest } = outcome;
  return rest;
}
