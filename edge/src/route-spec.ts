/** What a row of the route table (routes.ts) declares. */
import type { Credential, Quota, RateWindow } from '@webutil/proto/webutil/billing/v1/billing';
import type { Context } from 'koa';
import type { z } from 'zod';
import type { Clients } from './clients.js';
import type { Envelope } from './envelope.js';
import type { CallOptions } from './grpc-clients.js';
import type { UploadRules } from './multipart.js';
import type { Presentable } from './rest/message.js';

/** Public prefix, and the website's same-origin alias of it. */
export const PREFIXES = ['/v1', '/api/v1'] as const;

/** A path below the version prefix, under each prefix. */
export const versioned = (path: string) => PREFIXES.map((prefix) => `${prefix}${path}`);

/** What a route's RPC may know about its caller: the credential and the quota after the hold. */
export interface Caller {
  credential: Credential;
  quota: Quota;
  /**
   * Billing's opaque name of who pays (its rate window's key): `account:<id>` for every key and
   * session of an account, `ip:<network>` for an anonymous caller. Per-caller bounds count by it.
   */
  subject: string;
  /** The caller's rate window as billing last counted it: whose it is, and the caller's bounds. */
  rate?: RateWindow;
  /** A sandbox (test) key: its credit-spending calls are answered from samples (sandbox/). */
  sandbox?: boolean;
}

/**
 * A free read held to a bound of its own instead of the caller's request rate (decision 0161).
 * job-poll: GET of a crawl job, on either prefix. site-read: GET /quota and /auth/me on the
 * website's alias (/api/v1) only; on /v1 they count toward the caller's rate as the spec says.
 */
export type FreeReadKind = 'job-poll' | 'site-read';

/** One public route: everything between the HTTP request and the one RPC it maps to. */
// biome-ignore lint/suspicious/noExplicitAny: the table holds rows of every reply type; `route()` types each row
export interface RouteSpec<In extends z.ZodObject = z.ZodObject, R = any, Out extends z.ZodType = z.ZodType> {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Path below the version prefix, in @koa/router syntax, e.g. /broken-links/crawl/:job_id. */
  path: string;
  /** Operation name, for billing, logs and the contract's operationId. */
  operation: string;
  /** One line for the contract. */
  summary: string;
  /** Credits a success spends (spec's table); 0 for free routes. With `perBlock`, its first block's. */
  credits: number;
  /**
   * A price by size, for a job whose work grows with its input and is known only once the call has
   * read it (a bookmark check's list): `credits` pays for the first block of `size` units, and each
   * further block begun costs `perBlock.credits` more (decision 0351). The call states its size
   * with its `price` argument before it creates anything.
   */
  perBlock?: BlockPrice;
  /**
   * Which credentials the route serves: any (default; anonymous, session or API key), session
   * (account and key management), owner (a session or an API key without limits; a test key acts
   * in its sandbox: the webhook secret and log), or ip (credentials ignored: sign-in, sign-up, the
   * challenge).
   */
  callers?: 'any' | 'session' | 'owner' | 'ip';
  /** Browser callers need a challenge clearance; default: when the route spends credits. */
  challenge?: boolean;
  /**
   * Free, and answered from the caller's quota alone: the edge may answer it from its short-lived
   * view of the caller (billing's last word, CALLER_VIEW_MS at most) instead of asking billing.
   */
  fromCallerView?: boolean;
  /**
   * Holds a browser: counted toward the caller's renders in flight (its plan's figure), over which
   * it is refused with 429 concurrency_limited before the call, spending nothing.
   */
  render?: boolean;
  /**
   * A free read held to a bound of its own instead of the caller's request rate
   * (metering/free-read-bounds.ts): crawl job polls, and the website's per-page reads.
   */
  freeRead?: FreeReadKind;
  /** Query (GET) or JSON body (POST), merged with the path parameters. */
  input: In;
  /**
   * A POST whose body is a multipart/form-data upload instead of JSON: the file's rules. The
   * input schema then reads the form, the file under `upload.field`.
   */
  upload?: UploadRules;
  /**
   * A POST whose body is kept as sent, not parsed (a signed payload: the signature covers its
   * bytes): the input schema reads it as `payload`, beside the headers it names.
   */
  rawBody?: RawBody;
  /** The success fields, as the spec lists them. */
  output: Out;
  /** Fields in `data` (default) or at top level. */
  envelope?: Envelope;
  /** Success status; 200 unless set. */
  status?: 200 | 201 | 202;
  /**
   * The service's failures this route answers, code -> HTTP status (the spec maps some per
   * route); the gRPC status decides any other. Also the contract's list of them.
   */
  errors?: Record<string, number>;
  /** Deadline handed to the service. */
  timeoutMs: number;
  /** `price`: a route with `perBlock` states its size with it (see Price); other routes never call it. */
  call(clients: Clients, input: z.output<In>, options: CallOptions, caller: Caller, price: Price): Promise<R>;
  /**
   * A call whose work stays behind (a crawl start creates a job): when its client leaves, the call
   * is not cancelled (its answer says whether the work stands, which is billed); the service is
   * asked instead to withdraw it, which it does if the work is not done yet.
   */
  withdraw?(clients: Clients, requestId: string): Promise<unknown>;
  /** What of the reply the output schema presents (absent: a 500); default: the reply itself. */
  present?(reply: R, ctx: Context): Presentable<z.output<Out>> | undefined;
  /** Extra response headers (cookies, caching). */
  headers?(reply: R, ctx: Context): Record<string, string>;
  /** The extra headers every success carries (set by `headers`), name -> meaning, for the contract. */
  successHeaders?: Record<string, string>;
  /**
   * The reply names a stored file the caller may take in the same round trip: with an Accept
   * header naming the file's content type, the answer is the file's bytes and the reply's fields
   * are headers; without one, the JSON answer as ever.
   */
  file?: FileAnswer<R>;
  /**
   * The answer may be asked for as a file in another format with `?format=` (decision 0217): the
   * format is validated before anything is held; the file is rendered from the presented fields.
   */
  exports?: ExportAnswer<z.output<In>, z.output<Out>>;
  /**
   * The route's export operation (exportRoutes): `format` is required and the answer is only the
   * file, so a generated client types it as the file and the route's own answer as JSON.
   */
  exportOnly?: boolean;
}

