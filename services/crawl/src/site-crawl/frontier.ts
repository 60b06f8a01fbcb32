/**
 * The breadth-first page queue of a site crawl: which internal URLs are known, at what depth,
 * whether a sitemap listed them, and which ones a crawler trap would have us follow forever.
 */

/**
 * The form page URLs are deduplicated in: fragment dropped, an empty query dropped; the WHATWG
 * parser already lower-cases the host, drops the default port and resolves dot segments.
 */
export function normalizePageUrl(input: URL | string): string {
  const url = new URL(input);
  url.hash = '';
  if (!url.search) url.search = ''; // drops a bare '?'
  return url.href;
}

/**
 * The "shape" of a URL: digits become #, query values are dropped, keys sorted. A chain of pages
 * of one shape, each found only on the previous (next month, next day, page=N+1), is how
 * calendar-style traps look.
 */
export function urlShape(url: URL): string {
  const keys = [...new Set(url.searchParams.keys())].sort().join('&');
  return `${url.pathname.toLowerCase().replace(/\d+/g, '#')}?${keys}`;
}

/** Extensions of files that are checked as links but never fetched as pages to parse. */
const NOT_A_PAGE =
  /\.(?:pdf|zip|gz|tgz|bz2|xz|7z|rar|tar|exe|dmg|iso|msi|apk|png|jpe?g|gif|webp|avif|svg|ico|bmp|tiff?|mp[34]|m4[av]|mov|avi|mkv|webm|ogg|wav|flac|woff2?|ttf|otf|eot|css|js|mjs|json|xml|rss|atom|csv|xlsx?|docx?|pptx?|txt)$/i;

export function looksLikePage(url: URL): boolean {
  return !NOT_A_PAGE.test(url.pathname);
}

export interface QueuedPage {
  url: string;
  depth: number;
  fromSitemap: boolean;
  /** How many same-shape hops led here (0 when the parent has another shape). */
  shapeChain: number;
  shape: string;
}

export interface FrontierOptions {
  /** Same-shape chains longer than this are not followed (crawler-trap guard). */
  maxShapeChain: number;
  /** Pages known at most (crawled, claimed and queued); past it new URLs are not kept. */
  maxKnown: number;
}

/**
 * Level-by-level BFS: `nextLevel()` hands out the queued pages of the lowest depth, in discovery
 * order. A crawler that takes a level only once the previous one is read gets exact depths.
 */
export class Frontier {
  private readonly known = new Map<string, QueuedPage>();
  /** URLs reached by a redirect from a crawled page: known, never queued. */
  private readonly claimed = new Set<string>();
  private readonly sitemapListed = new Set<string>();
  private pending: QueuedPage[] = [];
  /** URLs refused as a crawler trap. */
  trapped = 0;
  /** URLs not kept because the frontier was full. */
  overflowed = 0;

  constructor(private readonly options: FrontierOptions) {}

  /** Pages known: crawled, being crawled or queued. */
  get discovered(): number {
    return this.known.size + this.claimed.size;
  }

  /** Pages queued and not yet handed out. */
  get queued(): number {
    return this.pending.length;
  }

  has(url: string): boolean {
    return this.known.has(url) || this.claimed.has(url);
  }

  /** The entry page, depth 0. */
  seed(url: string): void {
    this.push({
      url,
      depth: 0,
      fromSitemap: this.sitemapListed.has(url),
      shapeChain: 0,
      shape: urlShape(new URL(url)),
    });
  }

  /**
   * Adds a page found on `parent`. Returns false when it is already known or refused as a trap.
   * The URL must already be normalised.
   */
  addLink(url: string, parent: QueuedPage): boolean {
    if (this.has(url) || this.full()) return false;
    const shape = urlShape(new URL(url));
    const shapeChain = shape === parent.shape ? parent.shapeChain + 1 : 0;
    if (shapeChain > this.options.maxShapeChain) {
      this.trapped++;
      return false;
    }
    this.push({ url, depth: parent.depth + 1, fromSitemap: this.sitemapListed.has(url), shapeChain, shape });
    return true;
  }

  /**
   * Sitemap URLs count as linked from the entry page (depth 1); pages already known are only
   * marked as listed.
   */
  addFromSitemap(urls: Iterable<string>): void {
    for (const url of urls) {
      this.sitemapListed.add(url);
      const page = this.known.get(url);
      if (page) page.fromSitemap = true;
      else if (!this.claimed.has(url) && !this.full())
        this.push({ url, depth: 1, fromSitemap: true, shapeChain: 0, shape: urlShape(new URL(url)) });
    }
  }

  /** Marks a URL as known without queuing it (where a crawled page's redirect landed). */
  claim(url: string): void {
    if (!this.has(url) && !this.full()) this.claimed.add(url);
  }

  /** Removes and returns the queued pages of the lowest depth, at most `limit` of them. */
  nextLevel(limit: number): QueuedPage[] {
    if (this.pending.length === 0 || limit <= 0) return [];
    // A loop, not Math.min(...depths): spreading 125,000+ arguments overflows the stack.
    let depth = Number.POSITIVE_INFINITY;
    for (const page of this.pending) if (page.depth < depth) depth = page.depth;
    const level: QueuedPage[] = [];
    const rest: QueuedPage[] = [];
    for (const page of this.pending) {
      if (page.depth === depth && level.length < limit) level.push(page);
      else rest.push(page);
    }
    this.pending = rest;
    return level;
  }

  /** Counts a URL refused for room; true when there is none. */
  private full(): boolean {
    if (this.discovered < this.options.maxKnown) return false;
    this.overflowed++;
    return true;
  }

  private push(page: QueuedPage): void {
    this.known.set(page.url, page);
    this.pending.push(page);
  }
}
