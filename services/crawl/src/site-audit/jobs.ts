import { failedPrecondition, invalidArgument, notFound } from '@webutil/kit';
import type {
  GetSiteAuditIssueRequest,
  GetSiteAuditIssueResponse,
  GetSiteAuditResponse,
  StartSiteAuditRequest,
} from '@webutil/proto/webutil/crawl/v1/site_audit';
import { StartSiteAuditRequest as contract } from '@webutil/proto/webutil/crawl/v1/site_audit.fields';
import type { AuditPageStore } from '../jobs/audit-pages.js';
import type { CrawlReader } from '../jobs/read.js';
import type { CrawlStarts } from '../jobs/start.js';
import type { CrawlJobView } from '../model.js';
import { scanOptionsOf } from '../scan-options.js';
import { forPoll, issuePage } from './report.js';

const PAGES = contract.fields.maxPages.bounds;

/** The site audit's RPCs over the crawl job roles (start.ts, read.ts): a crawl job of kind `site-audit`. */
export class SiteAudits {
  constructor(
    private readonly starts: CrawlStarts,
    private readonly reader: CrawlReader,
    /** Where finished audits' affected URLs are (decision 0472). */
    private readonly auditPages?: AuditPageStore,
  ) {}

  async start(request: StartSiteAuditRequest, requestId: string, signal: AbortSignal): Promise<string> {
    const pages = request.maxPages;
    if (!Number.isInteger(pages) || pages < PAGES.min || pages > PAGES.max)
      throw invalidArgument('INVALID_OPTION', `maxPages must be an integer from ${PAGES.min} to ${PAGES.max}`);
    const { maxPages: _, ...scan } = scanOptionsOf(request.options) ?? {};
    return this.starts.start('site-audit', request.url, requestId, signal, request.caller, {
      checkFragments: request.checkFragments ?? false,
      scan: { ...scan, maxPages: pages, ...(request.creditHold ? { creditHold: request.creditHold } : {}) },
    });
  }

  async get(jobId: string): Promise<GetSiteAuditResponse> {
    return toSiteAuditJob(await this.reader.get('site-audit', jobId));
  }

  async issue(request: GetSiteAuditIssueRequest): Promise<GetSiteAuditIssueResponse> {
    const job = await this.reader.get('site-audit', request.jobId);
    if (job.status !== 'done' || job.result?.kind !== 'site-audit')
      throw failedPrecondition('JOB_NOT_DONE', 'the audit has not finished: its issues come with its report');
    const stored = this.auditPages && { store: this.auditPages, jobId: job.id };
    const issue = await issuePage(job.result.result, request.issueId, request.offset, request.limit, stored);
    if (!issue)
      throw notFound('ISSUE_NOT_FOUND', `the audit found no issue ${request.issueId.slice(0, 64)} (see its issues)`);
    return { jobId: job.id, issue, offset: request.offset };
  }
}

export function toSiteAuditJob(job: CrawlJobView): GetSiteAuditResponse {
  const p = job.progress;
  return {
    jobId: job.id,
    status: job.status,
    progress: {
      phase: p.phase,
      message: p.message,
      sitemapFound: p.sitemapFound,
      sitemapUrlCount: p.sitemapUrlCount,
      pagesAudited: p.pagesCrawled,
      pagesDiscovered: p.pagesDiscovered,
      pagesCap: p.pagesCap,
      linksFound: p.linksFound,
      linksChecked: p.linksChecked,
    },
    result: job.result?.kind === 'site-audit' ? forPoll(job.result.result) : undefined,
    error: job.error,
  };
}
