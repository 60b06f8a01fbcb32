import {
  type AddressPolicy,
  type ConnectionPhases,
  invalidArgument,
  type LookupHost,
  OutboundError,
  parseTargetUrl,
  resolveTarget,
  type SafeHttp,
  type SafeResponse,
  targetFailure,
} from '@webutil/kit';
import type {
  DownCheckRequest,
  DownCheckResponse,
  DownCheckTimings,
} from '@webutil/proto/webutil/metascan/v1/metascan';

export interface DownCheckDeps {
  http: SafeHttp;
  policy: AddressPolicy;
  /** How the target's name is resolved; the system resolver when absent. */
  lookup?: LookupHost;
  /** Fixed vantage-point label reported to callers. */
  testedFrom: string;
  /** Budget for the whole request, redirects included (spec: 15 s). */
  timeoutMs: number;
}

const MAX_REDIRECTS = 5;
/** Bytes of body searched for a keyword (docs/decisions/0181-down-check-details.md). */
export const KEYWORD_BODY_BYTES = 1024 * 1024;
export const MAX_KEYWORD_LENGTH = 200;
export const DOWN_CHECK_METHODS = ['GET', 'HEAD'] as const;

/** The caller's options, checked: what counts as up, what to look for, how to ask. */
export interface DownCheckOptions {
  expectStatus?: { min: number; max: number };
  keyword?: string;
  method: (typeof DOWN_CHECK_METHODS)[number];
}

/**
 * A status code or an inclusive range of codes ("200", "200-299"), or the reason it is not one
 * (the edge words its 400 with it, the service its INVALID_ARGUMENT).
 */
export function parseExpectStatus(value: string): { min: number; max: number } | string {
  const match = /^\s*(\d{3})\s*(?:-\s*(\d{3})\s*)?$/.exec(value);
  const min = Number(match?.[1]);
  const max = match?.[2] === undefined ? min : Number(match[2]);
  if (!match || min < 100 || max > 599 || min > max) {
    return 'expectStatus must be a status code (100-599) or a range of them such as 200-299';
  }
  return { min, max };
}

/** The request's options, or INVALID_ARGUMENT naming the field; nothing is fetched before this. */
export function downCheckOptions(request: DownCheckRequest): DownCheckOptions {
  const method = request.method ?? 'GET';
  if (!(DOWN_CHECK_METHODS as readonly string[]).includes(method)) {
    throw invalidArgument('INVALID_METHOD', 'method must be one of GET, HEAD');
  }
  const options: DownCheckOptions = { method: method as DownCheckOptions['method'] };
  if (request.expectStatus !== undefined) {
    const range = parseExpectStatus(request.expectStatus);
    if (typeof range === 'string') throw invalidArgument('INVALID_EXPECT_STATUS', range);
    options.expectStatus = range;
  }
  if (request.keyword !== undefined) {
    const problem = keywordProblem(request.keyword, options.method);
    if (problem) throw invalidArgument('INVALID_KEYWORD', problem);
    options.keyword = request.keyword;
  }
  return options;
}

/** Why a keyword cannot be looked for, if it cannot. */
export function keywordProblem(keyword: string, method: string): string | undefined {
  if (keyword.length === 0) return 'keyword must not be empty';
  if (keyword.length > MAX_KEYWORD_LENGTH) return `keyword must be at most ${MAX_KEYWORD_LENGTH} characters`;
  if (method === 'HEAD') return 'keyword needs method GET: a HEAD answer has no body';
  return undefined;
}

/**
 * Is the site up? One request (GET unless HEAD is asked) following at most five redirects, on a
 * connection of its own so its phases are timed. Any HTTP status means reachable; a failure to
 * complete is a 200 with no status, not an error, and `verdict`/`reason` say what happened. Only a
 * blocked target (a private or internal address, directly or through a redirect) is refused.
 */
