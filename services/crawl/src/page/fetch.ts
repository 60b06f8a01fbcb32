import {
  header,
  invalidArgument,
  type OriginHeaders,
  parseTargetUrl,
  type SafeHttp,
  type SafeResponse,
  targetFailure,
} from '@webutil/kit';
import { LinkCollector } from './links.js';
import { type HtmlSink, MarkdownSink } from './markdown-links.js';
import { parseStream, type TextSink } from './parse-stream.js';

export interface PageReadDeps {
  http: SafeHttp;
  /** Budget of one page fetch, body included. */
  pageTimeoutMs: number;
  /** Most decoded HTML read from one page; past it the result is truncated. */
  maxPageBytes: number;
  /** Most links read from one page. */
  linksPerPage: number;
}

const HTML_TYPES = /^(text\/html|application\/xhtml\+xml)\b/i;
const MARKDOWN_TYPES = /^text\/(?:x-)?markdown\b/i;
/** Markdown files served as plain text (or with no type), as many servers and repositories do. */
const MARKDOWN_PATH = /\.(?:md|markdown)$/i;
const MAX_REDIRECTS = 10;

/** What a page's body is read as: HTML, or Markdown rendered to HTML (docs/decisions/0342). */
export type PageFormat = 'html' | 'markdown';

/**
 * The format of an answer that is a page to read: an HTML content type, a Markdown one, a `.md`
 * file as text/plain; none at all is given a chance (as HTML, or Markdown by its name). Else undefined.
 */
export function pageFormat(res: SafeResponse): PageFormat | undefined {
  const type = header(res.headers, 'content-type')?.trim();
  if (MARKDOWN_TYPES.test(type ?? '')) return 'markdown';
  if (type === undefined || /^text\/plain\b/i.test(type)) {
    if (MARKDOWN_PATH.test(new URL(res.url).pathname)) return 'markdown';
    return type === undefined ? 'html' : undefined;
  }
  return HTML_TYPES.test(type) ? 'html' : undefined;
}

/** What the body of a page of `format` is fed to, for an HTML reader. */
export function pageSink(format: PageFormat, html: HtmlSink): TextSink {
  return format === 'markdown' ? new MarkdownSink(html) : html;
}

/** How a page's links are read: as link checking counts them (see LinkCollector), with resources. */
export interface PageReadOptions {
  byDocument?: boolean;
  resources?: boolean;
  /** The caller's headers for the entry URL's origin (docs/decisions/0216). */
  originHeaders?: OriginHeaders;
}

/**
 * Fetches the page a caller named and collects its links and fragment targets. Every way the page
 * can fail to be one (unreachable, blocked, an error status, not HTML) is a 400 naming the cause.
 */
export async function readPageLinks(
  rawUrl: string,
  deps: PageReadDeps,
  signal: AbortSignal,
  options: PageReadOptions = {},
) {
  const url = parseTargetUrl(rawUrl);
  const { res, format } = await fetchPage(url, deps, signal, options.originHeaders);
  const collector = new LinkCollector(
    new URL(res.url),
    deps.linksPerPage,
    options.byDocument ?? false,
    options.resources ?? false,
  );
  try {
    await parseStream(res, pageSink(format, collector));
  } catch (err) {
    throw signal.aborted ? signal.reason : targetFailure(err);
  }
  return { url, res, collector };
}

async function fetchPage(
  url: URL,
  deps: PageReadDeps,
  signal: AbortSignal,
  originHeaders: OriginHeaders | undefined,
): Promise<{ res: SafeResponse; format: PageFormat }> {
  let res: SafeResponse;
  try {
    res = await deps.http.fetch(url, {
      originHeaders,
      timeoutMs: deps.pageTimeoutMs,
      maxRedirects: MAX_REDIRECTS,
      maxBodyBytes: deps.maxPageBytes,
      signal,
    });
  } catch (err) {
    throw signal.aborted ? signal.reason : targetFailure(err);
  }
  if (res.redirectLimitReached) {
    await res.dump();
    throw invalidArgument('TARGET_UNREACHABLE', `${url.href} redirects too many times (${res.redirects.length}+ hops)`);
  }
  if (res.status >= 400) {
    await res.dump();
    throw invalidArgument('TARGET_HTTP_ERROR', `the page answered ${res.status} ${res.statusText}`);
  }
  const format = pageFormat(res);
  if (format === undefined) {
    await res.dump();
    const type = header(res.headers, 'content-type')?.split(';')[0];
    throw invalidArgument('NOT_HTML', `the page is ${type}, not HTML or Markdown`);
  }
  return { res, format };
}
