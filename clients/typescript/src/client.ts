/**
 * The Web Utility API client: the operations of the contract (docs/openapi.json, typed by
 * openapi-typescript at build time, called through openapi-fetch), with the API key and base URL
 * from options or the environment, retries, typed errors, files and job waiting.
 */
import createClient, { type Client } from 'openapi-fetch';
import { WebutilError } from './errors.js';
import { WebutilFile } from './files.js';
import type { components, paths } from './generated/openapi.js';
import { type RetryOptions, retryingFetch } from './retry.js';

export type Schemas = components['schemas'];
type JsonBody<P extends keyof paths> = paths[P] extends {
  post: { requestBody?: { content: { 'application/json': infer B } } };
}
  ? B
  : never;
type QueryOf<P extends keyof paths> = paths[P] extends { get: { parameters: { query?: infer Q } } }
  ? NonNullable<Q>
  : never;

export type ScreenshotOptions = JsonBody<'/v1/screenshot'>;
export type PdfOptions = JsonBody<'/v1/url-to-pdf'>;
export type BrokenLinksOptions = JsonBody<'/v1/broken-links'>;
export type BrokenLinksCrawlOptions = JsonBody<'/v1/broken-links/crawl'>;
export type LinkExtractCrawlOptions = JsonBody<'/v1/link-extract/crawl'>;
export type DownCheckQuery = QueryOf<'/v1/down-check'>;
export type MetaScanQuery = QueryOf<'/v1/meta-scan'>;
export type SslScanQuery = QueryOf<'/v1/ssl-scan'>;
export type LinkExtractQuery = QueryOf<'/v1/link-extract'>;
export type BookmarkDownloadQuery = QueryOf<'/v1/bookmarks/check/{job_id}/download'>;
/** The export formats of a link check. */
export type ExportFormat = NonNullable<QueryOf<'/v1/broken-links/crawl/{job_id}/export'>['format']>;

/** The kinds of job, and what each one's poll answers. */
export interface Jobs {
  'broken-links': Schemas['BrokenLinkCrawlJob'];
  'link-extract': Schemas['LinkExtractCrawlJob'];
  bookmarks: Schemas['BookmarkCheckJob'];
}
export type JobKind = keyof Jobs;
const JOB_PATHS: Record<JobKind, string> = {
  'broken-links': '/v1/broken-links/crawl/{job_id}',
  'link-extract': '/v1/link-extract/crawl/{job_id}',
  bookmarks: '/v1/bookmarks/check/{job_id}',
};

export interface WebutilOptions {
  /** An API key (wu_live_… or wu_test_…); default: WEBUTIL_API_KEY; none: an anonymous caller. */
  apiKey?: string;
  /** Where the API is; default: WEBUTIL_BASE_URL, else the contract's server. */
  baseUrl?: string;
  /** Retries of a 429 or 503 (after Retry-After) and of network errors on safe calls; default 3. */
  retries?: number;
  /** The longest wait between tries, in ms; default 60 000. */
  maxRetryDelayMs?: number;
  onRetry?: RetryOptions['onRetry'];
  /** The fetch to use (tests, proxies); default: the global one. */
  fetch?: typeof fetch;
}

export interface WaitOptions<J> {
  /** Called with each poll's answer while the job runs, and with the last. */
  onProgress?: (job: J) => void;
  /** Stops waiting (rejects with the signal's reason); the job itself goes on. */
  signal?: AbortSignal;
  /** Between polls, in ms; default 1000. */
  intervalMs?: number;
}

/** Per call: an Idempotency-Key of your own (default: a new one per call, kept across its retries). */
export interface CallOptions {
  idempotencyKey?: string;
}
const keyHeader = (options: CallOptions): Record<string, string> =>
  options.idempotencyKey ? { 'Idempotency-Key': options.idempotencyKey } : {};

/** An upload: the file's bytes and its name (the name's extension tells the API its format). */
export interface Upload {
  data: Uint8Array | Blob | string;
  name: string;
}

const DEFAULT_BASE_URL = 'http://localhost:8080';

export class Webutil {
  /** The generated client itself, for calls this class does not wrap; JSON answers typed as JSON. */
  readonly api: Client<paths, 'application/json'>;
  readonly baseUrl: string;
  private readonly fetchWithRetries: (request: Request) => Promise<Response>;
  private readonly headers: Record<string, string>;

