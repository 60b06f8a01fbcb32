/**
 * A generated site for the site-audit benchmark: `pages` pages in a tree (each links to ten
 * children, its parent and the home page, and shows an image), every 50th page linking a missing
 * page and a missing image. The broken set is computed from the definition.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface AuditSite {
  base: string;
  pages: number;
  /** Missing URLs some page links: pages and images. */
  broken: Set<string>;
  requests: number;
  /** Requests by path (query dropped): how often each page was fetched. */
  requestsByPath: ReadonlyMap<string, number>;
  close(): Promise<void>;
}

const FANOUT = 10;
const BROKEN_EVERY = 50;

const pathOf = (i: number) => (i === 0 ? '/' : `/p/${i}`);

/** Pages with a missing page and a missing image linked: every 50th. */
const hasBroken = (i: number) => i % BROKEN_EVERY === 7;

/** A page's depth in the tree (its fewest clicks from the home page). */
export function depthOf(i: number): number {
  let depth = 0;
  for (let at = i; at > 0; at = Math.floor((at - 1) / FANOUT)) depth++;
  return depth;
}

/** A page of the site an audit reads: its path, its click depth, and whether it answers 404. */
export interface AuditSitePage {
  path: string;
  depth: number;
  missing: boolean;
}

/** Every page an audit of the site reads from its home page: the tree's and the missing pages linked. */
export function auditSitePages(pages: number): AuditSitePage[] {
  const all: AuditSitePage[] = [];
  for (let i = 0; i < pages; i++) {
    all.push({ path: pathOf(i), depth: depthOf(i), missing: false });
    if (hasBroken(i)) all.push({ path: `/gone/${i}`, depth: depthOf(i) + 1, missing: true });
  }
  return all;
}

function html(i: number, pages: number): string {
  const links = [pathOf(0), pathOf(Math.max(0, Math.floor((i - 1) / FANOUT)))];
  for (let c = i * FANOUT + 1; c <= i * FANOUT + FANOUT && c < pages; c++) links.push(pathOf(c));
  const broken = hasBroken(i) ? `<a href="/gone/${i}">gone</a><img src="/img/gone-${i}.png" alt="x">` : '';
  const items = links.map((l) => `<li><a href="${l}">Page ${l}</a></li>`).join('');
  return (
    `<!doctype html><html lang="en"><head><title>Benchmark page number ${i} of the site</title>` +
    `<meta name="description" content="Page ${i} of the generated site-audit benchmark site, with its links.">` +
    `<link rel="canonical" href="${pathOf(i)}"></head><body><h1>Page ${i}</h1>` +
    `<p>Text of page ${i}: ${'words of the page '.repeat(20)}</p><img src="/img/ok.png" alt="ok">` +
    `<ul>${items}</ul>${broken}</body></html>`
  );
}

/** `onPage` hears each GET of a page of the site, with the socket it came on (which client asked). */
export function startAuditSite(pages: number, onPage?: (socket: Socket) => void): Promise<AuditSite> {
  let requests = 0;
  const requestsByPath = new Map<string, number>();
  const server = http.createServer((req, res) => {
    requests++;
    const path = (req.url ?? '/').split('?')[0] as string;
    requestsByPath.set(path, (requestsByPath.get(path) ?? 0) + 1);
    const match = path === '/' ? 0 : /^\/p\/(\d+)$/.exec(path) ? Number(path.slice(3)) : undefined;
    if (onPage && req.method === 'GET' && match !== undefined && match < pages) onPage(req.socket);
    if (path === '/robots.txt') return void res.writeHead(200, { 'content-type': 'text/plain' }).end('');
    if (path === '/img/ok.png')
      return void res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.from('89504e470d0a1a0a', 'hex'));
    if (match === undefined || match >= pages)
      return void res.writeHead(404, { 'content-type': 'text/html' }).end('<html><body>not found</body></html>');
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html(match, pages));
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const broken = new Set<string>();
      for (let i = 0; i < pages; i++) {
        if (!hasBroken(i)) continue;
        broken.add(`${base}/gone/${i}`);
        broken.add(`${base}/img/gone-${i}.png`);
      }
      resolve({
        base,
        pages,
        broken,
        get requests() {
          return requests;
        },
        requestsByPath,
        close: () => new Promise<void>((r) => server.close(() => r())),
      });
    }),
  );
}
