import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import net from 'node:net';
import { type AddressPolicy, type LookupHost, OutboundError, outboundError, resolveTarget } from '@webutil/kit';

export interface EgressProxyOptions {
  policy: AddressPolicy;
  /** How host names are resolved; the system resolver when undefined. */
  lookup: LookupHost | undefined;
  connectTimeoutMs: number;
}

/** Header on answers the proxy makes itself, so the renderer can tell them from the site's own. */
export const REFUSAL_HEADER = 'x-webutil-egress-refused';

/** Request headers that belong to the hop to the proxy, not to the site. */
const HOP_BY_HOP = new Set([
  'connection',
  'proxy-connection',
  'keep-alive',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'upgrade',
]);

/**
 * The only way out for one render's browser context: an HTTP proxy on 127.0.0.1 that resolves
 * each host once, holds the address to the policy, and dials exactly that address (absolute-form
 * requests for http:, CONNECT tunnels for https:, ws: and wss:). Request interception cannot do
 * this: it never sees the address Chromium connects to. One proxy per render means every failure
 * it records belongs to that render, and closing it cuts every connection the page opened.
 */
export class EgressProxy {
  /** Connections the proxy refused or could not make, by `host:port`, first failure kept. */
  private readonly failures = new Map<string, OutboundError>();
  private readonly sockets = new Set<Socket>();
  private closing: Promise<void> | undefined;
  /** Marks this proxy's own refusal pages; a site cannot guess it. */
  readonly token = randomBytes(12).toString('base64url');
  readonly url: string;

