import zlib from 'node:zlib';
import { Parser } from 'htmlparser2';

/**
 * Sitemaps as crawl seeds: `Sitemap:` lines of robots.txt plus /sitemap.xml, sitemap indexes
 * followed (a few levels deep), gzip children (`.xml.gz`, served as bytes) decoded.
 */

export interface FetchedFile {
  status: number;
  body: Buffer;
}

/** Fetches a file (bounded); undefined when nothing answered. */
export type FetchFile = (url: string) => Promise<FetchedFile | undefined>;

export interface SitemapLimits {
  /** Sitemap files read at most (indexes included). */
  maxFiles: number;
  /** Page URLs collected at most. */
  maxUrls: number;
  /** Decoded size of one sitemap at most (gzip bombs stop here). */
  maxBytes: number;
}

export interface SitemapDiscovery {
  /** Whether at least one sitemap was read. */
  found: boolean;
  /** Page URLs listed, deduplicated, in the order read. */
  urls: string[];
}

const MAX_INDEX_DEPTH = 3;

/** The `Sitemap:` URLs of a robots.txt, resolved against its own URL. */
export function robotsSitemaps(robotsTxt: string, robotsUrl: string): string[] {
  const found: string[] = [];
  for (const line of robotsTxt.split(/\r?\n/)) {
    const m = /^\s*sitemap\s*:\s*(\S+)/i.exec(line);
    if (!m?.[1]) continue;
    try {
      found.push(new URL(m[1], robotsUrl).href);
    } catch {
      // A malformed line names nothing.
    }
  }
  return found;
}

export interface ParsedSitemap {
  kind: 'urlset' | 'sitemapindex' | 'other';
  locs: string[];
}

/** Reads `<loc>` entries of a `<urlset>` or a `<sitemapindex>` (namespace prefixes ignored). */
export function parseSitemap(xml: string): ParsedSitemap {
  let kind: ParsedSitemap['kind'] = 'other';
  const locs: string[] = [];
  let inLoc = false;
  let text = '';
  const local = (name: string) => name.slice(name.indexOf(':') + 1).toLowerCase();
  const parser = new Parser(
    {
      onopentag: (name) => {
        const tag = local(name);
        if (kind === 'other' && (tag === 'urlset' || tag === 'sitemapindex')) kind = tag;
        if (tag === 'loc') {
          inLoc = true;
          text = '';
        }
      },
      ontext: (t) => {
        if (inLoc) text += t;
      },
      onclosetag: (name) => {
        if (local(name) !== 'loc' || !inLoc) return;
        inLoc = false;
        const loc = text.trim();
        if (loc) locs.push(loc);
      },
    },
    { xmlMode: true, decodeEntities: true },
  );
  parser.write(xml);
  parser.end();
  return { kind, locs };
}

/** A sitemap body as text: gzip (by its magic bytes, whatever the content type said) is inflated. */
export function sitemapText(body: Buffer, maxBytes: number): string {
  if (body[0] === 0x1f && body[1] === 0x8b) return zlib.gunzipSync(body, { maxOutputLength: maxBytes }).toString('utf8');
  return body.toString('utf8');
}

/**
 * Finds the sitemaps of the site at `origin` and collects their page URLs. Files that fail,
 * answer an error or do not parse are skipped: a broken sitemap never fails a crawl.
 */
export async function discoverSitemaps(origin: string, fetchFile: FetchFile, limits: SitemapLimits): Promise<SitemapDiscovery> {
  const robotsUrl = new URL('/robots.txt', origin).href;
  const conventional = new URL('/sitemap.xml', origin).href;
  const robots = await fetchFile(robotsUrl).catch(() => undefined);
  const listed = robots && robots.status < 300 ? robotsSitemaps(robots.body.toString('utf8'), robotsUrl) : [];
  const queue = [...new Set([...listed, conventional])].map((url) => ({ url, depth: 0 }));
  const seenFiles = new Set(queue.map((q) => q.url));
  const urls = new Set<string>();
  let found = false;
  let read = 0;
  while (queue.length > 0 && read < limits.maxFiles && urls.size < limits.maxUrls) {
    const batch = queue.splice(0, limits.maxFiles - read);
    read += batch.length;
    const parsed = await Promise.all(batch.map(async (item) => ({ item, sitemap: await readSitemap(item.url, fetchFile, limits.maxBytes) })));
    for (const { item, sitemap } of parsed) {
      if (!sitemap || sitemap.kind === 'other') continue;
      found = true;
      for (const loc of sitemap.locs) {
        let absolute: string;
        try {
          absolute = new URL(loc, item.url).href;
        } catch {
          continue;
        }
        if (sitemap.kind === 'urlset') {
          if (urls.size < limits.maxUrls) urls.add(absolute);
        } else if (item.depth < MAX_INDEX_DEPTH && !seenFiles.has(absolute)) {
          seenFiles.add(absolute);
          queue.push({ url: absolute, depth: item.depth + 1 });
        }
      }
    }
  }
  return { found, urls: [...urls] };
}

async function readSitemap(url: string, fetchFile: FetchFile, maxBytes: number): Promise<ParsedSitemap | undefined> {
  try {
    const file = await fetchFile(url);
    if (!file || file.status >= 300) return undefined;
    return parseSitemap(sitemapText(file.body, maxBytes));
  } catch {
    return undefined;
  }
}
