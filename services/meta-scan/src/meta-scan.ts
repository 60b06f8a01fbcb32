import { parseTargetUrl, type SafeHttp } from '@webutil/kit';
import type { MetaScanResponse } from '@webutil/proto/webutil/metascan/v1/metascan';
import type { AuditInput } from './checks.js';
import { readPage } from './page.js';
import type { PageHead } from './page-head.js';
import { scorecard } from './scorecard.js';
import { probeIcon, probeRobots, probeSitemap, type SiteFileOptions } from './site-files.js';

export interface MetaScanDeps {
  http: SafeHttp;
  /** Budget for fetching the page, redirects included. */
  pageTimeoutMs: number;
  /** Budget for each of robots.txt, the sitemap and the favicon. */
  fileTimeoutMs: number;
  /** Bytes of the page read at most while looking for the end of its head. */
  maxHeadBytes: number;
}

/**
 * The meta-tag audit: the page's head (read through the safe client, bounded), then its
 * robots.txt, sitemap and favicon in parallel, then every check of the rubric.
 */
export async function metaScan(rawUrl: string, deps: MetaScanDeps, signal: AbortSignal): Promise<MetaScanResponse> {
  const page = await readPage(
    parseTargetUrl(rawUrl),
    deps.http,
    { timeoutMs: deps.pageTimeoutMs, maxHeadBytes: deps.maxHeadBytes },
    signal,
  );
  const files: SiteFileOptions = { http: deps.http, timeoutMs: deps.fileTimeoutMs, signal };
  const origin = page.url.origin;
  const declared = declaredIcon(page.head, page.url);
  const [{ robots, sitemap }, favicon] = await Promise.all([
    probeRobots(origin, files).then(async (robots) => ({
      robots,
      sitemap: await probeSitemap(origin, robots.sitemaps, files),
    })),
    probeFavicon(declared, origin, files),
  ]);
  const input: AuditInput = { url: page.url, headers: page.headers, head: page.head, robots, sitemap, favicon };
  return { url: page.url.href, ...scorecard(input) };
}

/** The first <link rel="icon"> (or "shortcut icon"), resolved against the page's base. */
function declaredIcon(head: PageHead, pageUrl: URL): string | undefined {
  const href = head.links.find((l) => l.rel.includes('icon'))?.href;
  if (!href) return undefined;
  try {
    const base = head.baseHref ? new URL(head.baseHref, pageUrl) : pageUrl;
    return new URL(href, base).href;
  } catch {
    return href;
  }
}

/** The declared icon, and /favicon.ico only when there is none or it does not work. */
async function probeFavicon(
  declared: string | undefined,
  origin: string,
  files: SiteFileOptions,
): Promise<AuditInput['favicon']> {
  const declaredProbe = declared ? await probeIcon(declared, files) : undefined;
  const fallbackProbe =
    declaredProbe?.kind === 'ok' ? undefined : await probeIcon(new URL('/favicon.ico', origin).href, files);
  return { declared, declaredProbe, fallbackProbe };
}
