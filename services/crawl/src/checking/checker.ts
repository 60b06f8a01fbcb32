import { header, type OriginHeaders, OutboundError, type SafeHttp, type SafeResponse } from '@webutil/kit';
import type { FetchSettings } from '../config.js';
import { readCss } from '../page/css-links.js';
import { MAX_TARGETS_PER_PAGE, type PageTargets, TargetBudget, TargetCollector } from '../page/fragments.js';
import { pageFormat, pageSink } from '../page/page-format.js';
import { normalizePageUrl } from '../page/page-url.js';
import { nextTurn, parseStream } from '../page/parse-stream.js';
import { botWallVendor } from './bot-wall.js';
import type { CheckOutcome } from './grade.js';
import { fingerprint, type PageFingerprint, probePath, sameNotFoundPage } from './soft-404.js';
import { HostNotAnsweringError, type HostSignal, type Release, type RequestSlots } from './throttle.js';

export interface CheckerDeps
  extends Pick<FetchSettings, 'pageTimeoutMs' | 'linkTimeoutMs' | 'maxPageBytes' | 'maxRetryAfterMs' | 'slowAnswerMs'> {
  http: SafeHttp;
  throttle: RequestSlots;
}

/** Reads a crawled page's HTML or Markdown body while its request slot is held; returns the start of its text. */
export type PageReader = (res: SafeResponse) => Promise<string>;

/** What reading a body yields: the start of its text, or the page's fragment targets. */
interface BodyFacts {
  sample?: string;
  targets?: PageTargets;
}

type BodyReader = (res: SafeResponse) => Promise<BodyFacts>;

interface Exchange extends BodyFacts {
  /** The URL asked for, parsed once for the throttle, the request and the soft-404 question. */
  target: URL;
  res?: SafeResponse;
  error?: { kind: string; code: string; message: string };
  retryAfterSeconds?: number;
}

const MAX_REDIRECTS = 10;
const MAX_429_RETRIES = 2;
/** Pause after a 429 without Retry-After, doubled on the second one (a 503 without one is not retried). */
const DEFAULT_429_PAUSE_MS = 1_000;
/** Body read from an answer for bot-wall and soft-404 recognition. */
export const SAMPLE_BYTES = 64 * 1024;
/**
 * Fragment targets kept at most, all together, from pages a scan reads only for them (pages it
 * does not crawl): 800 KB of hashes. Past it a page's targets are incomplete, so a fragment link
 * to it is not judged rather than called missing.
 */
export const MAX_READ_TARGETS = 100_000;
/** Origins asked for their not-found page at most per scan; links to others are not checked for soft 404s. */
export const MAX_PROBED_ORIGINS = 256;

/**
 * Checks the links of one scan: every URL once (fragment ignored), HEAD first and GET when HEAD
 * is refused or unreliable, through the process-wide host throttle, 429s retried within the
 * scan's budget, redirects followed, soft 404s and bot walls recognised. `signal` ends the scan;
 * `deadline` is when it must be over, so no Retry-After wait is started that would outlast it.
 */
export class LinkChecker {
  private readonly checks = new Map<string, Promise<CheckOutcome>>();
  private readonly reads = new Map<string, Promise<CheckOutcome>>();
  private readonly notFoundPages = new Map<string, Promise<PageFingerprint | undefined>>();
  /** Outcomes kept under `remembered` whose check is still running. */
  private readonly inFlight = new WeakSet<Promise<CheckOutcome>>();
  /** The ids and anchor names the pages this scan reads may keep, MAX_READ_TARGETS in all. */
  private readonly targetBudget = new TargetBudget(MAX_READ_TARGETS);

  constructor(
    private readonly deps: CheckerDeps,
    private readonly signal: AbortSignal,
    private readonly deadline: number,
    private readonly options: {
      soft404: boolean;
      /** The caller's headers, for the entry URL's origin only (docs/decisions/0216). */
      originHeaders?: OriginHeaders;
      /**
       * URLs whose outcome is kept, the latest first to stay (unbounded without it): a caller that
       * knows elsewhere what it checked already (a distributed audit's frontier) keeps its memory flat.
       */
      remembered?: number;
    } = { soft404: true },
  ) {}

  /** The status of a URL: HEAD, then GET when HEAD is not answered well. */
  check(url: string): Promise<CheckOutcome> {
    const key = normalizePageUrl(url);
    return this.memo(this.checks, key, () => this.run(key, false));
  }

