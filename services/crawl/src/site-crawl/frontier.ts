/**
 * The breadth-first page queue of a site crawl: which internal URLs are known, at what depth,
 * whether a sitemap listed them, and which ones a crawler trap would have us follow forever.
 */

/**
 * The "shape" of a URL: digits become #, query values are dropped, keys sorted. A chain of pages
 * of one shape, each found only on the previous (next month, next day, page=N+1), is how
 * calendar-style traps look.
 */
export function urlShape(url: URL): string {
  const keys = [...new Set(url.searchParams.keys())].sort().join('&');
  return `${url.pathname.toLowerCase().replace(/\d+/g, '#')}?${keys}`;
}

/** A page's place in same-shape chains: its URL's shape and how many same-shape hops led to it. */
export interface ShapedPage {
  shape: string;
  shapeChain: number;
}

/**
 * The crawler-trap guard, shared by both audit engines: the same-shape chain a page of `shape`
 * found on `parent` continues (0 when the parent has another shape), or undefined when that chain
 * is longer than `maxShapeChain` (the link is not followed).
 */
export function shapeChainOf(shape: string, parent: ShapedPage, maxShapeChain: number): number | undefined {
  const shapeChain = shape === parent.shape ? parent.shapeChain + 1 : 0;
  return shapeChain > maxShapeChain ? undefined : shapeChain;
}

export interface QueuedPage extends ShapedPage {
  url: string;
  /** Breadth-first depth: lowered while the page waits if a shallower page links to it. */
  depth: number;
  fromSitemap: boolean;
}

/** A known page and whether it was handed out. */
interface KnownPage extends QueuedPage {
  taken: boolean;
}

export interface FrontierOptions {
  /** Same-shape chains longer than this are not followed (crawler-trap guard). */
  maxShapeChain: number;
  /** Pages known at most (crawled, claimed and queued); past it new URLs are not kept. */
  maxKnown: number;
}

/**
 * Breadth first without a level barrier. `take()` hands out the queued page of the lowest depth
 * (in discovery order within a depth) as soon as no source that could still find a shallower page
 * is being read: a page of depth d starts once nothing of depth d - 2 or less is being read
 * (sources are pages between `take()` and `finishReading()`, and the sitemap, read as depth 0).
 * Pages of depth d - 1 may still be read then; what they find is depth d, after it in order. So
 * every depth is the true breadth-first depth (a queued page found again from a shallower one
 * moves up), and with a cap the pages handed out are the first ones in breadth-first order.
 */
export class Frontier {
  private readonly known = new Map<string, KnownPage>();
  /** URLs reached by a redirect from a crawled page: known, never queued. */
  private readonly claimed = new Set<string>();
  private readonly sitemapListed = new Set<string>();
  /**
   * Queued pages by depth, in discovery order (`heads` is where each queue starts). A page moved
   * up stays in its old queue too; it is skipped there (its depth no longer matches).
   */
  private readonly queues: KnownPage[][] = [];
  private readonly heads: number[] = [];
  /** Sources being read, by depth. */
  private readonly reading: number[] = [];
  private waiting = 0;
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
    return this.waiting;
  }

  /** Whether any source (a page handed out, the sitemap) is still being read. */
  get busy(): boolean {
    return this.reading.some((n) => n > 0);
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
      taken: false,
    });
  }

  /**
   * Adds a page found on `parent`. Returns false when it is already known or refused as a trap;
   * a known page still queued moves up to the depth this link gives it, if that is lower.
   * The URL must already be normalised.
   */
  addLink(url: string, parent: QueuedPage): boolean {
    const known = this.known.get(url);
    if (known) {
      if (!known.taken && parent.depth + 1 < known.depth) {
        const shapeChain = shapeChainOf(known.shape, parent, this.options.maxShapeChain);
        if (shapeChain !== undefined) this.moveUp(known, parent.depth + 1, shapeChain);
      }
      return false;
    }
    if (this.claimed.has(url) || this.full()) return false;
    const shape = urlShape(new URL(url));
    const shapeChain = shapeChainOf(shape, parent, this.options.maxShapeChain);
    if (shapeChain === undefined) {
      this.trapped++;
      return false;
    }
    this.push({
      url,
      depth: parent.depth + 1,
      fromSitemap: this.sitemapListed.has(url),
      shapeChain,
      shape,
      taken: false,
    });
    return true;
  }

  /**
   * Sitemap URLs count as linked from the entry page (depth 1); pages already known are only
   * marked as listed (and moved up to depth 1 if still queued deeper).
   */
  addFromSitemap(urls: Iterable<string>): void {
    for (const url of urls) {
      this.sitemapListed.add(url);
      const page = this.known.get(url);
      if (page) {
        page.fromSitemap = true;
        if (!page.taken && page.depth > 1) this.moveUp(page, 1, 0);
      } else if (!this.claimed.has(url) && !this.full())
        this.push({ url, depth: 1, fromSitemap: true, shapeChain: 0, shape: urlShape(new URL(url)), taken: false });
    }
  }

  /** Marks a URL as known without queuing it (where a crawled page's redirect landed). */
  claim(url: string): void {
    if (!this.has(url) && !this.full()) this.claimed.add(url);
  }

  /**
   * The next page to read, counted as being read until `finishReading(page.depth)`; undefined
   * when none is queued, or the next one must wait for shallower sources to be read.
   */
  take(): QueuedPage | undefined {
    for (let depth = 0; depth < this.queues.length; depth++) {
      const queue = this.queues[depth] as KnownPage[];
      let head = this.heads[depth] as number;
      while (head < queue.length && (queue[head] as KnownPage).depth !== depth) head++;
      this.heads[depth] = head;
      if (head === queue.length) {
        if (head > 0) queue.length = this.heads[depth] = 0;
        continue;
      }
      for (let shallower = 0; shallower <= depth - 2; shallower++) if ((this.reading[shallower] ?? 0) > 0) return;
      const page = queue[head] as KnownPage;
      this.heads[depth] = head + 1;
      page.taken = true;
      this.waiting--;
      this.startReading(depth);
      return page;
    }
    return undefined;
  }

  /** A source at `depth` is being read: what it finds is depth + 1. */
  startReading(depth: number): void {
    this.reading[depth] = (this.reading[depth] ?? 0) + 1;
  }

  /** The source is read and its links added (or it was given up). */
  finishReading(depth: number): void {
    this.reading[depth] = (this.reading[depth] ?? 1) - 1;
  }

  /** Counts a URL refused for room; true when there is none. */
  private full(): boolean {
    if (this.discovered < this.options.maxKnown) return false;
    this.overflowed++;
    return true;
  }

  private push(page: KnownPage): void {
    this.known.set(page.url, page);
    this.waiting++;
    this.enqueue(page);
  }

  private moveUp(page: KnownPage, depth: number, shapeChain: number): void {
    page.depth = depth;
    page.shapeChain = shapeChain;
    this.enqueue(page);
  }

  private enqueue(page: KnownPage): void {
    while (this.queues.length <= page.depth) {
      this.queues.push([]);
      this.heads.push(0);
    }
    (this.queues[page.depth] as KnownPage[]).push(page);
  }
}
