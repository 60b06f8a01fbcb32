/**
 * Page URLs as the crawl, the link checks and the job starts compare them: one normal form, and
 * which URLs are files rather than pages to read.
 */
import { sameSite } from './links.js';

/**
 * The form page URLs are deduplicated in: fragment dropped, an empty query dropped; the WHATWG
 * parser already lower-cases the host, drops the default port and resolves dot segments.
 */
export function normalizePageUrl(input: URL | string): string {
  return normalizeOwnUrl(new URL(input));
}

/** normalizePageUrl of a URL object the caller owns and no longer needs as it is (no copy made). */
export function normalizeOwnUrl(url: URL): string {
  // A URL's setters re-serialize it: each is used only when it changes something.
  let href = url.href;
  if (href.includes('#')) {
    url.hash = '';
    href = url.href;
  }
  if (href.endsWith('?') && !url.search) {
    url.search = ''; // drops a bare '?'
    href = url.href;
  }
  return href;
}

/** Extensions of files that are checked as links but never fetched as pages to parse. */
const NOT_A_PAGE = new RegExp(
  `\\.(?:${[
    'pdf|zip|gz|tgz|bz2|xz|7z|rar|tar|exe|dmg|iso|msi|apk', // documents, archives, installers
    'png|jpe?g|gif|webp|avif|svg|ico|bmp|tiff?', // images
    'mp[34]|m4[av]|mov|avi|mkv|webm|ogg|wav|flac', // audio and video
    'woff2?|ttf|otf|eot|css|js|mjs|json|xml|rss|atom|csv|xlsx?|docx?|pptx?|txt', // assets, data, office files
  ].join('|')})$`,
  'i',
);

export function looksLikePage(url: URL): boolean {
  return !NOT_A_PAGE.test(url.pathname);
}

/** The normal form of `url` when it is a page of `site` a crawl may fetch (http(s), same site, not a file). */
export function pageOf(url: string, site: URL): string | undefined {
  if (!URL.canParse(url)) return undefined;
  const parsed = new URL(url);
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return undefined;
  if (!sameSite(parsed, site) || !looksLikePage(parsed)) return undefined;
  return normalizeOwnUrl(parsed);
}

/** URLs kept by a SitePages (the latest asked); a site's navigation links recur on every page. */
const SITE_PAGES_KEPT = 4_096;
/** Longer URLs are answered but not kept: a hostile site's long links cannot fill the memory. */
const SITE_PAGES_URL_CHARS = 512;

/** pageOf for one site, remembering the answers for the URLs asked lately. */
export class SitePages {
  private readonly known = new Map<string, string | null>();

  constructor(readonly site: URL) {}

  /** URLs kept now. */
  get size(): number {
    return this.known.size;
  }

  of(url: string): string | undefined {
    const known = this.known.get(url);
    if (known !== undefined) return known ?? undefined;
    const page = pageOf(url, this.site);
    if (url.length > SITE_PAGES_URL_CHARS) return page;
    if (this.known.size >= SITE_PAGES_KEPT) this.known.clear();
    this.known.set(url, page ?? null);
    return page;
  }
}
