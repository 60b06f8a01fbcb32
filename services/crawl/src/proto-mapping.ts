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

/** Records made before resources were checked (a job stored by an older version) are anchors. */
function toLinkRecord(link: CheckedLink & Partial<Sourced>): LinkRecord {
  return {
    ...link,
    sources: link.sources ?? [],
    sourceCount: link.sourceCount,
    fragments: link.fragments ?? [],
    element: link.element ?? 'a',
  };
}

function toExtractedLink(
  { fragments: _, viaAnchor: __, element, ...link }: FoundLink & Partial<Sourced>,
  withElements: boolean,
): ExtractedLink {
  return {
    ...link,
    sources: link.sources ?? [],
    sourceCount: link.sourceCount,
    element: withElements ? element : undefined,
  };
}

export function toExtractResult({ withElements, ...result }: PageLinks | LinkExtractCrawlResult): ExtractResult {
  return { ...result, links: result.links.map((link) => toExtractedLink(link, withElements ?? false)) };
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
    // A result stored before resources were counted has no summary.resources.
    result: done && {
      ...done,
      summary: { ...done.summary, resources: done.summary.resources ?? 0 },
      links: done.links.map(toLinkRecord),
    },
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