  /** Like check(), but the page is read (GET) for its fragment targets. */
  checkWithTargets(url: string): Promise<CheckOutcome> {
    const key = normalizePageUrl(url);
    return this.memo(this.reads, key, () => this.run(key, true));
  }

  /**
   * GETs a page to crawl (`url` normalised), handing an HTML or Markdown body to `read` while the request
   * slot is held. The outcome also answers later check()s of the URL.
   */
  async fetchPage(url: string, read: PageReader): Promise<CheckOutcome> {
    const exchange = await this.exchange(url, 'GET', this.deps.pageTimeoutMs, async (res) =>
      res.status < 300 && pageFormat(res) ? { sample: await read(res) } : sampleOf(res),
    );
    const outcome = await this.conclude(url, exchange);
    this.remember(this.checks, url, Promise.resolve(outcome));
    return outcome;
  }

  /**
   * GETs a stylesheet and reads its CSS (bounded, css-links.ts). Its outcome answers check() of
   * the URL too, so a stylesheet asked for before its check is requested once per scan.
   */
  async fetchStylesheet(url: string): Promise<{ css: string; url: string } | undefined> {
    const key = normalizePageUrl(url);
    let sheet: { css: string; url: string } | undefined;
    const read: BodyReader = async (res) => {
      if (res.status < 200 || res.status >= 300) return sampleOf(res);
      sheet = { css: await readCss(res), url: res.url };
      return { sample: sheet.css.slice(0, SAMPLE_BYTES) };
    };
    if (this.checks.has(key)) {
      await this.exchange(key, 'GET', this.deps.linkTimeoutMs, read);
      return sheet;
    }
    const outcome = this.exchange(key, 'GET', this.deps.linkTimeoutMs, read).then((got) => this.conclude(key, got));
    this.remember(this.checks, key, outcome);
    await outcome;
    return sheet;
  }

  /** GETs a file (robots.txt, a sitemap) through the throttle, streaming a 2xx body to `read`. */
  readFile<T>(url: string, read: (body: AsyncIterable<Buffer>) => Promise<T>): Promise<T | undefined> {
    return this.fetchFile(url, read).then((got) => got.value);
  }

  /** readFile(), and the final status too (undefined when nothing answered). */
  async fetchFile<T>(
    url: string,
    read: (body: AsyncIterable<Buffer>) => Promise<T>,
  ): Promise<{ status: number | undefined; value: T | undefined; error?: Exchange['error'] }> {
    let value: T | undefined;
    const exchange = await this.exchange(url, 'GET', this.deps.pageTimeoutMs, async (res) => {
      if (res.status >= 200 && res.status < 300) value = await read(res.body);
      return {};
    });
    return { status: exchange.res?.status, value, error: exchange.error };
  }

  private memo(
    map: Map<string, Promise<CheckOutcome>>,
    key: string,
    run: () => Promise<CheckOutcome>,
  ): Promise<CheckOutcome> {
    let pending = map.get(key);
    if (!pending) {
      pending = run();
      this.remember(map, key, pending);
    }
    return pending;
  }

  /**
   * Keeps an outcome, the oldest settled ones going first past `remembered`. A check in flight is
   * never forgotten (another caller would start the same request again); once it settles, the
   * bound holds again.
   */
  private remember(map: Map<string, Promise<CheckOutcome>>, key: string, outcome: Promise<CheckOutcome>): void {
    map.delete(key);
    map.set(key, outcome);
    const cap = this.options.remembered;
    if (cap === undefined) return;
    this.inFlight.add(outcome);
    const settle = () => {
      this.inFlight.delete(outcome);
      this.forgetPast(map, cap);
    };
    outcome.then(settle, settle);
    this.forgetPast(map, cap);
  }

  private forgetPast(map: Map<string, Promise<CheckOutcome>>, cap: number): void {
    for (const [key, kept] of map) {
      if (map.size <= cap) break;
      if (!this.inFlight.has(kept)) map.delete(key);
    }
  }

  private async run(url: string, wantTargets: boolean): Promise<CheckOutcome> {
    const timeout = this.deps.linkTimeoutMs;
    let exchange: Exchange;
    if (wantTargets) {
      exchange = await this.exchange(url, 'GET', this.deps.pageTimeoutMs, (res) => this.readTargets(res));
    } else {
      exchange = await this.exchange(url, 'HEAD', timeout);
      if (headNotTrusted(exchange)) exchange = await this.exchange(url, 'GET', timeout, sampleOf);
    }
    return this.conclude(url, exchange);
  }

