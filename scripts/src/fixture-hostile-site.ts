/**
 * A hostile site for the hardening tests and the "hostile site" benchmark: every page is one of
 * the inputs that once cost the crawl service quadratic time or unbounded memory.
 *
 *   /                  entry page: links to every page below, and to /ids/0#last
 *   /robots.txt        names /bomb.xml.gz as the sitemap
 *   /bomb.xml.gz       a gzipped sitemap bomb: <urlset> and 7,000,000 unclosed tags (21 MB) in ~20 kB
 *   /nested            1 MB of nested unclosed <b> between a link before it and a link after it
 *   /regex-links       a page of 20 links to /regex/<i>, each answering the regex-hostile body
 *   /ids/<i>           pages of 2 MB of elements with distinct ids (huge id lists), the last one
 *                      `last`, far down the list
 *   /wide/<i>          pages of 5,000 distinct internal links each (/w/<i>/<k>): `widePages` of
 *                      them queue `widePages` x 5,000 URLs at the next depth (130,000+ with 26)
 *   /long-base         a `<base href>` of 16,000 characters, then 5,000 short relative links (each
 *                      resolving to a 16 kB URL: 80 MB of URLs, past gRPC's 64 MiB message limit)
 *                      and two absolute links (not in the entry page's links)
 *   anything else      200 HTML: the regex-hostile body, 64 KiB of `<s` (what soft-404 and
 *                      bot-wall recognition read), so the soft-404 probe gets it too
 */
import type http from 'node:http';
import zlib from 'node:zlib';
import { type FixtureSite, startFixtureSite } from './fixture-site.js';

export interface HostileSiteOptions {
  /** Pages of 5,000 links each (default 27: 135,000 URLs queued at depth 2). */
  widePages?: number;
  /** Pages of huge id lists (default 8). */
  idPages?: number;
}

export interface HostileSite {
  site: FixtureSite;
  entryUrl: string;
  /** The regex-hostile body every unknown path answers with. */
  hostileBody: string;
  /**
   * Resolves once a GET of a path matching `path` (exact, or a pattern) has been answered to its
   * end: from then on the client has the hostile body in hand (liveness tests start then).
   */
  served(path: string | RegExp): Promise<void>;
  close(): Promise<void>;
}

const HTML = 'text/html; charset=utf-8';
const LINKS_PER_WIDE_PAGE = 5_000;

export async function startHostileSite(options: HostileSiteOptions = {}): Promise<HostileSite> {
  const widePages = options.widePages ?? 27;
  const idPages = options.idPages ?? 8;
  const site = await startFixtureSite();
  const hostileBody = '<s'.repeat(32 * 1024);
  const bomb = zlib.gzipSync(`<?xml version="1.0"?><urlset>${'<a>'.repeat(7_000_000)}`, { level: 9 });
  const nested = `<html><body><a href="/before">before</a>${'<b>'.repeat(350_000)}<a href="/after">after</a>`;
  const idPage = (i: number) =>
    `<html><head><title>Identifiers ${i}</title></head><body><h1>Every identifier</h1>` +
    Array.from({ length: 100_000 }, (_, k) => `<i id="i${i}-${k}"></i>`).join('') +
    '<p id="last"></p></body></html>';
  const entry = [
    '<html><head><title>hostile</title></head><body>',
    '<a href="/nested">nested</a><a href="/regex-links">regex</a><a href="/ids/0#last">last id</a>',
    ...Array.from({ length: idPages }, (_, i) => `<a href="/ids/${i}">ids ${i}</a>`),
    ...Array.from({ length: widePages }, (_, i) => `<a href="/wide/${i}">wide ${i}</a>`),
    '</body></html>',
  ].join('\n');

  const answered: string[] = [];
  const waiters = new Set<{ matches: (path: string) => boolean; resolve: () => void }>();
  const track = (req: http.IncomingMessage, res: http.ServerResponse, path: string) => {
    if (req.method !== 'GET') return;
    res.once('finish', () => {
      answered.push(path);
      for (const waiter of waiters)
        if (waiter.matches(path)) {
          waiters.delete(waiter);
          waiter.resolve();
        }
    });
  };
  const served = (path: string | RegExp) => {
    const matches = (p: string) => (typeof path === 'string' ? p === path : path.test(p));
    if (answered.some(matches)) return Promise.resolve();
    return new Promise<void>((resolve) => waiters.add({ matches, resolve }));
  };
  const serve = (path: string, type: string, body: string | Buffer) =>
    site.route(path, (req, res) => {
      track(req, res, path);
      res.writeHead(200, { 'content-type': type }).end(body);
    });
  serve('/', HTML, entry);
  serve('/robots.txt', 'text/plain', `Sitemap: ${site.url('/bomb.xml.gz')}\n`);
  serve('/bomb.xml.gz', 'application/gzip', bomb);
  serve('/nested', HTML, nested);
  serve('/regex-links', HTML, Array.from({ length: 20 }, (_, i) => `<a href="/regex/${i}">r${i}</a>`).join('\n'));
  serve(
    '/long-base',
    HTML,
    `<html><head><base href="/${'b'.repeat(16_000)}/"></head><body>` +
      `<a href="${site.url('/short-1')}">one</a><a href="${site.url('/short-2')}">two</a>` +
      Array.from({ length: 5_000 }, (_, i) => `<a href="l${i}">${i}</a>`).join(''),
  );
  site.route('*', (req, res, url) => {
    track(req, res, url.pathname);
    const ids = /^\/ids\/(\d+)$/.exec(url.pathname);
    const wide = /^\/wide\/(\d+)$/.exec(url.pathname);
    res.writeHead(200, { 'content-type': HTML });
    if (ids) res.end(idPage(Number(ids[1])));
    else if (wide)
      res.end(Array.from({ length: LINKS_PER_WIDE_PAGE }, (_, k) => `<a href="/w/${wide[1]}/${k}">w</a>`).join(''));
    else res.end(hostileBody);
  });
  return { site, entryUrl: site.url('/'), hostileBody, served, close: () => site.close() };
}
