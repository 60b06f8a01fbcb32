import dns, { type LookupAddress, type LookupOptions } from 'node:dns';
import { EventEmitter } from 'node:events';
import { STATUS_CODES } from 'node:http';
import net from 'node:net';
import { type Duplex, pipeline, type Readable } from 'node:stream';
import tls from 'node:tls';
import zlib from 'node:zlib';
import { Agent, buildConnector, Client, type Dispatcher } from 'undici';
import type { AddressPolicy } from './address-policy.js';
import { header } from './http-header.js';
import type { LookupHost } from './resolve-target.js';

/** Why an outbound request failed, in terms callers map to reasons and error codes. */
export type OutboundFailureKind =
  | 'blocked'
  | 'dns'
  | 'connect'
  | 'timeout'
  | 'tls'
  | 'protocol'
  | 'too_large'
  | 'cancelled';

export class OutboundError extends Error {
  constructor(
    readonly kind: OutboundFailureKind,
    /** Low-level code, e.g. ENOTFOUND, ECONNREFUSED, ETIMEDOUT, CERT_HAS_EXPIRED, ETARGETBLOCKED. */
    readonly code: string,
    message: string,
    readonly url: string,
  ) {
    super(message);
    this.name = 'OutboundError';
  }
}

export interface SafeHttpOptions {
  policy: AddressPolicy;
  connectTimeoutMs?: number;
  /** Longest wait for response headers, and longest silence inside a body. */
  idleTimeoutMs?: number;
  connectionsPerOrigin?: number;
  userAgent?: string;
  /** How host names are resolved (resolve-target.ts); the system resolver by default. */
  lookup?: LookupHost;
  /** PEM roots https certificates are checked against, replacing Node's bundled ones (a private CA). */
  ca?: readonly string[];
}

export interface FetchOptions {
  /** POST sends `body` (a webhook delivery); a redirect of it is never followed (see `maxRedirects`). */
  method?: 'GET' | 'HEAD' | 'POST';
  body?: string | Buffer;
  /** Redirects to follow; past this the last 3xx response is returned with redirectLimitReached. */
  maxRedirects?: number;
  /** Budget for the whole exchange, redirects and body included. */
  timeoutMs?: number;
  /** Bytes of (decoded) body a caller may read; more is cut off and `truncated` set. */
  maxBodyBytes?: number;
  headers?: Record<string, string>;
  /**
   * Headers for one origin only (a caller's credentials for the site it asked about): sent on
   * hops to `origin` until a redirect leaves it, never to another origin, nor after coming back.
   */
  originHeaders?: OriginHeaders;
  signal?: AbortSignal;
  /**
   * When given, every hop opens a connection of its own (no keep-alive reuse) and the time of its
   * phases is added here: what a monitor reports is a fresh connection's cost, and a pooled
   * connection would have no phases to time, or another request's.
   */
  phases?: ConnectionPhases;
}

/** The time spent opening connections, summed over an exchange's hops; null where no hop had the phase. */
export interface ConnectionPhases {
  /** Name lookup (null when every host was an IP literal, or a lookup failed). */
  dnsMs: number | null;
  /** TCP connect, until established. */
  connectMs: number | null;
  /** TLS handshake (null for plain http). */
  tlsMs: number | null;
}

export interface OriginHeaders {
  /** An origin as URL.origin spells it (scheme, host, port). */
  origin: string;
  headers: Record<string, string>;
}

export interface RedirectHop {
  url: string;
  status: number;
}

export interface SafeResponse {
  /** URL of the final response. */
  url: string;
  status: number;
  statusText: string;
  headers: Record<string, string | string[] | undefined>;
  redirects: RedirectHop[];
  redirectLimitReached: boolean;
  /** From sending the first request to the final response's headers. */
  timeToHeadersMs: number;
  /** Decoded body, cut at maxBodyBytes; iterate once. */
  body: AsyncIterable<Buffer>;
  /** True once reading stopped at maxBodyBytes. */
  readonly truncated: boolean;
  text(): Promise<string>;
  dump(): Promise<void>;
}

const DEFAULT_UA = 'Mozilla/5.0 (compatible; WebUtilBot/1.0; +https://webutil.dev/bot)';
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/**
 * Outbound HTTP that cannot be pointed inside: only http/https, and every connection's address
 * is checked by the address policy at connect time (IP literals before connecting, names in the
 * resolver the socket itself uses), so redirects and DNS rebinding are covered too.
 * One keep-alive pool per instance.
 */