/** A price by size (RouteSpec.perBlock). */
export interface BlockPrice {
  /** Units per block, e.g. 1,000 bookmarks. */
  size: number;
  /** What is counted, plural, for the contract: bookmarks. */
  unit: string;
  /** Credits of each block after the first. */
  credits: number;
  /** The most units a call has (its list's cap), for the contract's highest price. */
  maxUnits: number;
  /** How the price is settled, when not all at the start (a site audit's: decision 0490). */
  settled?: string;
}

/**
 * The call's size, once it has read its input (units of its route's `perBlock`): its sized price is
 * held instead of the first block's, or it is refused, 402, with nothing held any more. Called
 * before the call creates anything, at most once.
 */
export type Price = (units: number, job?: JobSettled) => Promise<JobHold | undefined>;

/**
 * A job that settles its own price when it ends (decision 0490): its sized price is held for
 * `holdMs` (the job's budget), and the hold is handed to the job instead of being spent before
 * the answer.
 */
export interface JobSettled {
  holdMs: number;
}

/** The hold a job settles: billing's name for it. Absent when nothing is held (a sandbox key). */
export interface JobHold {
  reservationId: string;
}

/** The `price` of a call made outside a request (a webhook's poll of a job): it holds nothing to price. */
export const NOT_PRICED: Price = () => Promise.reject(new Error('a call outside a request is not priced'));

/** What a call of `units` costs on a route priced by size: the first block's credits, then each further block's. */
export function sizedCredits(spec: Pick<RouteSpec, 'credits' | 'perBlock'>, units: number): number {
  if (!spec.perBlock) return spec.credits;
  const blocks = Math.max(1, Math.ceil(units / spec.perBlock.size));
  return spec.credits + (blocks - 1) * spec.perBlock.credits;
}

/** How a route takes its body as sent (RouteSpec.rawBody). */
export interface RawBody {
  /** The body's media type (anything else is a 415). */
  contentType: 'application/json';
  /** The largest body taken (a larger one is a 413 before anything is held). */
  maxBytes: number;
  /** Input field -> the request header it is read from. */
  headers: Record<string, string>;
  /** What the body is, for the contract. */
  description: string;
}

