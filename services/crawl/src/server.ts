import { bind, type Logger, type ServiceBinding } from '@webutil/kit';
import { CrawlServiceService } from '@webutil/proto/webutil/crawl/v1/crawl';
import { checkPageLinks, type PageCheckDeps } from './broken-links.js';
import { brokenLinkJobView, linkExtractJobView, type CrawlJobs } from './jobs.js';
import { extractLinks, type ExtractDeps } from './link-extract.js';

export interface CrawlServiceDeps {
  extract: ExtractDeps;
  pageCheck: PageCheckDeps;
  jobs: CrawlJobs;
}

export function crawlService(deps: CrawlServiceDeps, log: Logger): ServiceBinding {
  return bind(
    CrawlServiceService,
    {
      extractLinks: async (request, ctx) => ({ result: await extractLinks(request.url, deps.extract, ctx.signal) }),
      checkLinks: (request, ctx) => checkPageLinks(request.url, deps.pageCheck, ctx.signal),
      startBrokenLinkCrawl: async (request) => ({ jobId: await deps.jobs.start('broken-links', request.url) }),
      getBrokenLinkCrawl: async (request) => brokenLinkJobView(await deps.jobs.get('broken-links', request.jobId)),
      startLinkExtractCrawl: async (request) => ({ jobId: await deps.jobs.start('link-extract', request.url) }),
      getLinkExtractCrawl: async (request) => linkExtractJobView(await deps.jobs.get('link-extract', request.jobId)),
    },
    log,
  );
}
