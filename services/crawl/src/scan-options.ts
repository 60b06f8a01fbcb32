/**
 * The options of a link check or crawl (docs/decisions/0215-link-check-options.md): what is looked
 * at (resources, include/exclude globs, other sites), which statuses are ok, how far a crawl goes,
 * and headers for the entry URL's own origin (0216). Validated here too: the edge answers bad
 * values with a 400 first, but the service is what the options bind.
 */
/// <reference path="./glob-to-regexp.d.ts" />
import { invalidArgument, type OriginHeaders } from '@webutil/kit';
import type { LinkOptions } from '@webutil/proto/webutil/crawl/v1/crawl';
import { LinkOptions as contract } from '@webutil/proto/webutil/crawl/v1/crawl.fields';
import type { AuditCreditHold } from '@webutil/proto/webutil/crawl/v1/site_audit';
import globToRegExp from 'glob-to-regexp';
import { RE2JS } from 're2js';
import type { FragmentRules } from './page/fragments.js';

// Every bound is declared once, beside its field in crawl.proto (decision 0313); the edge states the same.
const { fields } = contract;
export const MAX_PATTERN_LENGTH = fields.include.bounds.maxChars;
export const MAX_ACCEPT_STATUS = fields.acceptStatus.bounds.maxItems;
export const MAX_HEADERS = fields.headers.bounds.maxItems;
export const MAX_HEADER_VALUE = fields.headers.bounds.maxChars;
export const MIN_PAGES_OPTION = fields.maxPages.bounds.min;
export const MAX_PAGES_OPTION = fields.maxPages.bounds.max;
export const MIN_DEPTH_OPTION = fields.maxDepth.bounds.min;
export const MAX_DEPTH_OPTION = fields.maxDepth.bounds.max;

/**
 * Headers a caller may not set: the target is ours to name (Host), the connection ours to manage
 * (hop-by-hop and framing headers), and who we are and what we decode ours to say.
 */
export const REFUSED_HEADERS = new Set([
  'host',
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'content-length',
  'expect',
  'set-cookie',
  'user-agent',
  'accept-encoding',
]);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;
const STATUS_RANGE = /^(\d{3})(?:-(\d{3}))?$/;

/** The options as they travel with a job (ticket, store): plain JSON, all optional. */
export interface ScanOptions {
  resources?: boolean;
  include?: string[];
  exclude?: string[];
  checkExternal?: boolean;
  acceptStatus?: string[];
  maxPages?: number;
  maxDepth?: number;
  headers?: Record<string, string>;
  skipFragments?: string[];
  githubAnchors?: boolean;
  /**
   * A site audit's hold of its price, settled by the worker when the job ends (decision 0490):
   * kept with the start's options so that every try, on any replica, has it.
   */
  creditHold?: AuditCreditHold;
}

/** The options compiled for one scan. */
export interface ScanRules {
  resources: boolean;
  checkExternal: boolean;
  /** Whether an include/exclude pattern leaves the URL (fragment-less) in the scan. */
  inScope(url: string): boolean;
  /** Whether acceptStatus makes this status ok. */
  accepts(status: number): boolean;
  /** Headers for the entry URL's origin, when any. */
  originHeaders?: OriginHeaders;
  maxPages?: number;
  maxDepth?: number;
  /** How fragments are verified: which are skipped, and GitHub's id prefix (decision 0303). */
  fragments: FragmentRules;
}

const fail = (field: string, message: string) => invalidArgument('INVALID_OPTION', `${field} ${message}`);

/** The options of a request message, checked; absent ones left out (defaults are the scan's). */
export function scanOptionsOf(message: LinkOptions | undefined): ScanOptions {
  if (!message) return {};
  const options: ScanOptions = {};
  if (message.resources !== undefined) options.resources = message.resources;
  if (message.checkExternal !== undefined) options.checkExternal = message.checkExternal;
  for (const field of ['include', 'exclude', 'skipFragments'] as const) {
    const patterns = message[field];
    if (patterns.length === 0) continue;
    const most = fields[field].bounds.maxItems;
    if (patterns.length > most) throw fail(field, `has more than ${most} patterns`);
    for (const [i, pattern] of patterns.entries()) compilePattern(pattern, `${field}[${i}]`);
    options[field] = [...patterns];
  }
  if (message.acceptStatus.length > 0) {
    if (message.acceptStatus.length > MAX_ACCEPT_STATUS)
      throw fail('acceptStatus', `has more than ${MAX_ACCEPT_STATUS} entries`);
    for (const [i, entry] of message.acceptStatus.entries()) statusRange(entry, `acceptStatus[${i}]`);
    options.acceptStatus = [...message.acceptStatus];
  }
  if (message.maxPages !== undefined) {
    const pages = message.maxPages;
    if (!Number.isInteger(pages) || pages < MIN_PAGES_OPTION || pages > MAX_PAGES_OPTION)
      throw fail('maxPages', `must be an integer from ${MIN_PAGES_OPTION} to ${MAX_PAGES_OPTION}`);
    options.maxPages = message.maxPages;
  }
  if (message.maxDepth !== undefined) {
    const depth = message.maxDepth;
    if (!Number.isInteger(depth) || depth < MIN_DEPTH_OPTION || depth > MAX_DEPTH_OPTION)
      throw fail('maxDepth', `must be an integer from ${MIN_DEPTH_OPTION} to ${MAX_DEPTH_OPTION}`);
    options.maxDepth = message.maxDepth;
  }
  if (message.githubAnchors !== undefined) options.githubAnchors = message.githubAnchors;
  const headers = Object.entries(message.headers ?? {});
  if (headers.length > 0) options.headers = checkedHeaders(headers);
  return options;
}