/** How a route answers in another format (RouteSpec.exports). */
// biome-ignore lint/suspicious/noExplicitAny: the table holds rows of every input and output; `route()` types each row
export interface ExportAnswer<In = any, Out = any> {
  /** The values `format` takes. */
  formats: readonly string[];
  /** The content types of the files, for the contract. */
  contentTypes: readonly string[];
  /** What `format` does, for the contract. */
  description: string;
  /** Failures of the export itself, code -> status, for the contract (a crawl not done yet). */
  errors?: Record<string, number>;
  /** The file; throws an HttpError when the answer has none (yet). */
  render(format: string, fields: Out, input: In): { body: string; contentType: string; fileName: string };
}

/** How a route answers with the file its reply names (RouteSpec.file). */
export interface FileAnswer<R> {
  /** The content types the files may have, for the contract. */
  contentTypes: readonly string[];
  /** The file's content type, from the reply. */
  contentType(reply: R): string;
  /** The file's name (Content-Disposition). */
  name(reply: R): string;
  /** The reply's fields as headers, in place of the JSON body. */
  headers(reply: R): Record<string, string>;
  /** The headers `headers` sets, name -> meaning, for the contract. */
  fieldHeaders: Record<string, string>;
  /** The stored file, as the download route streams it. */
  read(clients: Clients, reply: R, options: CallOptions): AsyncIterable<FilePart>;
}

/** The methods whose input is a JSON body (POST and PATCH; a GET's is its query, a DELETE's its path). */
export const takesJsonBody = (spec: Pick<RouteSpec, 'method'>) => spec.method === 'POST' || spec.method === 'PATCH';

/** Identity helper so each table row infers its own input, reply and output types. */
export const route = <In extends z.ZodObject, R, Out extends z.ZodType>(
  spec: RouteSpec<In, R, Out>,
): RouteSpec<In, R, Out> => spec;

/**
 * Each route with exports, also at `<path>/export` (operation `<operation>-export`): the same call,
 * spending the same, answering only the file in the required `format`.
 */
export const exportRoutes = (routes: readonly RouteSpec[]): RouteSpec[] =>
  routes
    .filter((spec) => spec.exports)
    .map((spec) => ({
      ...spec,
      path: `${spec.path}/export`,
      summary: `${spec.summary} As a file: ${spec.exports?.formats.join(', ')}.`,
      exportOnly: true,
    }));

/** A stored file as a server-streaming RPC sends it: the first message names its type, size and name. */
export interface FilePart {
  contentType: string;
  /** int64 as ts-proto gives it. */
  sizeBytes: string;
  /** Suggested download name; the stored name when absent or empty. */
  fileName?: string;
  chunk: Uint8Array;
}

/**
 * A download row: GET of a stored result file, streamed from the service that owns it. Free and
 * rate-counted like every route.
 */
export interface DownloadSpec<In extends z.ZodObject = z.ZodObject> {
  /** Full public paths (not below a version prefix: GET /api/uploads/<filename> is outside /v1). */
  paths: readonly string[];
  operation: string;
  summary: string;
  /** The path parameters; the one named by `nameParam` is the stored name. */
  input: In;
  /** Which input field names the stored file (the download name when the service gives none). */
  nameParam: keyof z.output<In> & string;
  /** inline: shown by a browser (images, PDFs); attachment: saved (bookmark files). */
  disposition: 'inline' | 'attachment';
  /** The content types the files may have, for the contract. */
  contentTypes: readonly string[];
  /**
   * any (default): no credential needed, but one that is sent counts the rate against its owner (a
   * subscriber's downloads are not held to the anonymous per-IP rate); ip: credentials ignored.
   */
  callers?: 'ip' | 'any';
  errors?: Record<string, number>;
  /** Cache-Control of the answer; default private, no-store (a stored result is its holder's alone). */
  cacheControl?: string;
  timeoutMs: number;
  call(clients: Clients, input: z.output<In>, options: CallOptions): AsyncIterable<FilePart>;
}

export const download = <In extends z.ZodObject>(spec: DownloadSpec<In>): DownloadSpec<In> => spec;

/** What authorize() needs of a row. */
export type Metered = Pick<
  RouteSpec,
  'operation' | 'credits' | 'callers' | 'challenge' | 'fromCallerView' | 'freeRead' | 'render' | 'timeoutMs' | 'errors'
>;
