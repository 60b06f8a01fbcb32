import { invalidArgument, parseTargetUrl, type SafeHttp } from '@webutil/kit';
import type { MetaScanRequest, MetaScanResponse } from '@webutil/proto/webutil/metascan/v1/metascan';
import { type AuditInput, metaContent } from './checks.js';
import { type ImageProbe, probeImage, probeStatus, type StatusProbe } from './insight-probes.js';
import { insights, USER_AGENTS } from './insights.js';
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
 * The meta-tag audit: the page's head (read through the safe client, bounded, as the chosen
 * crawler when asked), then in parallel its robots.txt and sitemap, favicon, canonical URL and
 * share images, each within the site files' budget; then every check of the rubric and the insights.
 */
export async function metaScan(
  request: MetaScanRequest,
  deps: MetaScanDeps,
  signal: AbortSignal,
): Promise<MetaScanResponse> {
  const url = parseTargetUrl(request.url);
  const userAgent = request.userAgent;
  if (userAgent !== undefined && !(userAgent in USER_AGENTS)) {
    throw invalidArgument('INVALID_USER_AGENT', `userAgent must be one of ${Object.keys(USER_AGENTS).join(', ')}`);
  }
  const headers = userAgent ? { 'user-agent': USER_AGENTS[userAgent] as string } : undefined;
  const page = await readPage(
    url,
    deps.http,
    { timeoutMs: deps.pageTimeoutMs, maxHeadBytes: deps.maxHeadBytes, userAgent: headers?.['user-agent'] },
    signal,
  );
  const files: SiteFileOptions = { http: deps.http, timeoutMs: deps.fileTimeoutMs, signal, headers };
  const origin = page.url.origin;
  const declared = declaredIcon(page.head, page.url);
  const canonical = resolved(page.head, page.url, linkHref(page.head, 'canonical'));
  const ogImage = resolved(page.head, page.url, metaContent(page.head, 'og:image'));
  const twitterImage = resolved(page.head, page.url, metaContent(page.head, 'twitter:image'));
  const image = (src: string | undefined): Promise<ImageProbe | undefined> =>
    src ? probeImage(src, files) : Promise.resolve(undefined);
  const [{ robots, sitemap }, favicon, canonicalProbe, ogProbe, twitterProbe] = await Promise.all([
    probeRobots(origin, files).then(async (robots) => ({
      robots,
      sitemap: await probeSitemap(origin, robots.sitemaps, files),
    })),
    probeFavicon(declared, origin, files),
    canonical && canonical !== page.url.href
      ? probeStatus(canonical, files)
      : Promise.resolve<StatusProbe | undefined>(undefined),
    image(ogImage),
    twitterImage === ogImage ? Promise.resolve(undefined) : image(twitterImage),
  ]);
  const input: AuditInput = { url: page.url, headers: page.headers, head: page.head, robots, sitemap, favicon };
  return {
    url: page.url.href,
    ...scorecard(input),
    ...insights({
      url: page.url,
      status: page.status,
      redirects: page.redirects,
      headers: page.headers,
      head: page.head,
      robots,
      canonical: canonical ? { url: canonical, probe: canonicalProbe } : undefined,
      ogImage: ogProbe,
      twitterImage: twitterImage && twitterImage === ogImage ? ogProbe : twitterProbe,
      userAgent,
    }),
  };
}

/** The href of the first <link rel=…> of the given kind, as written. */
function linkHref(head: PageHead, rel: string): string | undefined {
  return head.links.find((l) => l.rel.includes(rel))?.href;
}

/** A URL of the page resolved against its base; undefined when absent or not an http(s) URL. */
function resolved(head: PageHead, pageUrl: URL, href: string | undefined): string | undefined {
  if (!href) return undefined;
  try {
    const base = head.baseHref ? new URL(head.baseHref, pageUrl) : pageUrl;
    const url = new URL(href, base);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
  } catch {
    return undefined;
  }
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
