import type {
  CheckLinksResponse,
  ExtractedLink,
  ExtractResult,
  GetBrokenLinkCrawlResponse,
  GetLinkExtractCrawlResponse,
  LinkRecord,
} from '@webutil/proto/webutil/crawl/v1/crawl';
import type {
  CheckedLink,
  CrawlJobView,
  FoundLink,
  LinkExtractCrawlResult,
  PageCheck,
  PageLinks,
  Sourced,
} from './model.js';

/** The one place where the crawl's own types become proto messages. */

function toLinkRecord(link: CheckedLink & Partial<Sourced>): LinkRecord {
  return { ...link, sources: link.sources ?? [], sourceCount: link.sourceCount, fragments: link.fragments ?? [] };
}

function toExtractedLink({ fragments: _, ...link }: FoundLink & Partial<Sourced>): ExtractedLink {
  return { ...link, sources: link.sources ?? [], sourceCount: link.sourceCount };
}

export function toExtractResult(result: PageLinks | LinkExtractCrawlResult): ExtractResult {
  return { ...result, links: result.links.map(toExtractedLink) };
}

export function toCheckLinksResponse(check: PageCheck): CheckLinksResponse {
  return { ...check, links: check.links.map(toLinkRecord) };
}

export function toBrokenLinkJob(job: CrawlJobView): GetBrokenLinkCrawlResponse {
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
export function toLinkExtractJob(job: CrawlJobView): GetLinkExtractCrawlResponse {
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