/** Header names lower-cased, each checked; a name given twice (in any case) is refused. */
function checkedHeaders(entries: [string, string][]): Record<string, string> {
  if (entries.length > MAX_HEADERS) throw fail('headers', `has more than ${MAX_HEADERS} entries`);
  const headers: Record<string, string> = {};
  for (const [name, value] of entries) {
    if (!TOKEN.test(name)) throw fail('headers', `has an invalid header name: ${JSON.stringify(name.slice(0, 100))}`);
    const lower = name.toLowerCase();
    if (REFUSED_HEADERS.has(lower)) throw fail('headers', `may not set ${name}`);
    if (lower in headers) throw fail('headers', `names ${name} twice`);
    if (value.length > MAX_HEADER_VALUE || !HEADER_VALUE.test(value))
      throw fail(`headers.${name}`, `must be at most ${MAX_HEADER_VALUE} characters, without line breaks`);
    headers[lower] = value;
  }
  return headers;
}

/**
 * A URL glob as a linear-time matcher: glob-to-regexp writes the expression (`*` within a path
 * segment, `**` across segments, `?`, `[...]`, `{a,b}`) and RE2JS runs it. A backtracking engine
 * would take exponential time on some pattern and URL pairs (`*a*a*a*…b`), and both are callers'.
 */
export function compilePattern(pattern: string, field = 'pattern'): RE2JS {
  if (typeof pattern !== 'string' || pattern.length === 0 || pattern.length > MAX_PATTERN_LENGTH)
    throw fail(field, `must be a glob of 1 to ${MAX_PATTERN_LENGTH} characters`);
  try {
    return RE2JS.compile(globToRegExp(pattern, { globstar: true, extended: true }).source);
  } catch {
    throw fail(field, `is not a valid glob: ${pattern.slice(0, 100)}`);
  }
}

function statusRange(entry: string, field: string): [number, number] {
  const [, low, high = low] = STATUS_RANGE.exec(entry.trim()) ?? [];
  const min = Number(low);
  const max = Number(high);
  if (low === undefined || min < 100 || max > 599 || min > max)
    throw fail(field, 'must be a status code (100-599) or a range of them such as 200-299');
  return [min, max];
}

/** The options compiled against the scan's entry URL. `resources` defaults to the route's rule. */
export function compileScan(options: ScanOptions, entry: URL, resourcesByDefault: boolean): ScanRules {
  const include = (options.include ?? []).map((p) => compilePattern(p));
  const exclude = (options.exclude ?? []).map((p) => compilePattern(p));
  const ranges = (options.acceptStatus ?? []).map((entry, i) => statusRange(entry, `acceptStatus[${i}]`));
  const headers = options.headers && Object.keys(options.headers).length > 0 ? options.headers : undefined;
  const skipped = (options.skipFragments ?? []).map((p) => compilePattern(p));
  return {
    fragments: {
      skips: (fragment) => skipped.some((re) => re.matches(fragment)),
      githubPrefix: options.githubAnchors ?? false,
    },
    resources: options.resources ?? resourcesByDefault,
    checkExternal: options.checkExternal ?? true,
    inScope: (url) =>
      (include.length === 0 || include.some((re) => re.matches(url))) && !exclude.some((re) => re.matches(url)),
    accepts: (status) => ranges.some(([min, max]) => status >= min && status <= max),
    originHeaders: headers && { origin: entry.origin, headers },
    maxPages: options.maxPages,
    maxDepth: options.maxDepth,
  };
}

/**
 * Whether a found link is part of the scan: links to other sites only with checkExternal, and
 * include/exclude on every URL but in-page anchors (the page itself).
 */
export function inScan(link: { type: string; url: string }, rules: ScanRules): boolean {
  if (link.type === 'anchor') return true;
  if (link.type === 'external' && !rules.checkExternal) return false;
  return rules.inScope(link.url);
}

/** No options: the defaults of a scan. */
export const defaultRules = (entry: URL, resourcesByDefault: boolean): ScanRules =>
  compileScan({}, entry, resourcesByDefault);