  /** Turns an exchange into an outcome, asking the soft-404 question for 2xx answers. */
  private async conclude(url: string, exchange: Exchange): Promise<CheckOutcome> {
    const { res, error } = exchange;
    if (!res) return { redirects: 0, error };
    const redirects = res.redirects.length;
    const outcome: CheckOutcome = {
      status: res.status,
      firstStatus: res.redirects[0]?.status ?? res.status,
      redirects,
      finalUrl: redirects > 0 ? res.url : undefined,
      responseTimeMs: res.timeToHeadersMs,
      retryAfterSeconds: exchange.retryAfterSeconds,
      targets: exchange.targets,
    };
    if (res.redirectLimitReached) {
      const seen = new Set(res.redirects.map((hop) => hop.url));
      outcome.redirectTrouble = seen.has(res.url) || seen.size < res.redirects.length ? 'loop' : 'too_many';
      return outcome;
    }
    if (res.status >= 400) outcome.botWall = botWallVendor(res.status, res.headers, exchange.sample ?? '');
    if (res.status >= 200 && res.status < 300 && this.options.soft404)
      outcome.soft404 = await this.soft404(url, exchange);
    return outcome;
  }

  private async soft404(url: string, exchange: Exchange): Promise<boolean> {
    const res = exchange.res as SafeResponse;
    const redirectedTo = res.redirects.length > 0 ? res.url : undefined;
    const { target } = exchange;
    if (target.pathname === '/' && !target.search && !redirectedTo) return false;
    const probe = await this.notFoundPage(target.origin);
    if (!probe) return false;
    let sample = exchange.sample;
    if (sample === undefined) {
      // HEAD told us nothing about the page, and this host does serve soft 404s: look at it.
      const got = await this.exchange(url, 'GET', this.deps.linkTimeoutMs, sampleOf);
      if (!got.res || got.res.status >= 300) return false;
      sample = got.sample;
    }
    // Parsing a sample is up to 64 KB of markup: in a turn of its own, not back to back with
    // every other answer that arrived in the same turn.
    await nextTurn();
    return sameNotFoundPage(fingerprint(sample ?? '', url, redirectedTo), probe);
  }

  /**
   * Reads an HTML or Markdown page for its ids and anchor names (and a sample for recognition), within what
   * is left of the scan's budget of targets, taken as they are found; a page whose read fails gives its back.
   */
  private async readTargets(res: SafeResponse): Promise<BodyFacts> {
    const format = pageFormat(res);
    if (!format) return sampleOf(res);
    const collector = new TargetCollector(MAX_TARGETS_PER_PAGE, this.targetBudget);
    try {
      const sample = await parseStream(res, pageSink(format, collector), SAMPLE_BYTES);
      return { sample, targets: collector.targets };
    } catch (err) {
      this.targetBudget.giveBack(collector.targets.size);
      throw err;
    }
  }

  /**
   * What the host answers for a path that cannot exist; undefined when that is an honest error,
   * or the scan has probed MAX_PROBED_ORIGINS origins already.
   */
  private notFoundPage(origin: string): Promise<PageFingerprint | undefined> {
    let pending = this.notFoundPages.get(origin);
    if (!pending) {
      if (this.notFoundPages.size >= MAX_PROBED_ORIGINS) return Promise.resolve(undefined);
      const probeUrl = new URL(probePath(), origin).href;
      pending = this.exchange(probeUrl, 'GET', this.deps.linkTimeoutMs, sampleOf).then(({ res, sample }) => {
        if (!res || res.status < 200 || res.status >= 300) return undefined;
        return fingerprint(sample ?? '', probeUrl, res.redirects.length > 0 ? res.url : undefined);
      });
      this.notFoundPages.set(origin, pending);
    }
    return pending;
  }