  constructor(options: WebutilOptions = {}) {
    const apiKey = options.apiKey ?? process.env.WEBUTIL_API_KEY;
    this.baseUrl = (options.baseUrl ?? process.env.WEBUTIL_BASE_URL ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
    this.headers = apiKey ? { Authorization: `Bearer ${apiKey}` } : {};
    const base = options.fetch ?? globalThis.fetch;
    this.fetchWithRetries = retryingFetch((request) => networkErrors(base, request), {
      retries: options.retries ?? 3,
      maxDelayMs: options.maxRetryDelayMs ?? 60_000,
      ...(options.onRetry ? { onRetry: options.onRetry } : {}),
    });
    this.api = createClient<paths, 'application/json'>({
      baseUrl: this.baseUrl,
      headers: this.headers,
      fetch: this.fetchWithRetries,
    });
  }

  // Scanning

  /** Whether a site is up, from where, how fast (1 credit). */
  async downCheck(query: DownCheckQuery) {
    return (await json(this.api.GET('/v1/down-check', { params: { query } }))).data;
  }
  /** A page's title, description, Open Graph and Twitter tags, with checks (1 credit). */
  async metaScan(query: MetaScanQuery) {
    return (await json(this.api.GET('/v1/meta-scan', { params: { query } }))).data;
  }
  /** A host's certificate, chain, protocols and grade (2 credits). */
  async sslScan(query: SslScanQuery) {
    return (await json(this.api.GET('/v1/ssl-scan', { params: { query } }))).data;
  }

  // Links

  /** The links of one page, typed and counted (1 credit). */
  async linkExtract(query: LinkExtractQuery) {
    return (await json(this.api.GET('/v1/link-extract', { params: { query } }))).data;
  }
  /** One page's links, checked (3 credits). */
  async brokenLinks(body: BrokenLinksOptions, options: CallOptions = {}) {
    return (await json(this.api.POST('/v1/broken-links', { body, headers: keyHeader(options) }))).data;
  }
  /**
   * One page's links checked, as a file (csv, md, junit, sarif); spends as brokenLinks. With the
   * Idempotency-Key of a brokenLinks call just made with the same body, it is that check's
   * answer as a file, spending nothing more.
   */
  exportBrokenLinks(body: BrokenLinksOptions, format: ExportFormat, options: CallOptions = {}): Promise<WebutilFile> {
    return this.file(`/v1/broken-links/export?format=${encodeURIComponent(format)}`, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'Content-Type': 'application/json', ...keyHeader(options) },
    });
  }
  /** Starts a site crawl that checks every link; poll with waitForJob('broken-links', jobId). */
  async startBrokenLinksCrawl(body: BrokenLinksCrawlOptions) {
    return (await json(this.api.POST('/v1/broken-links/crawl', { body }))).data;
  }
  /** A finished crawl's result as a file (csv, md, junit, sarif); free. */
  exportBrokenLinksCrawl(jobId: string, format: ExportFormat): Promise<WebutilFile> {
    return this.file(`/v1/broken-links/crawl/${encodeURIComponent(jobId)}/export?format=${encodeURIComponent(format)}`);
  }
  /** Starts a site crawl that lists every link; poll with waitForJob('link-extract', jobId). */
  async startLinkExtractCrawl(body: LinkExtractCrawlOptions) {
    return (await json(this.api.POST('/v1/link-extract/crawl', { body }))).data;
  }

  // Jobs

  /** A job's state now (free). */
  async job<K extends JobKind>(kind: K, jobId: string): Promise<Jobs[K]> {
    const path = JOB_PATHS[kind] as '/v1/broken-links/crawl/{job_id}';
    const answer = await json(this.api.GET(path, { params: { path: { job_id: jobId } } }));
    return answer.data as unknown as Jobs[K];
  }

  /**
   * Polls a job until it is done or failed and answers its last state (a failed job is answered,
   * not thrown: its `error` says why). `onProgress` sees every poll.
   */
  async waitForJob<K extends JobKind>(kind: K, jobId: string, options: WaitOptions<Jobs[K]> = {}): Promise<Jobs[K]> {
    const interval = options.intervalMs ?? 1000;
    for (;;) {
      options.signal?.throwIfAborted();
      const job = await this.job(kind, jobId);
      options.onProgress?.(job);
      if (job.status !== 'crawling') return job;
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, interval);
        options.signal?.addEventListener(
          'abort',
          () => {
            clearTimeout(timer);
            reject(options.signal?.reason);
          },
          { once: true },
        );
      });
    }
  }

  // Rendering

  /** A screenshot (2 credits): its fields; the file is at /api/uploads/<filename> (screenshotFile). */
  async screenshot(body: ScreenshotOptions) {
    return json(this.api.POST('/v1/screenshot', { body }));
  }
  /** A screenshot's file: rendered (2 credits), then downloaded (free). */
  async screenshotFile(body: ScreenshotOptions): Promise<WebutilFile> {
    return this.download(`/api/uploads/${encodeURIComponent((await this.screenshot(body)).filename)}`);
  }
  /** A PDF of a page (3 credits): its fields; the file with pdfFile. */
  async urlToPdf(body: PdfOptions) {
    return json(this.api.POST('/v1/url-to-pdf', { body }));
  }
  /** A page's PDF file: rendered (3 credits), then downloaded (free). */
  async pdfFile(body: PdfOptions): Promise<WebutilFile> {
    return this.download(`/api/uploads/${encodeURIComponent((await this.urlToPdf(body)).filename)}`);
  }

  // Bookmarks

  /** Starts checking a bookmark file link by link; poll with waitForJob('bookmarks', jobId). */
  async checkBookmarks(
    file: Upload,
    options: { key?: string; salt?: string; webhookUrl?: string } = {},
  ): Promise<Schemas['JobStarted']> {
    const answer = await this.upload<{ data: Schemas['JobStarted'] }>('/v1/bookmarks/check', file, options);
    return answer.data;
  }
  /** A checked bookmark file, cleaned as asked (free). */
  bookmarkCheckDownload(jobId: string, query: BookmarkDownloadQuery = {}): Promise<WebutilFile> {
    const search = new URLSearchParams(Object.entries(query).filter(([, v]) => v !== undefined) as [string, string][]);
    return this.file(`/v1/bookmarks/check/${encodeURIComponent(jobId)}/download?${search}`);
  }
  /** An XBEL file as browser bookmark HTML: its download link (free conversion). */
  xbelToHtml(file: Upload) {
    return this.upload<Converted>('/v1/xbel-to-html', file, {});
  }
  /** Browser bookmark HTML as XBEL: its download link. */
  htmlToXbel(file: Upload) {
    return this.upload<Converted>('/v1/html-to-xbel', file, {});
  }
  /** A Floccus-encrypted XBEL file decrypted: its download link. */
  xbelDecrypt(file: Upload, key: string, salt?: string) {
    return this.upload<Converted>('/v1/xbel-decrypt', file, { key, ...(salt ? { salt } : {}) });
  }

  // Account

  /** The caller's credits (free). */
  async quota() {
    return (await json(this.api.GET('/v1/quota'))).data;
  }

  // Files

  /** A file by its download URL or path (downloadUrl of a conversion, /api/uploads/<filename>); free. */
  download(urlOrPath: string): Promise<WebutilFile> {
    return this.file(urlOrPath);
  }

  private async file(urlOrPath: string, init: RequestInit = {}): Promise<WebutilFile> {
    return new WebutilFile(await this.send(urlOrPath, init));
  }

  private async upload<T>(path: string, file: Upload, fields: Record<string, string | undefined>): Promise<T> {
    const form = new FormData();
    const data = file.data instanceof Blob ? file.data : new Blob([file.data as Uint8Array<ArrayBuffer> | string]);
    form.set('file', data, file.name);
    for (const [name, value] of Object.entries(fields)) if (value !== undefined) form.set(name, value);
    return (await (await this.send(path, { method: 'POST', body: form })).json()) as T;
  }

  /** One call through the retries, the key and the base URL; a failure thrown as a WebutilError. */
  private async send(urlOrPath: string, init: RequestInit): Promise<Response> {
    const url = /^https?:\/\//.test(urlOrPath) ? urlOrPath : `${this.baseUrl}${urlOrPath}`;
    const headers = new Headers(init.headers);
    for (const [name, value] of Object.entries(this.headers)) if (!headers.has(name)) headers.set(name, value);
    const response = await this.fetchWithRetries(new Request(url, { ...init, headers }));
    if (!response.ok) throw await WebutilError.fromResponse(response);
    return response;
  }
}