export class SafeHttp {
  private readonly agent: Agent;
  private readonly userAgent: string;
  private readonly idleTimeoutMs: number;
  /** Opens a policy-checked connection, timing its phases into `phases` when given. */
  private readonly connect: (
    opts: buildConnector.Options,
    callback: buildConnector.Callback,
    phases?: ConnectionPhases,
  ) => void;

  constructor(options: SafeHttpOptions) {
    this.userAgent = options.userAgent ?? DEFAULT_UA;
    const policy = options.policy;
    const connectorOptions = {
      timeout: options.connectTimeoutMs ?? 10_000,
      lookup: guardedLookup(policy, options.lookup),
      // One context for every connection: a `ca` list given per connection is parsed again each time.
      ...(options.ca ? { secureContext: tls.createSecureContext({ ca: [...options.ca] }) } : {}),
    } as buildConnector.BuildOptions;
    const connector = buildConnector(connectorOptions);
    // A timed exchange's one-off connection carries one exchange and is closed when it ends (or at
    // its idle timeout), before keep-alive probes (60 s idle) could fire: setting them took 8
    // system calls per down-check. Its TLS sessions are resumed from other one-offs only.
    const oneOffConnector = buildConnector({ ...connectorOptions, keepAlive: false });
    this.idleTimeoutMs = options.idleTimeoutMs ?? 15_000;
    this.connect = (opts, callback, phases) => {
      const host = opts.hostname.replace(/^\[|\]$/g, '');
      if (net.isIP(host) && !policy.allows(host)) {
        callback(blockedError(host, false), null);
        return;
      }
      const started = phases && performance.now();
      // undici's connector returns the socket it opens, though its type says void.
      const open = (phases ? oneOffConnector : connector) as (...args: Parameters<typeof connector>) => unknown;
      const socket = open(opts, callback);
      if (phases && started !== undefined && socket instanceof net.Socket) {
        timePhases(socket, opts.protocol === 'https:', started, phases);
      }
    };
    this.agent = new Agent({
      connect: (opts, callback) => this.connect(opts, callback),
      connections: options.connectionsPerOrigin ?? 16,
      keepAliveTimeout: 10_000,
      headersTimeout: this.idleTimeoutMs,
      bodyTimeout: this.idleTimeoutMs,
    });
  }

