import zlib from 'node:zlib';
import { header, type SafeHttp, type SafeResponse } from '@webutil/kit';
import { Parser } from 'htmlparser2';
import robotsParserModule from 'robots-parser';

// The package is CommonJS (module.exports = the function) but its types declare a default export,
// which NodeNext reads as module.exports.default.
const robotsParser = robotsParserModule as unknown as typeof robotsParserModule.default;

/** What fetching one of the site's files found. */
export type FileProbe =
  | { kind: 'ok'; url: string }
  /** An answer that is not the file: 4xx, or a body of the wrong kind. */
  | { kind: 'missing' | 'broken'; url: string; detail: string }
  /** No usable answer: a 5xx, a time-out, a refused connection. */
  | { kind: 'failed'; url: string; detail: string };

export interface RobotsProbe {
  probe: FileProbe;
  /** Sitemap URLs it names. */
  sitemaps: string[];
  /** It disallows the whole site for every crawler. */
  blocksAll: boolean;
  /** Whether a crawler (by user-agent token) may fetch a URL; absent without a usable robots.txt. */
  allows?: (url: string, crawler: string) => boolean;
}

export interface SiteFileOptions {
  http: SafeHttp;
  timeoutMs: number;
  signal: AbortSignal;
  /** Sent with the images fetched (the crawler the caller scans as). */
  headers?: Record<string, string>;
}

const ROBOTS_BYTES = 512 * 1024;
const SITEMAP_HEAD_BYTES = 64 * 1024;
const ICON_HEAD_BYTES = 16;

/** Fetches a URL and reads at most `maxBytes` of it; failures come back as a probe, not thrown. */
async function fetchHead(
  url: string,
  maxBytes: number,
  options: SiteFileOptions,
): Promise<{ res: SafeResponse; body: Buffer } | FileProbe> {
  let res: SafeResponse;
  try {
    res = await options.http.fetch(url, {
      timeoutMs: options.timeoutMs,
      maxRedirects: 5,
      maxBodyBytes: maxBytes,
      headers: { accept: '*/*' },
      signal: options.signal,
    });
  } catch (err) {
    if (options.signal.aborted) throw options.signal.reason;
    return { kind: 'failed', url, detail: (err as Error).message };
  }
  if (res.status >= 500) {
    await res.dump();
    return { kind: 'failed', url, detail: `answered ${res.status} ${res.statusText}` };
  }
  if (res.status >= 300) {
    await res.dump();
    return { kind: 'missing', url, detail: `answered ${res.status} ${res.statusText}` };
  }
  const chunks: Buffer[] = [];
  try {
    let size = 0;
    for await (const chunk of res.body) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= maxBytes) break;
    }
  } catch (err) {
    return { kind: 'failed', url, detail: (err as Error).message };
  } finally {
    await res.dump();
  }
  return { res, body: Buffer.concat(chunks).subarray(0, maxBytes) };
}

const typeOf = (res: SafeResponse) => header(res.headers, 'content-type')?.split(';')[0]?.trim().toLowerCase();

/** /robots.txt of the site: present, the sitemaps it names, and whether it shuts every crawler out. */
export async function probeRobots(origin: string, options: SiteFileOptions): Promise<RobotsProbe> {
  const url = new URL('/robots.txt', origin).href;
  const got = await fetchHead(url, ROBOTS_BYTES, options);
  if ('kind' in got) return { probe: got, sitemaps: [], blocksAll: false };
  const type = typeOf(got.res);
  if (type === 'text/html' || type === 'application/xhtml+xml') {
    return {
      probe: { kind: 'broken', url, detail: 'answers with an HTML page, not a robots.txt file' },
      sitemaps: [],
      blocksAll: false,
    };
  }
  const robots = robotsParser(url, got.body.toString('utf8'));
  return {
    probe: { kind: 'ok', url },
    // The protocol wants absolute URLs; relative ones are common and resolved as crawlers do.
    sitemaps: robots.getSitemaps().flatMap((s) => (URL.canParse(s, url) ? [new URL(s, url).href] : [])),
    blocksAll: robots.isDisallowed(new URL('/', origin).href, 'WebUtilBot') === true,
    allows: (target, crawler) => robots.isDisallowed(target, crawler) !== true,
  };
}

/**
 * The site's sitemap: the first one robots.txt names, else /sitemap.xml. It counts when it
 * answers with XML whose root is <urlset> or <sitemapindex> (gzip'd or not).
 */
export async function probeSitemap(origin: string, named: string[], options: SiteFileOptions): Promise<FileProbe> {
  const url = named[0] ?? new URL('/sitemap.xml', origin).href;
  const got = await fetchHead(url, SITEMAP_HEAD_BYTES, options);
  if ('kind' in got) return got;
  let text: string;
  try {
    text = isGzip(got.body) ? await gunzipPrefix(got.body, SITEMAP_HEAD_BYTES) : got.body.toString('utf8');
  } catch {
    return { kind: 'broken', url, detail: 'is not readable gzip' };
  }
  const root = rootElement(text);
  if (root === 'urlset' || root === 'sitemapindex') return { kind: 'ok', url };
  return {
    kind: 'broken',
    url,
    detail: root ? `is not a sitemap: its root element is <${root}>` : 'is not a sitemap: no XML element found',
  };
}

const isGzip = (body: Buffer) => body[0] === 0x1f && body[1] === 0x8b;

/**
 * Inflates the start of a gzip stream that may be cut off, stopping at `limit` bytes of output
 * (a small compressed prefix can inflate to megabytes).
 */
async function gunzipPrefix(body: Buffer, limit: number): Promise<string> {
  const gunzip = zlib.createGunzip({ finishFlush: zlib.constants.Z_SYNC_FLUSH });
  gunzip.end(body);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of gunzip as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= limit) break;
  }
  return Buffer.concat(chunks).subarray(0, limit).toString('utf8');
}

/** The local name of the first element of an XML text (prolog, comments and doctype skipped). */
export function rootElement(xml: string): string | undefined {
  let root: string | undefined;
  const parser = new Parser(
    {
      onopentag: (name) => {
        root = name.replace(/^.*:/, '').toLowerCase();
        parser.pause();
      },
    },
    { xmlMode: true },
  );
  parser.write(xml);
  return root;
}

/** Image signatures, for icons served without an image content type. */
const IMAGE_MAGIC: Buffer[] = [
  Buffer.from([0x00, 0x00, 0x01, 0x00]), // ICO
  Buffer.from([0x89, 0x50, 0x4e, 0x47]), // PNG
  Buffer.from('GIF8'),
  Buffer.from([0xff, 0xd8, 0xff]), // JPEG
];

/** The favicon at `url` answers with an image. */
export async function probeIcon(url: string, options: SiteFileOptions): Promise<FileProbe> {
  if (url.startsWith('data:')) {
    return /^data:image\//i.test(url)
      ? { kind: 'ok', url }
      : { kind: 'broken', url, detail: 'is a data: URL of something other than an image' };
  }
  const got = await fetchHead(url, ICON_HEAD_BYTES, options);
  if ('kind' in got) return got;
  const type = typeOf(got.res);
  const looksLikeImage = IMAGE_MAGIC.some((magic) => got.body.subarray(0, magic.length).equals(magic));
  if (type?.startsWith('image/') || looksLikeImage) return { kind: 'ok', url };
  return { kind: 'broken', url, detail: `answers with ${type ?? 'no content type'}, not an image` };
}
