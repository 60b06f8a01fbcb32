import type { PageLinks } from './model.js';
import { type PageReadDeps, readPageLinks } from './page/fetch.js';
import { countLinks } from './page/links.js';

/**
 * ExtractLinks (GET /v1/link-extract): every link of one page, typed and resolved, no status
 * checked. With `includeResources`, the page's resources too, each naming its element, and counted.
 */
export async function extractLinks(
  rawUrl: string,
  deps: PageReadDeps,
  signal: AbortSignal,
  includeResources = false,
): Promise<PageLinks> {
  const { url, res, collector } = await readPageLinks(rawUrl, deps, signal, { resources: includeResources });
  const counts = countLinks(collector.links);
  return {
    url: url.href,
    scannedAt: new Date().toISOString(),
    totalLinks: counts.total,
    truncated: collector.truncated || res.truncated,
    counts,
    links: collector.links,
    withElements: includeResources,
  };
}