  async fetch(input: URL | string, opts: FetchOptions = {}): Promise<SafeResponse> {
    const exchange = exchangeSignal(opts.timeoutMs ?? 30_000, opts.signal);
    const signal = exchange.signal;
    /** The one-off connections of a timed exchange, closed when it ends. */
    const ownClients: Client[] = [];
    const done = opts.phases
      ? () => {
          exchange.done();
          for (const client of ownClients.splice(0)) closeOneOff(client);
        }
      : exchange.done;
    const maxRedirects = opts.maxRedirects ?? 5;
    const redirects: RedirectHop[] = [];
    const started = performance.now();
    const headers = {
      'user-agent': this.userAgent,
      accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
      'accept-encoding': 'gzip, deflate, br',
      ...opts.headers,
    };
    let url = typeof input === 'string' ? new URL(input) : input;
    let method = opts.method ?? 'GET';
    // A body is sent once: a redirected POST is answered with its 3xx, not followed.
    const maxRedirectsFor = (m: string) => (m === 'POST' ? 0 : maxRedirects);
    const scoped = opts.originHeaders;
    /** Whether every hop so far was to the scoped origin (once off it, its headers stay off). */
    let onOrigin = scoped !== undefined && url.origin === scoped.origin;
    try {
      for (;;) {
        assertWebScheme(url);
        let res: Dispatcher.ResponseData;
        try {
          // The agent's own request(): undici's top-level request(url) reads the URL again and copies
          // the options on every call (docs/decisions/0054-outbound-request-cost.md).
          const dispatcher = opts.phases ? this.oneOff(url, opts.phases, ownClients) : this.agent;
          res = await dispatcher.request({
            origin: url.origin,
            path: url.pathname + url.search,
            method,
            signal,
            headers: onOrigin && scoped ? { ...headers, ...scoped.headers } : headers,
            body: method === 'POST' ? opts.body : undefined,
            // undici closes the connection after a HEAD unless told not to (for servers that wrongly
            // send a body); link checks send thousands of HEADs, so they keep it like node:http does.
            reset: method === 'HEAD' ? false : undefined,
          });
        } catch (err) {
          throw classify(err, url.href, signal, opts.signal);
        }
        const location = header(res.headers, 'location');
        if (!REDIRECT_STATUSES.has(res.statusCode) || !location || redirects.length >= maxRedirectsFor(method)) {
          // The exchange stays open until its body is read or dropped (see wrap).
          return this.wrap(
            url,
            res,
            redirects,
            REDIRECT_STATUSES.has(res.statusCode) && !!location,
            started,
            opts,
            signal,
            done,
          );
        }
        await res.body.dump().catch(() => undefined);
        redirects.push({ url: url.href, status: res.statusCode });
        try {
          url = new URL(location, url);
        } catch {
          throw outboundError(
            'protocol',
            'EBADREDIRECT',
            `invalid redirect location ${location.slice(0, 200)}`,
            url.href,
          );
        }
        if (res.statusCode === 303 && method !== 'HEAD') method = 'GET';
        if (onOrigin && url.origin !== scoped?.origin) onOrigin = false;
      }
    } catch (err) {
      // Every failure ends the exchange: its timer, and its listener on the caller's signal.
      done();
      throw err;
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  /** A client for one request to `url`'s origin, on a connection of its own whose phases are timed. */
  private oneOff(url: URL, phases: ConnectionPhases, owned: Client[]): Client {
    const client = new Client(url.origin, {
      connect: (opts, callback) => this.connect(opts, callback, phases),
      headersTimeout: this.idleTimeoutMs,
      bodyTimeout: this.idleTimeoutMs,
    });
    owned.push(client);
    return client;
  }

  private wrap(
    url: URL,
    res: Dispatcher.ResponseData,
    redirects: RedirectHop[],
    redirectLimitReached: boolean,
    started: number,
    opts: FetchOptions,
    signal: ExchangeAbort,
    done: () => void,
  ): SafeResponse {
    const headers = res.headers as Record<string, string | string[] | undefined>;
    const encoding = header(res.headers, 'content-encoding');
    const maxBytes = opts.maxBodyBytes ?? 10 * 1024 * 1024;
    let truncated = false;
    let consumed = false;
    const href = url.href;
    const callerSignal = opts.signal;
    async function* bounded(): AsyncGenerator<Buffer> {
      consumed = true;
      let total = 0;
      let ended = false;
      try {
        for await (const chunk of decode(res.body, encoding) as AsyncIterable<Buffer>) {
          const room = maxBytes - total;
          if (chunk.length >= room) {
            if (room > 0) yield chunk.subarray(0, room);
            truncated = chunk.length > room || truncated;
            total = maxBytes;
            if (chunk.length > room) break;
            continue;
          }
          total += chunk.length;
          yield chunk;
        }
        ended = !truncated;
      } catch (err) {
        throw classify(err, href, signal, callerSignal);
      } finally {
        // Cut off, or left by its reader: a body nobody reads is dropped, not left waiting paused.
        if (!ended) discard(res.body);
        done();
      }
    }
    const body = bounded();
    return {
      url: href,
      status: res.statusCode,
      statusText: STATUS_CODES[res.statusCode] ?? 'Unknown',
      headers,
      redirects,
      redirectLimitReached,
      timeToHeadersMs: Math.round(performance.now() - started),
      body,
      get truncated() {
        return truncated;
      },
      async text() {
        const chunks: Buffer[] = [];
        for await (const chunk of body) chunks.push(chunk);
        return Buffer.concat(chunks).toString('utf8');
      },
      async dump() {
        if (consumed) {
          discard(res.body);
          return;
        }
        // Reading a short remainder keeps the keep-alive connection; a long one is cut off.
        await res.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
        done();
      },
    };
  }
}

/**
 * Closes a one-off connection. undici destroys it with an error of its own, whose stack Node's
 * stream destroy reads at once: formatted through the source maps the services run with, that
 * stack was a large share of a down-check's CPU, for an error nobody sees.
 */
function closeOneOff(client: Client): void {
  const stackTraceLimit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    client.destroy().catch(() => undefined);
  } finally {
    Error.stackTraceLimit = stackTraceLimit;
  }
}

/**
 * Adds a new socket's phases as they complete: lookup (absent for an IP literal), TCP connect,
 * then the TLS handshake. A phase that fails or never starts adds nothing.
 */
function timePhases(socket: net.Socket, tls: boolean, started: number, phases: ConnectionPhases): void {
  let mark = started;
  const lap = () => {
    const now = performance.now();
    const ms = now - mark;
    mark = now;
    return ms;
  };
  const add = (sum: number | null, ms: number) => (sum ?? 0) + ms;
  socket.once('lookup', (err: Error | null) => {
    const ms = lap();
    if (!err) phases.dnsMs = add(phases.dnsMs, ms);
  });
  socket.once('connect', () => {
    phases.connectMs = add(phases.connectMs, lap());
  });
  if (tls) {
    socket.once('secureConnect', () => {
      phases.tlsMs = add(phases.tlsMs, lap());
    });
  }
}

/**
 * The abort of one exchange, given to undici as the request's signal: undici takes an
 * EventEmitter there, which costs a fraction of an AbortController and its EventTarget listeners,
 * and that matters when a link check makes thousands of requests.
 */
class ExchangeAbort extends EventEmitter {
  aborted = false;
  reason: unknown;

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.emit('abort');
  }
}

