import { bind, type Logger, type ServiceBinding } from '@webutil/kit';
import {
  type CheckLinksResponse,
  CrawlServiceService,
  type ExtractedLink,
  type ExtractResult,
  type GetBrokenLinkCrawlResponse,
  type GetLinkExtractCrawlResponse,
  type LinkRecord,
} from '@webutil/proto/webutil/crawl/v1/crawl';
import { checkLinks, type PageCheckDeps } from './check-links.js';
import { extractLinks } from './extract-links.js';
import type { CrawlJobs } from './jobs/jobs.js';
import type {
  CheckedLink,
  CrawlJobView,
  FoundLink,
  LinkExtractCrawlResult,
  PageCheck,
  PageLinks,
  Sourced,
} from './model.js';

/** RPC wiring, and the one place where the crawl's own types become proto messages. */
export function crawlService(deps: { pageCheck: PageCheckDeps; jobs: CrawlJobs }, log: Logger): ServiceBinding {
  return bind(
    CrawlServiceService,
    {
      extractLinks: async (request, ctx) => ({
        result: toExtractResult(await extractLinks(request.url, deps.pageCheck, ctx.signal)),
      }),
      checkLinks: async (request, ctx) =>
        toCheckLinksResponse(await checkLinks(request.url, deps.pageCheck, ctx.signal)),
      startBrokenLinkCrawl: async (request, ctx) => ({
        jobId: await deps.jobs.start('broken-links', request.url, ctx.requestId, ctx.signal),
      }),
      getBrokenLinkCrawl: async (request) => toBrokenLinkJob(await deps.jobs.get('broken-links', request.jobId)),
      startLinkExtractCrawl: async (request, ctx) => ({
        jobId: await deps.jobs.start('link-extract', request.url, ctx.requestId, ctx.signal),
      }),
      getLinkExtractCrawl: async (request) => toLinkExtractJob(await deps.jobs.get('link-extract', request.jobId)),
      withdrawStart: async (request) => ({ found: deps.jobs.withdraw(request.requestId) }),
    },
    log,
  );
}

function toLinkRecord(link: CheckedLink & Partial<Sourced>): LinkRecord {
  return { ...link, sources: link.sources ?? [], sourceCount: link.sourceCount };
}

function toExtractedLink(link: FoundLink & Partial<Sourced>): ExtractedLink {
  return { ...link, sources: link.sources ?? [], sourceCount: link.sourceCount };
}

function toExtractResult(result: PageLinks | LinkExtractCrawlResult): ExtractResult {
  return { ...result, links: result.links.map(toExtractedLink) };
}

function toCheckLinksResponse(check: PageCheck): CheckLinksResponse {
  return { ...check, links: check.links.map(toLinkRecord) };
}

function toBrokenLinkJob(job: CrawlJobView): GetBrokenLinkCrawlResponse {
  const done = job.result?.kind === 'broken-links' ? job.result.result : undefined;
  return {
    jobId: job.id,
    status: job.status,
    progress: job.progress,
    result: done && { ...done, links: done.links.map(toLinkRecord) },
    error: job.error,
  };
}

/** The extract crawl's progress is the subset its spec names, pagesCrawled as pagesScanned. */
function toLinkExtractJob(job: CrawlJobView): GetLinkExtractCrawlResponse {
  const p = job.progress;
  const done = job.result?.kind === 'link-extract' ? job.result.result : undefined;
  return {
    jobId: job.id,
    status: job.status,
    progress: {
      phase: p.phase,
      message: p.message,
      sitemapFound: p.sitemapFound,
      sitemapUrlCount: p.sitemapUrlCount,
      pagesScanned: p.pagesCrawled,
      pagesDiscovered: p.pagesDiscovered,
      pagesCap: p.pagesCap,
      linksFound: p.linksFound,
    },
    result: done && toExtractResult(done),
    error: job.error,
  };
}
