import { bind, type Logger, type ServiceBinding } from '@webutil/kit';
import type { ArtifactStore } from '@webutil/kit/artifacts';
import { CrawlServiceService } from '@webutil/proto/webutil/crawl/v1/crawl';
import { SiteAuditServiceService } from '@webutil/proto/webutil/crawl/v1/site_audit';
import { BookmarkChecks } from './bookmark-check/jobs.js';
import { checkLinks, type PageCheckDeps } from './check-links.js';
import { extractLinks } from './extract-links.js';
import type { AuditPageStore } from './jobs/audit-pages.js';
import type { CrawlReader } from './jobs/read.js';
import type { CrawlStarts } from './jobs/start.js';
import { toBrokenLinkJob, toCheckLinksResponse, toExtractResult, toLinkExtractJob } from './proto-mapping.js';
import { scanOptionsOf } from './scan-options.js';
import { readAuditImage } from './site-audit/audit-images.js';
import { SiteAudits } from './site-audit/jobs.js';

export interface CrawlServiceDeps {
  pageCheck: PageCheckDeps;
  starts: CrawlStarts;
  reader: CrawlReader;
}

/** Each RPC bound to its handler; jobs are run by the workers main.ts wires to the transport. */
export function crawlService(deps: CrawlServiceDeps, log: Logger): ServiceBinding {
  const bookmarks = new BookmarkChecks(deps.starts, deps.reader);
  return bind(
    CrawlServiceService,
    {
      extractLinks: async (request, ctx) => ({
        result: toExtractResult(
          await extractLinks(request.url, deps.pageCheck, ctx.signal, request.includeResources ?? false),
        ),
      }),
      checkLinks: async (request, ctx) =>
        toCheckLinksResponse(
          await checkLinks(
            request.url,
            { checkFragments: request.checkFragments ?? false, scan: scanOptionsOf(request.options) },
            deps.pageCheck,
            ctx.signal,
          ),
        ),
      startBrokenLinkCrawl: async (request, ctx) => ({
        jobId: await deps.starts.start('broken-links', request.url, ctx.requestId, ctx.signal, request.caller, {
          checkFragments: request.checkFragments ?? false,
          scan: scanOptionsOf(request.options),
        }),
      }),
      getBrokenLinkCrawl: async (request) => toBrokenLinkJob(await deps.reader.get('broken-links', request.jobId)),
      startLinkExtractCrawl: async (request, ctx) => ({
        jobId: await deps.starts.start('link-extract', request.url, ctx.requestId, ctx.signal, request.caller, {
          checkFragments: false,
          scan: scanOptionsOf(request.options),
        }),
      }),
      getLinkExtractCrawl: async (request) => toLinkExtractJob(await deps.reader.get('link-extract', request.jobId)),
      withdrawStart: async (request) => ({ found: deps.starts.withdraw(request.requestId) }),
      startBookmarkCheck: async (request, ctx) => ({
        jobId: await bookmarks.start(request, ctx.requestId, ctx.signal),
      }),
      getBookmarkCheck: (request) => bookmarks.get(request.jobId),
      getBookmarkCheckEdits: (request) => bookmarks.edits(request),
    },
    log,
  );
}

/** The site audit's RPCs: crawl jobs of their own kind, run by the same workers. */
export function siteAuditService(
  deps: Pick<CrawlServiceDeps, 'starts' | 'reader'> & { auditPages?: AuditPageStore; images: ArtifactStore },
  log: Logger,
): ServiceBinding {
  const audits = new SiteAudits(deps.starts, deps.reader, deps.auditPages);
  return bind(
    SiteAuditServiceService,
    {
      startSiteAudit: async (request, ctx) => ({ jobId: await audits.start(request, ctx.requestId, ctx.signal) }),
      getSiteAudit: (request) => audits.get(request.jobId),
      getSiteAuditIssue: (request) => audits.issue(request),
      readSiteAuditImage: (request, ctx, send) => readAuditImage(request, deps.images, ctx, send),
    },
    log,
  );
}