/**
 * The exchanges under way per caller signal. One listener on the signal aborts them all: a
 * crawl's exchanges share its signal, and an EventTarget walks its whole listener list on every
 * add and remove, so a listener each cost in proportion to the requests in flight.
 */
const exchangesOf = new WeakMap<AbortSignal, Set<ExchangeAbort>>();

function follow(caller: AbortSignal, exchange: ExchangeAbort): () => void {
  let live = exchangesOf.get(caller);
  if (!live) {
    const exchanges = new Set<ExchangeAbort>();
    const abortAll = () => {
      for (const each of exchanges) each.abort(caller.reason);
      exchanges.clear();
    };
    caller.addEventListener('abort', abortAll, { once: true });
    exchangesOf.set(caller, exchanges);
    live = exchanges;
  }
  live.add(exchange);
  return live.delete.bind(live, exchange);
}

/**
 * The abort of one exchange: the caller's signal, or its time budget running out (a plain timer,
 * several times cheaper than AbortSignal.timeout with AbortSignal.any); `done()` lets go of both.
 */
function exchangeSignal(
  timeoutMs: number,
  caller: AbortSignal | undefined,
): { signal: ExchangeAbort; done: () => void } {
  const signal = new ExchangeAbort();
  const unfollow = caller && !caller.aborted ? follow(caller, signal) : undefined;
  const done = () => {
    clearTimeout(timer);
    unfollow?.();
  };
  const timer = setTimeout(() => {
    signal.abort(new DOMException('The operation timed out.', 'TimeoutError'));
    done();
  }, timeoutMs);
  timer.unref();
  if (caller?.aborted) signal.abort(caller.reason);
  return { signal, done };
}

function assertWebScheme(url: URL): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw outboundError('blocked', 'EUNSUPPORTEDSCHEME', `a ${url.protocol} URL is not fetched`, url.href);
  }
}

/**
 * Decompresses per content-encoding. pipeline, not pipe: an error or abort of the raw body
 * (timeout, cancel, reset) must destroy the decoder too, or its reader waits forever.
 */
function decode(body: Readable, encoding: string | undefined): Readable {
  const decoder = decoderFor(encoding);
  return decoder ? pipeline(body, decoder, () => undefined) : body;
}

function decoderFor(encoding: string | undefined): Duplex | undefined {
  switch (encoding?.trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return zlib.createGunzip();
    case 'deflate':
      return zlib.createInflate();
    case 'br':
      return zlib.createBrotliDecompress();
    default:
      return undefined;
  }
}

/**
 * Destroys a body nobody will read. undici's body emits an 'error' (RequestAbortedError) when
 * destroyed before its end, an uncaught exception unless something listens for it.
 */
function discard(body: Readable): void {
  if (body.destroyed) return;
  body.on('error', () => undefined);
  body.destroy();
}

/**
 * A refused target. The message names what the caller gave (a host name or an IP literal), never
 * the address a name resolved to: that would tell callers what lies inside our network.
 */
