/**
 * Fixture web server for tests and benchmarks: plain node:http on 127.0.0.1 (random port by
 * default), keep-alive on, deep listen backlog, and a close() that ends every socket at once.
 *
 * Built-in routes (a handler registered with route() for the same exact path wins, and one
 * registered for '*' answers every path no other handler was registered for):
 *   /status/<code>          answers <code> (100-599) with a small HTML body; no body for 1xx, 204, 304
 *   /ok                     200 HTML page "ok"
 *   /redirect/<n>           302 to /redirect/<n-1>; /redirect/0 answers 200 (/redirect/3 = 3 hops)
 *   /redirect-loop          302 to /redirect-loop-b, which 302s back to /redirect-loop
 *   /redirect-to?url=<abs>&status=<30x>
 *                           redirect (default 302) to any URL, private addresses and other schemes included
 *   /slow?ms=<n>            waits n ms (default 1000), then 200 HTML
 *   /hang                   never sends headers; the socket stays open until the client leaves or close()
 *   /never-ends             200 text/html headers, then a chunk every 50 ms until the client leaves or close()
 *   /large?mb=<n>           exactly n MiB (default 1, fractions allowed) of valid HTML streamed on the fly:
 *                           <html><body>, then <p><a href="/p/<i>">link <i></a></p> lines, then
 *                           </body></html>; honours back-pressure, never held in memory
 *   /links?n=<n>&external=<m>
 *                           HTML page with n distinct internal anchors (/page/<i>) and m external
 *                           ones (https://example<i>.test/); deterministic: internal i%4==3 has no
 *                           text, internal i%5==4 has rel="nofollow", external even i has
 *                           rel="noopener noreferrer", external i%3==2 has rel="nofollow sponsored"
 *   /text                   200 text/plain
 *   /json                   200 application/json
 *   /image.png              200 image/png (a 1x1 PNG)
 *   /gzip                   HTML page with 3 links (/gzip/a, /gzip/b, https://example.test/gz), content-encoding: gzip
 *   anything else           404 HTML
 *
 * Every request is appended to `requests` ({ method, path } with path = pathname + search)
 * before it is answered, so tests can assert that nothing arrived.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import zlib from 'node:zlib';

export type FixtureHandler = (req: http.IncomingMessage, res: http.ServerResponse, url: URL) => void | Promise<void>;

export interface FixtureSite {
  /** e.g. http://127.0.0.1:PORT */
  origin: string;
  port: number;
  /** Absolute URL of a path on this site. */
  url(path: string): string;
  /** Registers a handler for an exact pathname, or '*' for all others; it takes precedence over the built-in routes. */
  route(path: string, handler: FixtureHandler): void;
  /** Log of requests seen, oldest first. */
  requests: { method: string; path: string }[];
  /** TCP connections accepted, including ones that never sent a request (a WebSocket upgrade, a probe). */
  readonly connections: number;
  /** Ends every socket (hung and never-ending responses included) and stops listening. */
  close(): Promise<void>;
}

export interface FixtureSiteOptions {
  host?: string;
  port?: number;
}

const HTML = 'text/html; charset=utf-8';
const MB = 1024 * 1024;
/** A 1x1 transparent PNG. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
  'base64',
);

export async function startFixtureSite(opts: FixtureSiteOptions = {}): Promise<FixtureSite> {
  const host = opts.host ?? '127.0.0.1';
  const routes = new Map<string, FixtureHandler>();
  const requests: { method: string; path: string }[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  const timers = new Set<NodeJS.Timeout>();
  let closing: Promise<void> | undefined;

  /** setTimeout/setInterval whose handle close() clears. */
  const track = (timer: NodeJS.Timeout): NodeJS.Timeout => {
    timers.add(timer);
    return timer;
  };
  const untrack = (timer: NodeJS.Timeout): void => {
    clearTimeout(timer);
    timers.delete(timer);
  };

  const server = http.createServer({ keepAliveTimeout: 5_000 }, (req, res) => {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://fixture.invalid');
    } catch {
      url = new URL('http://fixture.invalid/');
    }
    requests.push({ method: req.method ?? 'GET', path: url.pathname + url.search });
    const custom = routes.get(url.pathname) ?? routes.get('*');
    const handle = async () => (custom ? custom(req, res, url) : builtIn(req, res, url, track, untrack));
    handle().catch((err: unknown) => {
      if (!res.headersSent) {
        html(res, 500, `<h1>500</h1><pre>${escapeHtml(String(err))}</pre>`);
      } else {
        res.destroy();
      }
    });
  });
  server.keepAliveTimeout = 5_000;
  server.on('connection', (socket: Socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port: opts.port ?? 0, backlog: 4096 }, () => {
      server.off('error', reject);
      resolve();
    });
  });

  const port = (server.address() as AddressInfo).port;
  const origin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;

  return {
    origin,
    port,
    requests,
    get connections() {
      return connections;
    },
    url: (path: string) => `${origin}${path.startsWith('/') ? path : `/${path}`}`,
    route: (path: string, handler: FixtureHandler) => {
      routes.set(path, handler);
    },
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        timers.clear();
        server.close(() => resolve());
        server.closeAllConnections();
        for (const socket of sockets) socket.destroy();
      });
      return closing;
    },
  };
}

