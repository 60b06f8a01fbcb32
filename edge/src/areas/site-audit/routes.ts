/**
 * Site audits (decision 0441): a crawl job of every page of a site up to the plan's page cap,
 * priced by the pages it may audit; polls and issue pages are free.
 */
import { z } from 'zod';
import { HttpError, noStore } from '../../envelope.js';
import { jobInput, required } from '../../rest/common.js';
import { type BlockPrice, type Caller, download, type RouteSpec, route } from '../../route-spec.js';
import { CRAWL_START_ERRORS, crawlCaller, JOB_ERRORS, withdrawCrawlStart } from '../crawl/routes.js';
import { JobStarted, linkOptions } from '../crawl/schemas.js';
import { withWebhook } from '../webhooks/start.js';
import { auditCsv, issueCsv } from './export-csv.js';
import { reportPdfRoute } from './report-pdf.js';
import { AUDIT_PAGE_CAPS, issueInput, SiteAuditInput, SiteAuditIssuePage, SiteAuditJob } from './schemas.js';

/**
 * 2 credits per 100 pages the audit may fetch (its cap, held before the job starts): a block is
 * about a broken-link crawl's work for its 2 credits, page for page more (every page is audited).
 */
export const SITE_AUDIT_BLOCKS: BlockPrice = {
  size: 100,
  unit: 'pages',
  credits: 2,
  maxUnits: 100_000,
  settled:
    'the price of maxPages is held when the audit starts, and when it ends the price of the pages it audited ' +
    'is spent and the rest returned (all of it when the audit fails)',
};

/**
 * How long an audit's hold lasts: its time budget (decision 0441: a crawl's 6 minutes plus 150 ms
 * per page of the cap past 250) and the 30 minutes its job lives past it. A job that has not
 * settled by then never will: the hold returns whole.
 */
export function auditHoldMs(pagesCap: number): number {
  return 6 * 60_000 + Math.max(0, pagesCap - 250) * 150 + 30 * 60_000;
}

/** The page cap of the caller's plan (anonymous callers have the Free plan's). */
export function auditPageCap(caller: Pick<Caller, 'quota'>): number {
  return AUDIT_PAGE_CAPS[caller.quota.plan ?? 'FREE'] ?? (AUDIT_PAGE_CAPS.FREE as number);
}

export const siteAuditRoutes: RouteSpec[] = [
  withWebhook(
    route({
      method: 'POST',
      path: '/site-audit',
      operation: 'site-audit',
      summary:
        'Starts a site audit: every page up to the plan’s cap crawled once and checked for technical and SEO ' +
        'issues (status, redirects, canonicals, indexability, titles, descriptions, headings, hreflang, JSON-LD, ' +
        'images, mixed content, weight, speed, depth, duplicates, orphans, sitemap, broken links, and with ' +
        'checkFragments links to missing anchors); poll its job.',
      credits: 2,
      perBlock: SITE_AUDIT_BLOCKS,
      input: SiteAuditInput,
      output: JobStarted,
      status: 202,
      errors: { ...CRAWL_START_ERRORS, pages_over_plan: 400 },
      timeoutMs: 15_000,
      call: async (c, input, options, caller, price) => {
        const cap = auditPageCap(caller);
        if (input.maxPages !== undefined && input.maxPages > cap)
          throw new HttpError(
            400,
            'pages_over_plan',
            `maxPages ${input.maxPages} is over your plan's cap of ${cap} pages per audit`,
          );
        const pages = input.maxPages ?? cap;
        // The cap's price is held for the job's life and settled by the job (decision 0490).
        const held = await price(pages, { holdMs: auditHoldMs(pages) });
        return c.siteAudit.startSiteAudit(
          {
            url: input.url,
            checkFragments: input.checkFragments ?? false,
            caller: crawlCaller(caller),
            options: linkOptions({ ...input, maxPages: undefined }),
            maxPages: pages,
            creditHold: held && {
              reservationId: held.reservationId,
              credits: 2,
              blockSize: SITE_AUDIT_BLOCKS.size,
              blockCredits: SITE_AUDIT_BLOCKS.credits,
              operation: 'site-audit',
            },
          },
          options,
        );
      },
      withdraw: withdrawCrawlStart,
    }),
    'site-audit-status',
  ),
  route({
    method: 'GET',
    path: '/site-audit/:job_id',
    operation: 'site-audit-status',
    freeRead: 'job-poll',
    summary: 'A site audit’s progress, and its report once done (each issue with its first 20 affected URLs).',
    credits: 0,
    input: jobInput,
    output: SiteAuditJob,
    errors: JOB_ERRORS,
    timeoutMs: 15_000,
    call: (c, input, options) => c.siteAudit.getSiteAudit({ jobId: input.job_id }, options),
    headers: noStore,
    exports: auditCsv,
  }),
  route({
    method: 'GET',
    path: '/site-audit/:job_id/issues/:issue_id',
    operation: 'site-audit-issue',
    summary: 'One issue of a finished audit with its affected URLs, a page at a time (offset, limit).',
    credits: 0,
    input: issueInput,
    output: SiteAuditIssuePage,
    errors: { ...JOB_ERRORS, issue_not_found: 404, job_not_done: 409 },
    timeoutMs: 15_000,
    call: (c, input, options) =>
      c.siteAudit.getSiteAuditIssue(
        { jobId: input.job_id, issueId: input.issue_id, offset: input.offset ?? 0, limit: input.limit ?? 100 },
        options,
      ),
    headers: noStore,
    exports: issueCsv,
  }),
  reportPdfRoute,
];

/**
 * An audit's start-page screenshot (`site.screenshots`): free, no credential (the unguessable name is
 * the capability).
 */
export const siteAuditImageDownloads = [
  download({
    paths: ['/v1/site-audit-images/:filename'],
    operation: 'site-audit-image',
    summary:
      'A site audit’s screenshot of its start page (desktop or mobile) by the name in `site.screenshots`; kept ' +
      'as long as the audit’s job.',
    input: z.object({ filename: required('filename') }),
    nameParam: 'filename',
    disposition: 'inline',
    contentTypes: ['image/png', 'image/jpeg', 'image/webp'],
    errors: { file_not_found: 404 },
    timeoutMs: 60_000,
    call: (c, input, options) => c.siteAudit.readSiteAuditImage({ filename: input.filename }, options),
  }),
];
