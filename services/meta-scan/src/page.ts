import { header, invalidArgument, OutboundError, type SafeHttp, type SafeResponse, targetFailure } from '@webutil/kit';
import { HeadReader, type PageHead } from './page-head.js';

/** The audited page: where it ended up after redirects, its headers, and its head. */
export interface AuditedPage {
  url: URL;
  status: number;
  /** The redirects followed to get there. */
  redirects: SafeResponse['redirects'];
  headers: SafeResponse['headers'];
  head: PageHead;
}

export interface PageReadOptions {
  timeoutMs: number;
  /** The User-Agent header sent, when not the service's own. */
  userAgent?: string;
  /** Bytes of the page read at most while looking for the end of its head. */
  maxHeadBytes: number;
}

const HTML_TYPES = /^(text\/html|application\/xhtml\+xml)\b/i;
/**
 * Past the head the body is read for JSON-LD only this long (and at most a quarter of the page's
 * timeout), so a slow body never fails the audit.
 */
export const BODY_READ_MS = 2_000;

/**
 * Fetches the page through the safe client and reads its head, within the byte bound. A page that
 * cannot be fetched or read fails with the reason (the route answers the spec's 500 for it).
 */
export async function readPage(
  url: URL,
  http: SafeHttp,
  options: PageReadOptions,
  signal: AbortSignal,
): Promise<AuditedPage> {
  let res: SafeResponse;
  try {
    res = await http.fetch(url, {
      timeoutMs: options.timeoutMs,
      maxRedirects: 10,
      maxBodyBytes: options.maxHeadBytes,
      headers: options.userAgent ? { 'user-agent': options.userAgent } : undefined,
      signal,
    });
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    if (err instanceof OutboundError && err.kind === 'blocked') throw targetFailure(err);
    const why = err instanceof OutboundError ? err.message : String(err);
    throw invalidArgument('TARGET_UNREACHABLE', `could not fetch ${url.href}: ${why}`);
  }
  const type = header(res.headers, 'content-type');
  const problem = res.redirectLimitReached
    ? `${url.href} redirects too many times`
    : res.status >= 400
      ? `the page answered ${res.status} ${res.statusText}`
      : type !== undefined && !HTML_TYPES.test(type.trim())
        ? `the page is ${type.split(';')[0]}, not HTML`
        : undefined;
  if (problem) {
    await res.dump();
    throw invalidArgument(res.status >= 400 ? 'TARGET_HTTP_ERROR' : 'NOT_HTML', problem);
  }
  const reader = new HeadReader();
  let decoder: InstanceType<typeof TextDecoder> | undefined;
  const chunks = res.body[Symbol.asyncIterator]();
  let bodyDeadline: Promise<'late'> | undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    for (;;) {
      const pending = chunks.next();
      // Left pending at the deadline, it rejects when the body is discarded below.
      pending.catch(() => undefined);
      const next = await (bodyDeadline ? Promise.race([pending, bodyDeadline]) : pending);
      if (next === 'late' || next.done) break;
      decoder ??= new TextDecoder(charsetOf(type, next.value));
      reader.write(decoder.decode(next.value, { stream: true }));
      if (reader.done) break;
      if (reader.headDone && !bodyDeadline) {
        bodyDeadline = new Promise((resolve) => {
          timer = setTimeout(() => resolve('late'), Math.min(BODY_READ_MS, options.timeoutMs / 4));
        });
      }
    }
    if (decoder && !reader.done) reader.write(decoder.decode());
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    throw invalidArgument('TARGET_UNREACHABLE', `reading ${res.url} failed: ${(err as Error).message}`);
  } finally {
    clearTimeout(timer);
    await res.dump();
  }
  return {
    url: new URL(res.url),
    status: res.status,
    redirects: res.redirects,
    headers: res.headers,
    head: reader.end(),
  } satisfies AuditedPage;
}

/**
 * The page's encoding: the Content-Type charset, else a <meta charset> (or http-equiv) in the
 * first 1,024 bytes, as the HTML standard's prescan looks, else UTF-8.
 */
export function charsetOf(contentType: string | undefined, firstChunk: Buffer): string {
  const declared =
    /charset=["']?([\w-]+)/i.exec(contentType ?? '')?.[1] ??
    /<meta[^>]{0,200}?charset\s*=\s*["']?([\w-]+)/i.exec(firstChunk.subarray(0, 1024).toString('latin1'))?.[1];
  if (!declared) return 'utf-8';
  try {
    return new TextDecoder(declared).encoding;
  } catch {
    return 'utf-8';
  }
}