/** Starts n independent sites on different ports (e.g. one "internal" and several "external" hosts). */
export async function startFixtureSites(n: number, opts: FixtureSiteOptions = {}): Promise<FixtureSite[]> {
  const settled = await Promise.allSettled(Array.from({ length: n }, () => startFixtureSite({ host: opts.host })));
  const sites = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failure = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failure) {
    await Promise.all(sites.map((s) => s.close()));
    throw failure.reason;
  }
  return sites;
}

async function builtIn(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  url: URL,
  track: (t: NodeJS.Timeout) => NodeJS.Timeout,
  untrack: (t: NodeJS.Timeout) => void,
): Promise<void> {
  const path = url.pathname;
  const q = url.searchParams;
  const head = req.method === 'HEAD';

  const status = /^\/status\/(\d{3})$/.exec(path);
  if (status) {
    const code = Number(status[1]);
    if (code < 100 || code > 599) return notFound(res);
    if (code < 200 || code === 204 || code === 304) {
      res.writeHead(code);
      res.end();
      return;
    }
    html(res, code, `<h1>${code} ${http.STATUS_CODES[code] ?? ''}</h1>`);
    return;
  }
  if (path === '/ok') return html(res, 200, 'ok', 'ok');
  const chain = /^\/redirect\/(\d{1,6})$/.exec(path);
  if (chain) {
    const n = Number(chain[1]);
    if (n === 0) return html(res, 200, '<h1>redirect chain done</h1>');
    return redirect(res, 302, `/redirect/${n - 1}`);
  }
  if (path === '/redirect-loop') return redirect(res, 302, '/redirect-loop-b');
  if (path === '/redirect-loop-b') return redirect(res, 302, '/redirect-loop');
  if (path === '/redirect-to') {
    const target = q.get('url');
    const status = Number(q.get('status') ?? 302);
    if (!target || !Number.isInteger(status) || status < 300 || status > 399) {
      return html(res, 400, '<h1>400</h1><p>need ?url=&lt;absolute url&gt; and an optional 3xx status</p>');
    }
    return redirect(res, status, target);
  }
  if (path === '/slow') {
    const ms = intParam(q, 'ms', 1000);
    await new Promise<void>((resolve) => {
      const timer = track(
        setTimeout(() => {
          untrack(timer);
          resolve();
        }, ms),
      );
      res.once('close', () => {
        untrack(timer);
        resolve();
      });
    });
    if (!res.destroyed) html(res, 200, `<h1>slow</h1><p>waited ${ms} ms</p>`);
    return;
  }
  if (path === '/hang') return; // never answers; close() or the client ends the socket
  if (path === '/never-ends') {
    res.writeHead(200, { 'content-type': HTML });
    res.flushHeaders();
    if (head) return void res.end();
    res.write('<html><body>\n');
    let i = 0;
    const timer = track(
      setInterval(() => {
        if (res.destroyed) return untrack(timer);
        res.write(`<p>chunk ${i++}</p>\n`);
      }, 50),
    );
    res.once('close', () => untrack(timer));
    return;
  }
  if (path === '/large') return large(req, res, Number(q.get('mb') ?? 1));
  if (path === '/links') {
    const n = intParam(q, 'n', 10);
    const external = intParam(q, 'external', 0);
    return html(res, 200, linksBody(n, external), `links: ${n} internal, ${external} external`);
  }
  if (path === '/text') return send(res, 200, 'text/plain; charset=utf-8', 'plain text fixture\n');
  if (path === '/json') return send(res, 200, 'application/json', JSON.stringify({ ok: true, items: [1, 2, 3] }));
  if (path === '/image.png') return send(res, 200, 'image/png', PNG);
  if (path === '/gzip') {
    const body = zlib.gzipSync(
      page(
        'gzip',
        '<p><a href="/gzip/a">A</a></p>\n<p><a href="/gzip/b">B</a></p>\n' +
          '<p><a href="https://example.test/gz">external</a></p>',
      ),
    );
    res.writeHead(200, { 'content-type': HTML, 'content-encoding': 'gzip', 'content-length': body.length });
    res.end(body);
    return;
  }
  return notFound(res);
}

