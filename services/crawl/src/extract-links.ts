import type { PageLinks } from './model.js';
import { type PageReadDeps, readPageLinks } from './page/fetch.js';
import { countLinks } from './page/links.js';
import { fetchCssWith, StylesheetReader, withStylesheetLinks } from './page/stylesheets.js';

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
  let links = collector.links;
  if (includeResources) {
    // The site's stylesheets are read for the URLs in them, as a check reads them.
    const fetchCss = fetchCssWith(
      deps.http,
      { timeoutMs: deps.pageTimeoutMs, maxBodyBytes: deps.maxPageBytes },
      signal,
    );
    const sheets = new StylesheetReader(fetchCss, deps.linksPerPage, false, signal);
    links = withStylesheetLinks([...links], await sheets.linksOf(links));
    if (signal.aborted) throw signal.reason;
  }
  const counts = countLinks(links);
  return {
    url: url.href,
    scannedAt: new Date().toISOString(),
    totalLinks: counts.total,
    truncated: collector.truncated || res.truncated,
    counts,
    links,
    withElements: includeResources,
  };
}