  private constructor(
    private readonly server: http.Server,
    private readonly options: EgressProxyOptions,
  ) {
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  static async open(options: EgressProxyOptions): Promise<EgressProxy> {
    const server = http.createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const proxy = new EgressProxy(server, options);
    server.on('connection', (socket: Socket) => proxy.track(socket));
    server.on('request', (req, res) => proxy.forward(req, res));
    server.on('connect', (req: http.IncomingMessage, socket: Socket, head: Buffer) => proxy.tunnel(req, socket, head));
    return proxy;
  }

  /** Why a connection to this URL's host and port was refused or failed, if it was. */
  failureFor(url: string): OutboundError | undefined {
    try {
      const u = new URL(url);
      return this.failures.get(authority(u.hostname, Number(u.port || defaultPort(u.protocol))));
    } catch {
      return undefined;
    }
  }

  /** Stops listening and ends every connection, in both directions. */
  close(): Promise<void> {
    this.closing ??= new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      for (const socket of this.sockets) socket.destroy();
    });
    return this.closing;
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
    // A reset from either side must not become an uncaught 'error'.
    socket.on('error', () => undefined);
  }

  /**
   * Resolves once, checks and connects to exactly the address checked (the first allowed one,
   * IPv4 first), so a name cannot resolve one way for the check and another for the connection.
   * Records and rethrows any failure, in the kit's wording.
   */
  private async dial(host: string, port: number): Promise<Socket> {
    try {
      const [address] = await resolveTarget(host, this.options.policy, this.options.lookup);
      return await this.connect(address, port, host);
    } catch (err) {
      const failure = err instanceof OutboundError ? err : outboundError('connect', 'ECONNREFUSED', undefined, host);
      this.record(host, port, failure);
      throw failure;
    }
  }

  /** The first failure per `host:port` is kept: it is the one a top-level refusal reports. */
  private record(host: string, port: number, failure: OutboundError): void {
    const key = authority(host, port);
    if (!this.failures.has(key)) this.failures.set(key, failure);
  }

  private connect(address: string, port: number, host: string): Promise<Socket> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: address, port });
      this.track(socket);
      const fail = (kind: 'timeout' | 'connect', code: string) => {
        socket.destroy();
        reject(outboundError(kind, code, undefined, host));
      };
      socket.setTimeout(this.options.connectTimeoutMs, () => fail('timeout', 'ETIMEDOUT'));
      socket.once('error', (err: NodeJS.ErrnoException) => fail('connect', err.code ?? 'ECONNREFUSED'));
      socket.once('connect', () => {
        socket.setTimeout(0);
        resolve(socket);
      });
    });
  }

  /** http: requests in absolute form, sent on to the checked address. */
  private forward(req: http.IncomingMessage, res: http.ServerResponse): void {
    let target: URL;
    try {
      target = new URL(req.url ?? '');
    } catch {
      this.answer(res, 400, 'not a proxy request');
      return;
    }
    if (target.protocol !== 'http:') {
      this.answer(res, 400, `${target.protocol} requests are not proxied`);
      return;
    }
    const port = Number(target.port || 80);
    const headers = forwardedHeaders(req.rawHeaders);
    this.dial(target.hostname, port)
      .then(
        (socket) => {
          const upstream = http.request({
            method: req.method,
            path: `${target.pathname}${target.search}`,
            headers,
            setHost: false,
            // The checked socket, for this request only (no pool: a pooled socket would skip the check).
            createConnection: () => socket,
          });
          upstream.on('response', (answer) => {
            answer.on('error', () => res.destroy());
            try {
              res.writeHead(answer.statusCode ?? 502, answer.statusMessage, forwardedHeaders(answer.rawHeaders));
            } catch {
              // A status line or header the parser took but writeHead refuses: the answer is lost, not the process.
              answer.destroy();
              res.destroy();
              return;
            }
            answer.pipe(res);
          });
          upstream.on('error', (err: NodeJS.ErrnoException) => {
            if (res.headersSent) return res.destroy();
            // The site took the connection and broke it off before answering.
            const failure = outboundError('connect', err.code ?? 'ECONNRESET', undefined, target.hostname);
            this.record(target.hostname, port, failure);
            this.answer(res, 502, failure.message);
          });
          req.pipe(upstream);
        },
        (failure: OutboundError) => this.answer(res, failure.kind === 'blocked' ? 403 : 502, failure.message),
      )
      // Whatever the page's request does to this exchange ends the exchange, not the process.
      .catch(() => res.destroy());
  }

  /** CONNECT tunnels (https:, ws:, wss:) to the checked address. */
  private tunnel(req: http.IncomingMessage, client: Socket, head: Buffer): void {
    const target = parseAuthority(req.url ?? '');
    if (!target) {
      client.end('HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    this.dial(target.host, target.port)
      .then(
        (upstream) => {
          if (client.destroyed) {
            upstream.destroy();
            return;
          }
          client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
          if (head.length > 0) upstream.write(head);
          upstream.pipe(client);
          client.pipe(upstream);
          upstream.once('close', () => client.destroy());
          client.once('close', () => upstream.destroy());
        },
        (failure: OutboundError) => {
          const status = failure.kind === 'blocked' ? '403 Forbidden' : '502 Bad Gateway';
          client.end(`HTTP/1.1 ${status}\r\nContent-Length: 0\r\n\r\n`);
        },
      )
      .catch(() => client.destroy());
  }

  /** The proxy's own answer: a short page marked with this proxy's token. */
  private answer(res: http.ServerResponse, status: number, message: string): void {
    const body = `render egress: ${message}\n`;
    res.writeHead(status, {
      'content-type': 'text/plain; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      [REFUSAL_HEADER]: this.token,
    });
    res.end(body);
  }
}

function authority(host: string, port: number): string {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  return net.isIPv6(bare) ? `[${bare}]:${port}` : `${bare.toLowerCase()}:${port}`;
}

function defaultPort(protocol: string): number {
  return protocol === 'https:' || protocol === 'wss:' ? 443 : 80;
}

/** `host:port` of a CONNECT request (IPv6 in brackets); undefined when malformed. */
export function parseAuthority(text: string): { host: string; port: number } | undefined {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]/\s]+):(\d{1,5})$/.exec(text);
  if (!match?.[1] || !match[2]) return undefined;
  const port = Number(match[2]);
  if (port < 1 || port > 65535) return undefined;
  return { host: match[1].replace(/^\[(.*)\]$/, '$1'), port };
}

/** Raw headers without the hop-by-hop ones (and those the Connection header names). */
function forwardedHeaders(raw: string[]): string[] {
  const named = new Set<string>();
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i]?.toLowerCase() === 'connection') {
      for (const token of (raw[i + 1] ?? '').split(',')) named.add(token.trim().toLowerCase());
    }
  }
  const kept: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] ?? '';
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower) || named.has(lower)) continue;
    kept.push(name, raw[i + 1] ?? '');
  }
  return kept;
}
