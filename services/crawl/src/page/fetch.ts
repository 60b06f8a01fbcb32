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
import { type PageFormat, pageFormat, pageSink } from './page-format.js';
import { parseStream } from './parse-stream.js';

export interface PageReadDeps {
  http: SafeHttp;
  /** Budget of one page fetch, body included. */
  pageTimeoutMs: number;
  /** Most decoded HTML read from one page; past it the result is truncated. */
  maxPageBytes: number;
  /** Most links read from one page. */
  linksPerPage: number;
}

const MAX_REDIRECTS = 10;

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