export function blockedError(host: string, resolved: boolean): Error {
  const what = resolved
    ? `${host} resolves to a private or reserved address`
    : `${host} is a private or reserved address`;
  return Object.assign(new Error(`${what}, which is not fetched`), { code: 'ETARGETBLOCKED' });
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** The resolver every outbound socket uses: resolves, then drops addresses the policy refuses. */
function guardedLookup(policy: AddressPolicy, lookup: LookupHost | undefined) {
  const answer =
    (hostname: string, options: LookupOptions, callback: LookupCallback) =>
    (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => {
      if (err) return callback(err, []);
      const allowed = addresses.filter((a) => policy.allows(a.address));
      const first = allowed[0];
      if (!first) return callback(blockedError(hostname, true) as NodeJS.ErrnoException, []);
      if (options.all) callback(null, allowed);
      else callback(null, first.address, first.family);
    };
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    const done = answer(hostname, options, callback);
    if (!lookup) {
      dns.lookup(hostname, { all: true, family: options.family ?? 0, hints: options.hints }, done);
      return;
    }
    lookup(hostname).then(
      (found) =>
        done(
          null,
          found
            .map((address) => ({ address, family: net.isIP(address) }))
            .filter((a) => !options.family || a.family === options.family),
        ),
      (err: NodeJS.ErrnoException) => done(err, []),
    );
  };
}

const TLS_CODES = /^(CERT_|UNABLE_TO_|DEPTH_ZERO|SELF_SIGNED|ERR_TLS|ERR_SSL|HOSTNAME_MISMATCH|ERR_TLS_CERT)/;

function classify(err: unknown, url: string, signal: ExchangeAbort, callerSignal?: AbortSignal): OutboundError {
  if (err instanceof OutboundError) return err;
  if (callerSignal?.aborted) return outboundError('cancelled', 'ECANCELLED', undefined, url);
  if (signal.aborted) return outboundError('timeout', 'ETIMEDOUT', undefined, url);
  const e = err as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
  const code = e.code ?? e.cause?.code ?? 'EUNKNOWN';
  return outboundError(kindOf(code), code, e.message || String(err), url);
}

function kindOf(code: string): OutboundFailureKind {
  if (code === 'ETARGETBLOCKED') return 'blocked';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'ENODATA') return 'dns';
  if (
    code === 'UND_ERR_CONNECT_TIMEOUT' ||
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT' ||
    code === 'ETIMEDOUT'
  )
    return 'timeout';
  if (TLS_CODES.test(code)) return 'tls';
  if (
    code === 'ECONNREFUSED' ||
    code === 'ECONNRESET' ||
    code === 'EHOSTUNREACH' ||
    code === 'ENETUNREACH' ||
    code === 'EPIPE' ||
    code === 'UND_ERR_SOCKET'
  )
    return 'connect';
  return 'protocol';
}

const CONNECT_WORDING: Record<string, string> = {
  ECONNREFUSED: 'the connection was refused',
  ECONNRESET: 'the connection was reset',
  EHOSTUNREACH: 'the host is unreachable',
  ENETUNREACH: 'the network is unreachable',
  EPIPE: 'the connection broke',
  UND_ERR_SOCKET: 'the connection closed unexpectedly',
};

/**
 * The one wording of each network failure, used by every route that reports one: what happened,
 * then the low-level code once, in parentheses. `detail` is the system's own text, kept where it
 * says more than the code (TLS and protocol errors).
 */
export function outboundError(
  kind: OutboundFailureKind,
  code: string,
  detail: string | undefined,
  url: string,
): OutboundError {
  const what = (() => {
    switch (kind) {
      case 'blocked':
        return detail ?? 'the target is a private or reserved address';
      case 'dns':
        return 'the host name does not resolve';
      case 'timeout':
        return 'no answer in time';
      case 'cancelled':
        return 'the request was cancelled';
      case 'connect':
        return CONNECT_WORDING[code] ?? 'the connection failed';
      case 'tls':
        return `TLS error: ${detail ?? 'handshake failed'}`;
      case 'too_large':
        return 'the answer is too large';
      case 'protocol':
        return `invalid HTTP answer${detail ? `: ${detail}` : ''}`;
    }
  })();
  return new OutboundError(kind, code, `${what} (${code})`, url);
}