  /**
   * One request through the throttle, retried after a 429 (or a 503 with a Retry-After) when the
   * wait fits the scan. `read` consumes the body of the final answer while the slot is held; an
   * unread body is dropped. How the request went is reported to the throttle, which adapts the
   * host's concurrency and honours a Retry-After (host-concurrency.ts).
   */
  private async exchange(url: string, method: 'GET' | 'HEAD', timeoutMs: number, read?: BodyReader): Promise<Exchange> {
    const target = new URL(url);
    const host = target.host;
    for (let attempt = 0; ; attempt++) {
      let release: Release;
      try {
        release = await this.deps.throttle.acquire(host, this.signal);
      } catch (err) {
        if (err instanceof HostNotAnsweringError)
          return {
            target,
            error: {
              kind: 'not_answering',
              code: 'ETIMEDOUT',
              message: 'not tried: the host did not answer several requests in a row (ETIMEDOUT)',
            },
          };
        throw err;
      }
      const started = performance.now();
      let res: SafeResponse;
      try {
        res = await this.deps.http.fetch(target, {
          method,
          maxRedirects: MAX_REDIRECTS,
          timeoutMs,
          maxBodyBytes: this.deps.maxPageBytes,
          originHeaders: this.options.originHeaders,
          signal: this.signal,
        });
      } catch (err) {
        release(err instanceof OutboundError ? signalOfFailure(err) : 'neutral');
        if (this.signal.aborted) throw this.signal.reason;
        if (err instanceof OutboundError)
          return { target, error: { kind: err.kind, code: err.code, message: err.message } };
        throw err;
      }
      const elapsed = performance.now() - started;
      const overloaded = res.status === 429 || res.status === 503;
      const health: HostSignal = overloaded ? 'overloaded' : elapsed > this.deps.slowAnswerMs ? 'slow' : 'fast';
      const askedWait = overloaded ? retryAfterMs(header(res.headers, 'retry-after')) : undefined;
      // A 429 is retried after its pause (1 s, then 2 s, without a Retry-After); a 503 only when it says when.
      if (res.status !== 429 && askedWait === undefined) return this.finish({ target, res }, read, release, health);
      const waitMs = askedWait ?? DEFAULT_429_PAUSE_MS * 2 ** attempt;
      const fits = waitMs <= this.deps.maxRetryAfterMs && Date.now() + waitMs + timeoutMs < this.deadline;
      if (attempt >= MAX_429_RETRIES || !fits)
        return this.finish({ target, res, retryAfterSeconds: Math.ceil(waitMs / 1000) }, read, release, health, waitMs);
      await res.dump();
      release(health, waitMs);
    }
  }

  private async finish(
    exchange: Exchange,
    read: BodyReader | undefined,
    release: Release,
    health: HostSignal,
    pauseMs?: number,
  ): Promise<Exchange> {
    const res = exchange.res as SafeResponse;
    try {
      if (read && !this.signal.aborted) Object.assign(exchange, await read(res));
    } catch (err) {
      if (this.signal.aborted) throw this.signal.reason;
      // A body that breaks off still leaves the status standing.
      if (!(err instanceof OutboundError)) throw err;
    } finally {
      await res.dump();
      release(health, pauseMs);
    }
    return exchange;
  }
}

/**
 * What a failed request says about its host's load: a time-out, or a connection refused or reset,
 * is trouble; a DNS, TLS or address-policy failure (or a body too large) says nothing about load.
 */
function signalOfFailure(err: OutboundError): HostSignal {
  if (err.kind === 'timeout') return 'timeout';
  return err.kind === 'connect' ? 'failed' : 'neutral';
}

/**
 * HEAD answers that do not settle a link: an error status (servers that refuse or mishandle HEAD,
 * and bot walls, whose page tells who they are), or a connection HEAD upset. A 429 already had its
 * retries: asking again at once would only be rude.
 */
function headNotTrusted(exchange: Exchange): boolean {
  if (exchange.error)
    return (
      exchange.error.kind === 'protocol' ||
      exchange.error.code === 'ECONNRESET' ||
      exchange.error.code === 'UND_ERR_SOCKET'
    );
  const res = exchange.res as SafeResponse;
  if (res.redirectLimitReached || res.status === 429) return false;
  return res.status < 200 || res.status >= 300;
}

/** The first SAMPLE_BYTES of a body as text; the rest is dropped. */
async function readSample(res: SafeResponse): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= SAMPLE_BYTES) break;
  }
  return Buffer.concat(chunks).subarray(0, SAMPLE_BYTES).toString('utf8');
}

const sampleOf: BodyReader = async (res) => ({ sample: await readSample(res) });

/** Retry-After as milliseconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
