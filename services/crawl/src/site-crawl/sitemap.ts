import { pipeline, Readable } from 'node:stream';
import zlib from 'node:zlib';
import { BoundedParser } from '@webutil/kit/html';
import { MAX_ROBOTS_BYTES, readText } from './robots.js';

/**
 * Sitemaps as crawl seeds: `Sitemap:` lines of robots.txt plus /sitemap.xml, sitemap indexes
 * followed (a few levels deep), gzip children (`.xml.gz`, served as bytes) decoded. Every file is
 * parsed as it streams in, so a sitemap's cost in memory is one chunk and in CPU one chunk's
 * parse at a time, whatever its size or how well it was compressed.
 */

/**
 * GETs a file and hands a 2xx body to `read` as it streams; undefined when nothing answered or
 * the answer was not a 2xx.
 */
export type ReadFile = <T>(url: string, read: (body: AsyncIterable<Buffer>) => Promise<T>) => Promise<T | undefined>;

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

/** A sitemap is three levels deep; markup nesting past this is not a sitemap. */
const MAX_SITEMAP_DEPTH = 64;
/** The sitemap protocol's longest URL. */
const MAX_LOC_CHARS = 2_048;
/** Sitemap files read at once. */
const FILES_AT_ONCE = 4;

/**
 * Reads the `<loc>` entries of a `<urlset>` or a `<sitemapindex>` (namespace prefixes ignored) from
 * a body as it streams: gzip (by its magic bytes, whatever the name or type said) is inflated on
 * the way, and reading stops at `maxBytes` of XML, `maxLocs` entries, or markup nested deeper than
 * any sitemap is.
 */
export async function parseSitemap(
  body: AsyncIterable<Buffer>,
  limits: { maxBytes: number; maxLocs: number },
): Promise<ParsedSitemap> {
  let kind: ParsedSitemap['kind'] = 'other';
  const locs: string[] = [];
  let inLoc = false;
  let text = '';
  const local = (name: string) => name.slice(name.indexOf(':') + 1).toLowerCase();
  const parser = new BoundedParser(
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
        if (inLoc && text.length <= MAX_LOC_CHARS) text += t;
      },
      onclosetag: (name) => {
        if (local(name) !== 'loc' || !inLoc) return;
        inLoc = false;
        const loc = text.trim();
        if (loc && loc.length <= MAX_LOC_CHARS) locs.push(loc);
      },
    },
    { xmlMode: true, decodeEntities: true },
    MAX_SITEMAP_DEPTH,
  );
  const decoder = new TextDecoder();
  let bytes = 0;
  for await (const chunk of inflated(body)) {
    const room = limits.maxBytes - bytes;
    bytes += chunk.length;
    parser.write(decoder.decode(chunk.subarray(0, Math.max(0, room)), { stream: true }));
    if (bytes >= limits.maxBytes || locs.length >= limits.maxLocs || parser.tooDeep) break;
  }
  parser.write(decoder.decode());
  parser.end();
  return { kind, locs: locs.slice(0, limits.maxLocs) };
}

/** The body, inflated as it streams when it starts with gzip's magic bytes. */
async function* inflated(body: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  const chunks = body[Symbol.asyncIterator]();
  const first = await chunks.next();
  if (first.done) return;
  async function* all(): AsyncGenerator<Buffer> {
    yield first.value as Buffer;
    for (let next = await chunks.next(); !next.done; next = await chunks.next()) yield next.value;
  }
  const head = first.value as Buffer;
  if (head[0] !== 0x1f || head[1] !== 0x8b) {
    yield* all();
    return;
  }
  // pipeline, not pipe: a broken body must end the inflater too, or its reader waits forever.
  const gunzip = pipeline(Readable.from(all()), zlib.createGunzip(), () => undefined);
  try {
    yield* gunzip as AsyncIterable<Buffer>;
  } finally {
    gunzip.destroy();
  }
}

/**
 * Finds the sitemaps of the site at `origin` and collects their page URLs. Files that fail,
 * answer an error or do not parse are skipped: a broken sitemap never fails a crawl. `named`:
 * the sitemaps robots.txt names, when the caller has read it already.
 */
export async function discoverSitemaps(
  origin: string,
  readFile: ReadFile,
  limits: SitemapLimits,
  named?: string[],
): Promise<SitemapDiscovery> {
  const robotsUrl = new URL('/robots.txt', origin).href;
  const conventional = new URL('/sitemap.xml', origin).href;
  const robots =
    named === undefined
      ? await readFile(robotsUrl, (body) => readText(body, MAX_ROBOTS_BYTES)).catch(() => undefined)
      : undefined;
  const listed = named ?? (robots === undefined ? [] : robotsSitemaps(robots, robotsUrl));
  const queue = [...new Set([...listed, conventional])].map((url) => ({ url, depth: 0 }));
  const seenFiles = new Set(queue.map((q) => q.url));
  const urls = new Set<string>();
  let found = false;
  let read = 0;
  while (queue.length > 0 && read < limits.maxFiles && urls.size < limits.maxUrls) {
    const batch = queue.splice(0, Math.min(FILES_AT_ONCE, limits.maxFiles - read));
    read += batch.length;
    const parsed = await Promise.all(
      batch.map(async (item) => {
        const sitemap = await readFile(item.url, (body) =>
          parseSitemap(body, { maxBytes: limits.maxBytes, maxLocs: limits.maxUrls }),
        ).catch(() => undefined); // a broken sitemap never fails a crawl
        return { item, sitemap };
      }),
    );
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
        } else if (item.depth < MAX_INDEX_DEPTH && !seenFiles.has(absolute) && seenFiles.size < limits.maxFiles) {
          seenFiles.add(absolute);
          queue.push({ url: absolute, depth: item.depth + 1 });
        }
      }
    }
  }
  return { found, urls: [...urls] };
}