type Converted = JsonOf<'/v1/xbel-to-html'>;
type JsonOf<P extends keyof paths> = paths[P] extends {
  post: { responses: { 200: { content: { 'application/json': infer B } } } };
}
  ? B
  : never;

/** openapi-fetch's answer: its data, or its failure thrown as a WebutilError. */
async function json<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (error !== undefined || data === undefined) {
    const envelope = error as { error?: { code?: string; message?: string; creditsRequired?: number } } | undefined;
    throw new WebutilError(
      envelope?.error?.message ?? `${response.status} ${response.statusText}`,
      envelope?.error?.code ?? `http_${response.status}`,
      response.status,
      response.headers.get('x-request-id') ?? undefined,
      retryAfter(response),
      envelope?.error?.creditsRequired,
    );
  }
  return data;
}

function retryAfter(response: Response): number | undefined {
  const value = Number(response.headers.get('retry-after') ?? Number.NaN);
  return Number.isFinite(value) ? value : undefined;
}

/** A network failure (refused, unresolvable, reset) as a WebutilError with code network_error. */
async function networkErrors(base: typeof fetch, request: Request): Promise<Response> {
  try {
    return await base(request);
  } catch (err) {
    if (request.signal.aborted) throw err;
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    const detail = cause?.code ?? cause?.message ?? (err as Error).message;
    throw new WebutilError(
      `cannot reach ${new URL(request.url).origin} (${detail})`,
      'network_error',
      0,
      undefined,
      undefined,
      undefined,
      { cause: err },
    );
  }
}