/**
 * Streams exactly floor(mb * 2^20) bytes of HTML (at least the opening and closing tags) in
 * ~64 KB writes, waiting for 'drain' whenever the socket is full, and stopping when it closes.
 */
async function large(req: http.IncomingMessage, res: http.ServerResponse, mb: number): Promise<void> {
  const total = Number.isFinite(mb) && mb > 0 ? Math.floor(mb * MB) : MB;
  res.writeHead(200, { 'content-type': HTML });
  if (req.method === 'HEAD') return void res.end();
  const closed = new Promise<void>((resolve) => res.once('close', resolve));
  const opening = '<html><body>\n';
  const closing = '</body></html>\n';
  const write = async (chunk: string): Promise<boolean> => {
    if (res.write(chunk)) return !res.destroyed;
    await Promise.race([new Promise((resolve) => res.once('drain', resolve)), closed]);
    return !res.destroyed && !res.writableEnded;
  };
  if (!(await write(opening))) return;
  // Lines are ASCII, so string length equals byte length.
  const budget = total - opening.length - closing.length;
  let sent = 0;
  let i = 0;
  while (sent < budget) {
    let chunk = '';
    for (;;) {
      const line = `<p><a href="/p/${i}">link ${i}</a></p>\n`;
      if (chunk.length + line.length > 64 * 1024 || sent + chunk.length + line.length > budget) break;
      chunk += line;
      i++;
    }
    // Fill the last few bytes that cannot hold a whole line with newlines.
    if (!chunk) chunk = '\n'.repeat(Math.min(budget - sent, 64 * 1024));
    sent += chunk.length;
    if (!(await write(chunk))) return;
  }
  res.end(closing);
}

function linksBody(n: number, external: number): string {
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    const rel = i % 5 === 4 ? ' rel="nofollow"' : '';
    const text = i % 4 === 3 ? '' : `Page ${i}`;
    lines.push(`<li><a href="/page/${i}"${rel}>${text}</a></li>`);
  }
  for (let i = 0; i < external; i++) {
    const rel = i % 2 === 0 ? ' rel="noopener noreferrer"' : i % 3 === 2 ? ' rel="nofollow sponsored"' : '';
    lines.push(`<li><a href="https://example${i}.test/"${rel}>Example ${i}</a></li>`);
  }
  return `<ul>\n${lines.join('\n')}\n</ul>`;
}

function page(title: string, body: string): string {
  return (
    `<!doctype html>\n<html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>\n` +
    `<body>\n${body}\n</body></html>\n`
  );
}

function html(res: http.ServerResponse, status: number, body: string, title = String(status)): void {
  send(res, status, HTML, page(title, body));
}

function send(res: http.ServerResponse, status: number, type: string, body: string | Buffer): void {
  const buf = typeof body === 'string' ? Buffer.from(body) : body;
  res.writeHead(status, { 'content-type': type, 'content-length': buf.length });
  res.end(buf);
}

function redirect(res: http.ServerResponse, status: number, location: string): void {
  res.writeHead(status, { location, 'content-type': HTML, 'content-length': 0 });
  res.end();
}

function notFound(res: http.ServerResponse): void {
  html(res, 404, '<h1>404 not found</h1>');
}

function intParam(q: URLSearchParams, name: string, fallback: number): number {
  const v = Number(q.get(name) ?? fallback);
  return Number.isFinite(v) && v >= 0 ? Math.floor(v) : fallback;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
