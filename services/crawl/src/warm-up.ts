import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { AddressPolicy, type Logger, SafeHttp } from '@webutil/kit';
import { throttleFor } from './checking/throttle.js';
import type { CrawlConfig } from './config.js';
import { packResult, unpackResult } from './jobs/store.js';
import type { CrawlKind } from './model.js';
import { crawlSite } from './site-crawl/crawler.js';

/**
 * A fresh process pays for its first crawl's first requests: undici compiles its HTTP parser
 * (WebAssembly), modules finish loading, V8 compiles the code each request runs. So before the
 * service takes jobs it crawls a small site it serves itself on loopback (two origins, so
 * connections to several hosts are made), once per crawl kind, through its own outbound client
 * and throttle (the service's own allow no loopback), and packs and unpacks the result. A bigger
 * warm-up saves little more and costs memory (docs/decisions/0031-crawl-warm-up.md). It
 * never fails the start: a warm-up that goes wrong is logged and skipped. Returns the number of
 * links each warm-up crawl reported (none when it failed).
 */
export async function warmUp(settings: Pick<CrawlConfig, 'fetch' | 'crawl'>, log: Logger): Promise<number[]> {
  const started = performance.now();
  const servers = Array.from({ length: ORIGINS }, () => http.createServer((req, res) => serve(req, res, origins)));
  const origins: string[] = [];
  for (const server of servers) {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origins.push(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  }
  const f = settings.fetch;
  const httpClient = new SafeHttp({
    policy: new AddressPolicy(['127.0.0.1/32']),
    connectionsPerOrigin: f.hostConcurrencyMax,
  });
  const throttle = throttleFor(f, f.hostConcurrencyMax);
  const deps = { ...f, http: httpClient, throttle, limits: { ...settings.crawl, timeBudgetMs: WARM_UP_BUDGET_MS } };
  try {
    const links: number[] = [];
    for (const kind of KINDS) {
      const signal = new AbortController().signal;
      const result = await crawlSite(kind, new URL(`${origins[0]}/`), deps, () => undefined, signal);
      const read = unpackResult(packResult(result)).result;
      links.push('links' in read ? read.links.length : 0);
    }
    log.info({ ms: Math.round(performance.now() - started), links }, 'crawl code warmed up');
    return links;
  } catch (err) {
    log.warn({ err }, 'the warm-up crawl failed; the first crawl will run in cold code');
    return [];
  } finally {
    await httpClient.close();
    for (const server of servers) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  }
}

/** A warm-up crawl that takes longer than this (a starved machine) stops there: it has done its job. */
const WARM_UP_BUDGET_MS = 10_000;
const KINDS: CrawlKind[] = ['broken-links', 'link-extract'];
const ORIGINS = 2;
const PAGES = 30;
const FILES_PER_PAGE = 6;
const HTML = 'text/html; charset=utf-8';

/**
 * The warm-up site, on the first origin: a home page, PAGES pages in a chain (each linking home,
 * its neighbours, a fragment, a mail address and FILES_PER_PAGE files spread over every origin,
 * one in five missing), robots.txt and a sitemap, a redirect and a missing page: what a crawl
 * meets on a real site, in small.
 */
function serve(req: http.IncomingMessage, res: http.ServerResponse, origins: string[]): void {
  const path = new URL(req.url ?? '/', 'http://warm-up.invalid').pathname;
  const page = /^\/p\/(\d+)$/.exec(path);
  const file = /^\/f\/(\d+)\.pdf$/.exec(path);
  if (path === '/') send(res, 200, HTML, document(homeLinks()));
  else if (page && Number(page[1]) < PAGES) send(res, 200, HTML, document(pageLinks(Number(page[1]), origins)));
  else if (file && Number(file[1]) % 5 !== 0) send(res, 200, 'application/pdf', '%PDF-1.4\n');
  else if (path === '/robots.txt') send(res, 200, 'text/plain', 'User-agent: *\nSitemap: /sitemap.xml\n');
  else if (path === '/sitemap.xml') send(res, 200, 'application/xml', sitemap(origins[0] as string));
  else if (path === '/moved') {
    res.writeHead(301, { location: '/p/0', 'content-length': 0 });
    res.end();
  } else send(res, 404, HTML, document('<p>Not found</p>'));
}

function homeLinks(): string {
  const pages = Array.from({ length: PAGES / 10 }, (_, s) => `<a href="/p/${s * 10}">Part ${s}</a>`);
  return `${pages.join('\n')}\n<a href="/moved">Moved</a> <a href="/missing">Missing</a> <a href="#top">Top</a>`;
}

function pageLinks(i: number, origins: string[]): string {
  const files = Array.from({ length: FILES_PER_PAGE }, (_, k) => {
    const n = i * FILES_PER_PAGE + k;
    return `<a href="${origins[n % origins.length]}/f/${n}.pdf" rel="nofollow">File ${k}</a>`;
  });
  return [
    `<h2 id="part-${i}">Page ${i}</h2>`,
    '<a href="/">Home</a>',
    `<a href="/p/${i + 1}#part-${i + 1}">Next</a>`,
    i > 0 ? `<a href="/p/${i - 1}">Previous</a>` : '',
    '<a href="mailto:warm-up@webutil.invalid">Mail</a>',
    ...files,
  ].join('\n');
}

function sitemap(origin: string): string {
  const urls = Array.from({ length: PAGES / 2 }, (_, i) => `<url><loc>${origin}/p/${i * 2}</loc></url>`);
  return `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${urls.join('')}</urlset>`;
}

function document(body: string): string {
  return `<!doctype html><html><head><title>Warm-up</title></head><body id="top">\n${body}\n</body></html>`;
}

function send(res: http.ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
