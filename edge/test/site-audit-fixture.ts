/**
 * A generated site for site-audit tests: a definition (pages, what each plants), a server that
 * answers it on 127.0.0.1, and the issues an audit must find, computed from the definition by the
 * rules of docs/decisions/0442 (not from the HTML served, and not written by hand).
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';

export interface FixturePage {
  path: string;
  /** Default 200. */
  status?: number;
  /** Answered 301 to this path. */
  redirect?: string;
  /** null: no <title>. Default: a fair one of its own. */
  title?: string | null;
  description?: string | null;
  /** H1 elements; default 1. */
  h1?: number;
  /** null: no lang. Default en. */
  lang?: string | null;
  /** A path; null: no canonical link. Default: the page itself. */
  canonical?: string | null;
  noindex?: boolean;
  hreflang?: { lang: string; path: string }[];
  /** The text of a JSON-LD block. */
  jsonLd?: string;
  images?: { src: string; alt?: string }[];
  /** Visible text; default its own. */
  body?: string;
  /** Paths (or absolute URLs) linked with <a>, a path with a #fragment, or an in-page #fragment. */
  links?: string[];
  /** Ids of the page's elements (what a #fragment names). */
  ids?: string[];
  delayMs?: number;
  /** Characters of an HTML comment padding the page. */
  padChars?: number;
}

export interface FixtureSite {
  pages: FixturePage[];
  /** Paths the sitemap lists; none: no sitemap. */
  sitemap?: string[];
  /** robots.txt Disallow prefixes. */
  disallow: string[];
}

/** A URL no server answers, on another host of the loopback network. */
export const DEAD_EXTERNAL = 'http://127.0.0.2:1/gone';

/** The generated site: `fillers` plain pages, and one or two pages planting each issue type. */
export function generateSite(fillers: number): FixtureSite {
  const filler = Array.from({ length: fillers }, (_, i) => ({ path: `/page-${i + 1}` }));
  const planted: FixturePage[] = [
    { path: '/missing', status: 404 },
    { path: '/error', status: 500 },
    { path: '/chain-1', redirect: '/chain-2' },
    { path: '/chain-2', redirect: '/chain-end' },
    { path: '/chain-end' },
    { path: '/loop-1', redirect: '/loop-2' },
    { path: '/loop-2', redirect: '/loop-1' },
    { path: '/noindex', noindex: true },
    { path: '/private/secret' },
    { path: '/no-canonical', canonical: null },
    { path: '/canon-other', canonical: '/page-1' },
    { path: '/canon-bad', canonical: '/canon-missing' },
    { path: '/canon-missing', status: 404 },
    { path: '/canon-a', canonical: '/canon-b' },
    { path: '/canon-b', canonical: '/page-2' },
    { path: '/cdup-1', body: 'Identical body text on two pages.' },
    { path: '/cdup-2', body: 'Identical body text on two pages.' },
    { path: '/no-title', title: null },
    { path: '/long-title', title: 'A title that goes on and on well past the sixty characters it should keep to' },
    { path: '/short-title', title: 'Short' },
    { path: '/tdup-1', title: 'The same title on two pages' },
    { path: '/tdup-2', title: 'The same title on two pages' },
    { path: '/no-description', description: null },
    { path: '/long-description', description: 'A description far too long. '.repeat(8) },
    { path: '/short-description', description: 'Too short.' },
    { path: '/ddup-1', description: 'The same description on two pages, long enough to pass on its own.' },
    { path: '/ddup-2', description: 'The same description on two pages, long enough to pass on its own.' },
    { path: '/no-h1', h1: 0 },
    { path: '/many-h1', h1: 3 },
    { path: '/no-lang', lang: null },
    { path: '/hl-bad', hreflang: [{ lang: 'en-UK', path: '/hl-bad' }] },
    {
      path: '/hl-en',
      hreflang: [
        { lang: 'en', path: '/hl-en' },
        { lang: 'de', path: '/hl-de' },
      ],
    },
    { path: '/hl-de', hreflang: [{ lang: 'de', path: '/hl-de' }] },
    { path: '/bad-json-ld', jsonLd: '{"@context": "https://schema.org", "@type": }' },
    { path: '/good-json-ld', jsonLd: '{"@context": "https://schema.org", "@type": "WebPage"}' },
    { path: '/no-alt', images: [{ src: '/img/ok.png' }, { src: '/img/ok.png', alt: '' }] },
    { path: '/broken-img', images: [{ src: '/img/missing.png', alt: 'gone' }] },
    { path: '/external-link', links: [DEAD_EXTERNAL] },
    { path: '/slow', delayMs: 1_500 },
    { path: '/heavy', padChars: 2_200_000 },
    { path: '/deep-1', links: ['/deep-2'] },
    { path: '/deep-2', links: ['/deep-3'] },
    { path: '/deep-3', links: ['/deep-4'] },
    { path: '/deep-4', links: ['/deep-5'] },
    { path: '/deep-5' },
    { path: '/orphan' },
    { path: '/gone-in-sitemap', status: 404 },
  ];
  const notLinked = new Set([
    '/chain-2',
    '/chain-end',
    '/loop-2',
    '/canon-missing',
    '/deep-2',
    '/deep-3',
    '/deep-4',
    '/deep-5',
    '/orphan',
    '/gone-in-sitemap',
  ]);
  const entry: FixturePage = {
    path: '/',
    links: [...filler, ...planted].map((p) => p.path).filter((p) => !notLinked.has(p)),
  };
  return {
    pages: [entry, ...filler, ...planted],
    sitemap: ['/', ...filler.map((p) => p.path), '/noindex', '/orphan', '/gone-in-sitemap'],
    disallow: ['/private/'],
  };
}

