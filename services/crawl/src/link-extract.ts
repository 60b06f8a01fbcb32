import { invalidArgument, OutboundError, parseTargetUrl, header, type SafeHttp, type SafeResponse } from '@webutil/kit';
import type { ExtractResult } from '@webutil/proto/webutil/crawl/v1/crawl';
import { countLinks, LinkCollector } from './link-extractor.js';

export interface ExtractDeps {
  http: SafeHttp;
  timeoutMs: number;
  /** Most links reported (spec: 5,000 for one page). */
  linkCap: number;
  /** Most decoded HTML read from one page; past it the result is truncated. */
  maxPageBytes: number;
}

const HTML_TYPES = /^(text\/html|application\/xhtml\+xml)\b/i;

/** GET /v1/link-extract: every link of one page, typed and resolved, no status checked. */
export async function extractLinks(rawUrl: string, deps: ExtractDeps, signal: AbortSignal): Promise<ExtractResult> {
  const url = parseTargetUrl(rawUrl);
  const { res, collector } = await readPageLinks(url, deps, signal);
  const counts = countLinks(collector.links);
  return {
    url: url.href,
    scannedAt: new Date().toISOString(),
    totalLinks: counts.total,
    truncated: collector.full || res.truncated,
    counts,
    links: collector.links.map((l) => ({ ...l, sources: [] })),
  };
}

/** Fetches a page and collects its links (and fragment targets), up to `linkCap` links. */
export async function readPageLinks(url: URL, deps: Pick<ExtractDeps, 'http' | 'timeoutMs' | 'maxPageBytes' | 'linkCap'>, signal: AbortSignal) {
  const res = await fetchPage(url, deps, signal);
  const collector = new LinkCollector(new URL(res.url), deps.linkCap);
  try {
    await parseStream(res, collector);
  } catch (err) {
    throw asTargetError(err, signal);
  }
  return { res, collector };
}

/** Fetches an HTML page or fails with the reason the caller needs to see. */
async function fetchPage(url: URL, deps: Pick<ExtractDeps, 'http' | 'timeoutMs' | 'maxPageBytes'>, signal: AbortSignal): Promise<SafeResponse> {
  let res: SafeResponse;
  try {
    res = await deps.http.fetch(url, { timeoutMs: deps.timeoutMs, maxRedirects: 10, maxBodyBytes: deps.maxPageBytes, signal });
  } catch (err) {
    throw asTargetError(err, signal);
  }
  if (res.redirectLimitReached) {
    await res.dump();
    throw invalidArgument('TARGET_UNREACHABLE', `${url.href} redirects too many times (${res.redirects.length}+ hops)`);
  }
  if (res.status >= 400) {
    await res.dump();
    throw invalidArgument('TARGET_HTTP_ERROR', `the page answered ${res.status} ${res.statusText}`);
  }
  if (!isHtml(res)) {
    await res.dump();
    throw invalidArgument('NOT_HTML', `the page is ${header(res.headers, 'content-type')?.split(';')[0]}, not HTML`);
  }
  return res;
}

/** An HTML content type, or none at all (then the body is given a chance). */
export function isHtml(res: SafeResponse): boolean {
  const type = header(res.headers, 'content-type');
  return type === undefined || HTML_TYPES.test(type.trim());
}

/** What a page body is fed to: decoded text chunks, until it is full. */
export interface TextSink {
  write(chunk: string): void;
  end(): void;
  readonly full?: boolean;
}

/**
 * Feeds the decoded body through the sink, stopping as soon as it is full, and returns the first
 * `sampleChars` characters of the text (what soft-404 and bot-wall recognition look at).
 */
export async function parseStream(res: SafeResponse, sink: TextSink, sampleChars = 0): Promise<string> {
  const decoder = new TextDecoder(charsetOf(header(res.headers, 'content-type')));
  let sample = '';
  const feed = (text: string) => {
    if (sample.length < sampleChars) sample += text.slice(0, sampleChars - sample.length);
    sink.write(text);
  };
  for await (const chunk of res.body) {
    feed(decoder.decode(chunk, { stream: true }));
    if (sink.full) {
      await res.dump();
      break;
    }
  }
  feed(decoder.decode());
  sink.end();
  return sample;
}

function charsetOf(contentType: string | undefined): string {
  const label = /charset=["']?([\w-]+)/i.exec(contentType ?? '')?.[1];
  if (!label) return 'utf-8';
  try {
    return new TextDecoder(label).encoding;
  } catch {
    return 'utf-8';
  }
}

/** Network failures of the target become 400s naming the cause; a blocked address says so. */
function asTargetError(err: unknown, signal: AbortSignal): unknown {
  if (signal.aborted) return signal.reason;
  if (!(err instanceof OutboundError)) return err;
  if (err.kind === 'blocked') return invalidArgument('TARGET_BLOCKED', `refused: ${err.message}; private and internal addresses are not fetched`);
  if (err.kind === 'timeout') return invalidArgument('TARGET_UNREACHABLE', `the page did not answer in time (${err.code})`);
  return invalidArgument('TARGET_UNREACHABLE', `the page could not be fetched: ${err.message} (${err.code})`);
}
