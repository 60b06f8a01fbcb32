/**
 * The offline demo behind `npm start -- --demo`: a tiny website on loopback that every route can be
 * tried against without internet, and an HTTPS server with a certificate from a demo CA for the
 * SSL scan. The stack is started with loopback allowed and the SSL scan pointed at that server.
 *
 *   /                  a home page with meta tags, an image, working, redirected and broken links
 *   /about, /contact   linked pages (the contact page links to a missing one: a broken link)
 *   /robots.txt, /sitemap.xml, /favicon.ico
 *   /bookmarks.xbel            a small XBEL file (xbel-to-html)
 *   /bookmarks-encrypted.xbel  the same file encrypted as Floccus does, passphrase "demo" (xbel-decrypt)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import path from 'node:path';
import { type FixtureSite, startFixtureSite } from './fixture-site.js';
import { issue, startTlsServer, type TlsServer } from './tls-fixtures.js';
import { bookmark, floccusEncrypt, folder, xbelOf } from './xbel-fixtures.js';

export const DEMO_PASSPHRASE = 'demo';

export interface DemoSite {
  /** The demo website, e.g. http://127.0.0.1:8090/ */
  url: string;
  /** Host name the SSL scan reaches the demo HTTPS server by, and its port. */
  tlsDomain: string;
  tlsPort: number;
  /** Environment for the stack: loopback allowed, the SSL scan pointed at the demo HTTPS server. */
  stackEnv: Record<string, string>;
  tlsScanEnv: Record<string, string>;
  close(): Promise<void>;
}

const page = (title: string, description: string, body: string, base: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<meta name="description" content="${description}">
<link rel="canonical" href="${base}">
<meta property="og:title" content="${title}"><meta property="og:description" content="${description}">
<meta property="og:type" content="website"><meta property="og:url" content="${base}">
<meta property="og:image" content="${new URL('/image.png', base)}">
<meta name="twitter:card" content="summary">
<link rel="icon" href="/favicon.ico">
<style>body{font:18px/1.5 system-ui,sans-serif;max-width:40em;margin:3em auto;padding:0 1em}
.hero{height:240px;border-radius:12px;background:linear-gradient(135deg,#3949ab,#00acc1)}</style>
</head><body>${body}</body></html>`;

function addPages(site: FixtureSite): void {
  const html = (markup: string) => (_req: unknown, res: ServerResponse) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(markup);
  };
  site.route(
    '/',
    html(
      page(
        'Demo Bakery – fresh bread every morning in the old town',
        'The Demo Bakery bakes sourdough, rye and pastries every morning; ' +
          'this page is the Web Utility API offline demo site.',
        `<h1>Demo Bakery</h1><div class="hero" role="img" aria-label="A warm gradient"></div>
<p><img src="/image.png" alt="Our shop" width="1" height="1"> Fresh bread every morning.</p>
<ul><li><a href="/about">About us</a></li><li><a href="/contact">Contact</a></li>
<li><a href="/redirect/2">Our old menu (moved twice)</a></li><li><a href="/status/500">Orders (down today)</a></li>
<li><a href="mailto:hello@demo.invalid">Write to us</a></li><li><a href="tel:+15550100">Call us</a></li></ul>`,
        site.url('/'),
      ),
    ),
  );
  site.route(
    '/about',
    html(
      page(
        'About the Demo Bakery and the people who bake',
        'Who bakes at the Demo Bakery, since when, and why we still use a wood-fired oven for every loaf.',
        '<h1>About us</h1><p>Since 1921.</p><a href="/">Home</a> <a href="/contact">Contact</a>',
        site.url('/about'),
      ),
    ),
  );
  site.route(
    '/contact',
    html(
      page(
        'Contact the Demo Bakery: opening hours and address',
        'Opening hours, address and how to reach the Demo Bakery; orders for cakes two days ahead, please.',
        '<h1>Contact</h1><p>Open 7–13.</p><a href="/">Home</a> <a href="/opening-hours">Opening hours</a>',
        site.url('/contact'),
      ),
    ),
  );
  site.route('/robots.txt', (_req, res) => {
    res
      .writeHead(200, { 'content-type': 'text/plain' })
      .end(`User-agent: *\nAllow: /\nSitemap: ${site.url('/sitemap.xml')}\n`);
  });
  site.route('/sitemap.xml', (_req, res) => {
    const urls = ['/', '/about', '/contact'].map((p) => `<url><loc>${site.url(p)}</loc></url>`).join('');
    res
      .writeHead(200, { 'content-type': 'application/xml' })
      .end(
        '<?xml version="1.0" encoding="UTF-8"?>' +
          `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${urls}</urlset>`,
      );
  });
  site.route('/favicon.ico', (_req, res) => {
    res.writeHead(301, { location: '/image.png' }).end();
  });
  const xbel = xbelOf(
    [
      folder('Bakeries', [bookmark(site.url('/'), 'Demo Bakery'), bookmark(site.url('/about'), 'About the bakery')]),
      bookmark('https://example.com/', 'Example'),
    ],
    'Demo bookmarks',
  );
  site.route('/bookmarks.xbel', (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(xbel);
  });
  const encrypted = floccusEncrypt(xbel, DEMO_PASSPHRASE);
  site.route('/bookmarks-encrypted.xbel', async (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(await encrypted);
  });
}

/**
 * Starts the demo website on `port` and the demo HTTPS server on `tlsPort` (0: any free port), and
 * writes the demo CA to `dataDir` (made when missing) so the SSL scan trusts it.
 */
export async function startDemoSite(options: { port: number; tlsPort: number; dataDir: string }): Promise<DemoSite> {
  const site = await startFixtureSite({ port: options.port });
  addPages(site);
  const ca = await issue({ commonName: 'Web Utility API demo CA', ca: true, validDays: [-1, 3650] });
  const leaf = await issue({ commonName: 'localhost', altNames: ['localhost'], validDays: [-1, 365] }, ca);
  const tls: TlsServer = await startTlsServer({
    key: leaf.keyPem,
    chain: [leaf.pem, ca.pem],
    hsts: 'max-age=31536000; includeSubDomains',
    port: options.tlsPort,
  });
  // On a fresh clone the demo starts before the stack has made DATA_DIR.
  mkdirSync(options.dataDir, { recursive: true });
  const caFile = path.join(options.dataDir, 'demo-ca.pem');
  writeFileSync(caFile, ca.pem);
  return {
    url: site.url('/'),
    tlsDomain: 'localhost',
    tlsPort: tls.port,
    stackEnv: {
      WEBUTIL_ALLOW_TARGETS: [process.env.WEBUTIL_ALLOW_TARGETS, '127.0.0.0/8', '::1/128'].filter(Boolean).join(','),
    },
    tlsScanEnv: { SSL_SCAN_PORT: String(tls.port), SSL_SCAN_EXTRA_CA_FILE: caFile },
    close: async () => {
      await Promise.all([site.close(), tls.close()]);
    },
  };
}