const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');

/** What a page has where its definition is silent. */
export function defaults(page: FixturePage) {
  return {
    title: page.title === undefined ? `Fixture page ${page.path}` : page.title,
    description:
      page.description === undefined
        ? `This is the fixture page at ${page.path}, with a description of a fair length.`
        : page.description,
    canonical: page.canonical === undefined ? page.path : page.canonical,
    lang: page.lang === undefined ? 'en' : page.lang,
    h1: page.h1 ?? 1,
    body: page.body ?? `The text of ${page.path}, which no other page has.`,
  };
}

function html(page: FixturePage, base: string): string {
  const d = defaults(page);
  const head = [
    d.title === null ? '' : `<title>${escapeHtml(d.title)}</title>`,
    d.description === null ? '' : `<meta name="description" content="${escapeHtml(d.description)}">`,
    d.canonical === null ? '' : `<link rel="canonical" href="${base}${d.canonical}">`,
    page.noindex ? '<meta name="robots" content="noindex, follow">' : '',
    ...(page.hreflang ?? []).map((h) => `<link rel="alternate" hreflang="${h.lang}" href="${base}${h.path}">`),
    page.jsonLd ? `<script type="application/ld+json">${page.jsonLd}</script>` : '',
  ].join('');
  const body = [
    ...Array.from({ length: d.h1 }, (_, i) => `<h1>Heading ${i + 1}</h1>`),
    `<p>${escapeHtml(d.body)}</p>`,
    ...(page.ids ?? []).map((id) => `<h2 id="${id}">${id}</h2>`),
    ...(page.images ?? []).map((img) => `<img src="${img.src}"${img.alt === undefined ? '' : ` alt="${img.alt}"`}>`),
    ...(page.links ?? []).map((href) => `<a href="${href}">${escapeHtml(href)}</a>`),
    page.padChars ? `<!-- ${'x'.repeat(page.padChars)} -->` : '',
  ].join('\n');
  const lang = d.lang === null ? '' : ` lang="${d.lang}"`;
  return `<!doctype html><html${lang}><head>${head}</head><body>${body}</body></html>`;
}

/**
 * Serves the site on 127.0.0.1 (over https with `tls`'s key and certificates); `/img/ok.png` is an
 * image, every path not defined a 404.
 */
export function serveSite(
  site: FixtureSite,
  tls?: https.ServerOptions,
): Promise<{ server: http.Server; base: string }> {
  const byPath = new Map(site.pages.map((p) => [p.path, p]));
  let base = '';
  const handler: http.RequestListener = (req, res) => {
    const path = (req.url ?? '/').split('?')[0] as string;
    if (path === '/robots.txt') {
      const lines = ['User-agent: *', ...site.disallow.map((d) => `Disallow: ${d}`)];
      if (site.sitemap) lines.push(`Sitemap: ${base}/sitemap.xml`);
      res.writeHead(200, { 'content-type': 'text/plain' }).end(`${lines.join('\n')}\n`);
      return;
    }
    if (path === '/sitemap.xml' && site.sitemap) {
      const urls = site.sitemap.map((p) => `<url><loc>${base}${p}</loc></url>`).join('');
      res
        .writeHead(200, { 'content-type': 'application/xml' })
        .end(`<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${urls}</urlset>`);
      return;
    }
    if (path === '/img/ok.png') {
      res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.from('89504e470d0a1a0a', 'hex'));
      return;
    }
    const page = byPath.get(path);
    if (!page) {
      res.writeHead(404, { 'content-type': 'text/html' }).end('<html><body>not found</body></html>');
      return;
    }
    if (page.redirect) {
      res.writeHead(301, { location: page.redirect }).end();
      return;
    }
    const answer = () =>
      res.writeHead(page.status ?? 200, { 'content-type': 'text/html; charset=utf-8' }).end(html(page, base));
    if (page.delayMs) setTimeout(answer, page.delayMs);
    else answer();
  };
  const server = tls ? https.createServer(tls, handler) : http.createServer(handler);
  // A TLS scan's probes that offer what the server refuses end in handshake errors: expected.
  server.on('tlsClientError', () => undefined);
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      base = `${tls ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}`;
      resolve({ server, base });
    }),
  );
}
