import { bind, type Logger, type ServiceBinding } from '@webutil/kit';
import { CrawlServiceService } from '@webutil/proto/webutil/crawl/v1/crawl';
import { extractLinks, type ExtractDeps } from './link-extract.js';

export function crawlService(deps: ExtractDeps, log: Logger): ServiceBinding {
  return bind(
    CrawlServiceService,
    {
      extractLinks: async (request, ctx) => ({ result: await extractLinks(request.url, deps, ctx.signal) }),
    },
    log,
  );
}