export async function downCheck(
  request: DownCheckRequest,
  deps: DownCheckDeps,
  signal: AbortSignal,
): Promise<DownCheckResponse> {
  const url = parseTargetUrl(request.url);
  const options = downCheckOptions(request);
  const base = { url: url.href, testedFrom: deps.testedFrom, redirects: [] };
  const lookupStarted = performance.now();
  let addresses: string[];
  try {
    addresses = await resolveTarget(url.hostname, deps.policy, deps.lookup);
  } catch (err) {
    if (!(err instanceof OutboundError && err.kind === 'dns')) throw targetFailure(err);
    // Down: the name does not resolve.
    const totalMs = Math.round(performance.now() - lookupStarted);
    return { ...base, timings: { totalMs }, verdict: 'down', reason: 'DNS name not found' };
  }
  const ipAddress = addresses[0]; // IPv4 first
  const phases: ConnectionPhases = { dnsMs: null, connectMs: null, tlsMs: null };
  const started = performance.now();
  const timings = (firstByteMs?: number): DownCheckTimings => ({
    dnsMs: whole(phases.dnsMs),
    connectMs: whole(phases.connectMs),
    tlsMs: whole(phases.tlsMs),
    firstByteMs,
    totalMs: Math.round(performance.now() - started),
  });
  let res: SafeResponse;
  try {
    res = await deps.http.fetch(url, {
      method: options.method,
      maxRedirects: MAX_REDIRECTS,
      timeoutMs: deps.timeoutMs,
      maxBodyBytes: options.keyword === undefined ? undefined : KEYWORD_BODY_BYTES,
      phases,
      signal,
    });
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    if (err instanceof OutboundError && err.kind === 'blocked') throw targetFailure(err);
    const responseTimeMs = Math.round(performance.now() - started);
    const reason = failureReason(err, deps.timeoutMs);
    return { ...base, responseTimeMs, ipAddress, timings: timings(), verdict: 'down', reason };
  }
  let keywordFound: boolean | undefined;
  try {
    if (options.keyword === undefined) await res.dump();
    else keywordFound = await containsKeyword(res, options.keyword);
  } catch {
    if (signal.aborted) throw signal.reason;
    // The headers came; the body broke off or stalled: keywordFound stays unknown.
  }
  const statusMatches = options.expectStatus
    ? res.status >= options.expectStatus.min && res.status <= options.expectStatus.max
    : undefined;
  return {
    ...base,
    httpsStatus: res.status,
    responseTimeMs: res.timeToHeadersMs,
    ipAddress,
    timings: timings(res.timeToHeadersMs),
    redirects: res.redirects.map((hop) => ({ url: hop.url, status: hop.status })),
    statusMatches,
    keywordFound,
    ...verdictOf(res, options, statusMatches, keywordFound),
  };
}

const whole = (ms: number | null) => (ms === null ? undefined : Math.round(ms));

/** Up, down or degraded, and why (docs/decisions/0181-down-check-details.md). */
function verdictOf(
  res: SafeResponse,
  options: DownCheckOptions,
  statusMatches: boolean | undefined,
  keywordFound: boolean | undefined,
): { verdict: string; reason: string } {
  const http = `HTTP ${res.status}`;
  if (options.expectStatus && !statusMatches) {
    const { min, max } = options.expectStatus;
    return { verdict: 'down', reason: `${http}, expected ${min === max ? min : `${min}-${max}`}` };
  }
  if (options.keyword !== undefined && keywordFound !== true) {
    const why = keywordFound === false ? 'keyword not found in the first 1 MB' : 'the body could not be read';
    return { verdict: 'down', reason: `${http}, ${why}` };
  }
  if (res.redirectLimitReached) {
    return { verdict: 'degraded', reason: `${http}, still redirecting after ${MAX_REDIRECTS} redirects` };
  }
  if (options.expectStatus) return { verdict: 'up', reason: http };
  if (res.status >= 500) return { verdict: 'down', reason: http };
  if (res.status >= 400) return { verdict: 'degraded', reason: http };
  return { verdict: 'up', reason: http };
}

/** A request that did not complete, in the words a status page would use. */
function failureReason(err: unknown, timeoutMs: number): string {
  if (!(err instanceof OutboundError)) return 'the request failed';
  switch (err.kind) {
    case 'dns':
      return 'DNS name not found';
    case 'timeout':
      return `timed out after ${Number((timeoutMs / 1000).toFixed(1))} s`;
    case 'connect':
      return err.code === 'ECONNREFUSED' ? 'connection refused' : err.message.replace(/^the /, '');
    default:
      return err.message;
  }
}

/**
 * Whether the body (already cut at KEYWORD_BODY_BYTES by the client) holds the keyword, reading
 * only until it is found. Bytes are compared, so a keyword split across chunks is still found.
 */
async function containsKeyword(res: SafeResponse, keyword: string): Promise<boolean> {
  const needle = Buffer.from(keyword, 'utf8');
  let tail: Buffer = Buffer.alloc(0);
  for await (const chunk of res.body) {
    const window: Buffer = tail.length ? Buffer.concat([tail, chunk]) : chunk;
    if (window.includes(needle)) {
      await res.dump();
      return true;
    }
    tail = window.subarray(Math.max(0, window.length - needle.length + 1));
  }
  return false;
}
