import { setTimeout as sleep } from 'node:timers/promises';
import robotsParserModule from 'robots-parser';

// The package is CommonJS (module.exports = the function) but its types declare a default export,
// which NodeNext reads as module.exports.default.
const robotsParser = robotsParserModule as unknown as typeof robotsParserModule.default;

/** The product token robots.txt groups are matched against (the User-Agent names it too). */
export const ROBOTS_AGENT = 'WebUtilBot';
/** robots.txt read at most (RFC 9309 asks crawlers to read at least 500 KiB). */
export const MAX_ROBOTS_BYTES = 512 * 1024;
/** Longest Crawl-delay honoured; a longer one is cut to this. */
export const MAX_CRAWL_DELAY_MS = 5_000;

/** What a site's robots.txt lets the crawl fetch. */
export interface RobotsRules {
  /** Whether the crawl may fetch this page (a URL of the rules' origin). */
  allows(url: string): boolean;
  /** Pause between two page fetches on the origin, capped at MAX_CRAWL_DELAY_MS. */
  crawlDelayMs: number;
  /** The `Sitemap:` URLs it names, resolved against its own URL. */
  sitemaps: string[];
  /** Why nothing answered for robots.txt (the origin is down or blocked), when nothing did. */
  failure?: { kind: string; code: string; message: string };
}

/** A GET's final status (undefined when nothing answered) and, for a 2xx, what `read` made of its body. */
export type FetchFile = <T>(
  url: string,
  read: (body: AsyncIterable<Buffer>) => Promise<T>,
) => Promise<{
  status: number | undefined;
  value: T | undefined;
  error?: { kind: string; code: string; message: string };
}>;

/**
 * Reads the robots.txt of `origin` as RFC 9309 says: a 2xx is parsed (groups for our agent or
 * `*`, the longest matching Allow/Disallow wins, Allow on a tie); a 4xx other than 429 (no file)
 * allows everything; a 5xx, a 429 or no answer at all means the site could not say, and nothing
 * is fetched.
 */
export async function readRobots(origin: string, fetchFile: FetchFile): Promise<RobotsRules> {
  const url = new URL('/robots.txt', origin).href;
  const { status, value, error } = await fetchFile(url, (body) => readText(body, MAX_ROBOTS_BYTES));
  if (status !== undefined && status >= 200 && status < 300) return rulesOf(url, value ?? '');
  const unreachable = status === undefined || status === 429 || status >= 500;
  return { allows: () => !unreachable, crawlDelayMs: 0, sitemaps: [], failure: error };
}

/** The rules of a robots.txt's text. */
export function rulesOf(url: string, text: string): RobotsRules {
  const robots = robotsParser(url, text);
  const delaySeconds = robots.getCrawlDelay(ROBOTS_AGENT) ?? 0;
  return {
    allows: (page) => robots.isAllowed(page, ROBOTS_AGENT) !== false,
    crawlDelayMs: Math.min(MAX_CRAWL_DELAY_MS, Math.max(0, delaySeconds * 1000)) || 0,
    // The protocol wants absolute URLs; relative ones are common and resolved as crawlers do.
    sitemaps: robots.getSitemaps().flatMap((s) => (URL.canParse(s, url) ? [new URL(s, url).href] : [])),
  };
}

/** A body as text, up to `maxBytes`. */
export async function readText(body: AsyncIterable<Buffer>, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= maxBytes) break;
  }
  return Buffer.concat(chunks).subarray(0, maxBytes).toString('utf8');
}

/** Origins (of the one site: www or not, ports) whose robots.txt a crawl reads at most. */
const MAX_ROBOTS_ORIGINS = 8;

/** One crawl's robots.txt rules, each origin's read once before its first page, and its Crawl-delay turns. */
export class CrawlRobots {
  private readonly rules = new Map<string, Promise<RobotsRules>>();
  /** When each origin's next page fetch may start, under its Crawl-delay. */
  private readonly nextFetchAt = new Map<string, number>();

  constructor(
    private readonly fetchFile: FetchFile,
    private readonly signal: AbortSignal,
  ) {}

  /** The origin's rules; past MAX_ROBOTS_ORIGINS origins, nothing more is fetched. */
  of(origin: string): Promise<RobotsRules> {
    let rules = this.rules.get(origin);
    if (!rules) {
      if (this.rules.size >= MAX_ROBOTS_ORIGINS)
        return Promise.resolve({ allows: () => false, crawlDelayMs: 0, sitemaps: [] });
      rules = readRobots(origin, this.fetchFile);
      this.rules.set(origin, rules);
    }
    return rules;
  }

  /** Waits for the origin's Crawl-delay since the page fetch before (no wait without one). */
  async turn(origin: string, delayMs: number): Promise<void> {
    if (delayMs <= 0) return;
    const now = Date.now();
    const at = Math.max(now, this.nextFetchAt.get(origin) ?? 0);
    this.nextFetchAt.set(origin, at + delayMs);
    if (at > now) await sleep(at - now, undefined, { signal: this.signal });
  }
}
