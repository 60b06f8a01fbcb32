/**
 * A generated multi-host site for crawl tests and the crawl benchmark, on 127.0.0.x only:
 *
 *   main      127.0.0.1  home, 10 section pages, `pages` doc pages (/docs/<i>.html, each linking to
 *                        its neighbours, its section and `externalPerPage` external URLs), pages
 *                        only a sitemap lists (/hidden/<j>.html), robots.txt -> sitemap index ->
 *                        a plain child and a gzipped child (.xml.gz served as bytes), a <base href>
 *                        page, relative links, mailto/tel/javascript links, in-page anchors (one
 *                        missing), fragment links to other pages (one missing), redirect chain and
 *                        loop, 404/410/500, a HEAD-hostile endpoint (405 on HEAD, 200 on GET), a
 *                        PDF and an extension-less binary, and optionally a 429 with Retry-After
 *                        and a calendar-style crawler trap (/calendar?month=YYYY-MM, endless);
 *                        /all.html, linked from nowhere, links every doc page and external URL;
 *                        with `css`, doc pages link /assets/site.css and name an image in a style.
 *   external  127.0.0.2  /ext/<n> (every 50th from 7 answers 404), /protected: a Cloudflare-style
 *                        bot challenge (403); with `externalHosts` > 1 the /ext/<n> URLs are spread
 *                        round robin over 127.0.0.2, .5, .6, ... (a site links to many hosts).
 *   soft      127.0.0.3  a shop whose unknown paths answer 200 with its "not found" page.
 *   silent    127.0.0.4  accepts connections and never answers (optional).
 *
 * Every generated answer waits `latencyMs` first. `expected` names the URLs tests assert on.
 */
import http from 'node:http';
import net from 'node:net';
import zlib from 'node:zlib';
import { type FixtureHandler, type FixtureSite, startFixtureSite } from './fixture-site.js';

export interface CrawlSiteOptions {
  /** Doc pages linked from the sections (default 300). */
  pages?: number;
  /** Distinct external URLs on each doc page (default 6). */
  externalPerPage?: number;
  /** Hosts the external URLs are spread over (default 1). */
  externalHosts?: number;
  /** Added to every generated answer (default 0). */
  latencyMs?: number;
  /** The endless calendar (default true; the benchmark leaves it out: linkinator would never end). */
  trap?: boolean;
  /** Links to a host that never answers (default true). */
  silentHost?: boolean;
  /** A link answering 429 with Retry-After: 1 to every other request (default true). */
  rateLimited?: boolean;
  /**
   * CSS (default false): doc pages link /assets/site.css (which @imports theme.css; CSS_IMAGES
   * url()s, one missing) and carry a style attribute naming their section's image.
   */
  css?: boolean;
}

/** The images the CSS of a `css` site names; the last one is missing (404). */
const CSS_IMAGES = 8;

/**
 * The site the crawl benchmarks use: 260 doc pages and 17 others, ~2,100 unique links over 6
 * hosts, every answer delayed 15 ms, no trap, silent host or rate limit (linkinator would never end).
 */
export const BENCH_SITE: CrawlSiteOptions = {
  pages: 260,
  externalPerPage: 7,
  externalHosts: 4,
  latencyMs: 15,
  trap: false,
  silentHost: false,
  rateLimited: false,
  css: true,
};

export interface CrawlSite {
  entryUrl: string;
  main: FixtureSite;
  /** The first external host (the bot wall is there). */
  external: FixtureSite;
  externals: FixtureSite[];
  /** URLs with a known verdict, and other facts tests check. */
  expected: ReturnType<typeof expectations>;
  close(): Promise<void>;
}

const SECTIONS = 10;
const HIDDEN_PAGES = 5;
const SITEMAP_DOCS = 50;
const HTML = 'text/html; charset=utf-8';

export async function startCrawlSite(options: CrawlSiteOptions = {}): Promise<CrawlSite> {
  const o = {
    pages: 300,
    externalPerPage: 6,
    externalHosts: 1,
    latencyMs: 0,
    trap: true,
    silentHost: true,
    rateLimited: true,
    css: false,
    ...options,
  };
  const externalAddresses = ['127.0.0.2', ...range(o.externalHosts - 1).map((k) => `127.0.0.${k + 5}`)];
  const [main, ...externals] = await Promise.all([
    startFixtureSite({ host: '127.0.0.1' }),
    ...externalAddresses.map((host) => startFixtureSite({ host })),
  ]);
  const external = externals[0] as FixtureSite;
  const soft = await startSoftNotFoundHost();
  const silent = o.silentHost ? await startSilentHost() : undefined;
  const externalUrl = (n: number) => `${(externals[n % externals.length] as FixtureSite).origin}/ext/${n}`;
  const expected = expectations(main.origin, externalUrl, external.origin, soft.origin, silent?.origin, o);
  const delay =
    (handler: FixtureHandler): FixtureHandler =>
    async (req, res, url) => {
      if (o.latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, o.latencyMs));
      await handler(req, res, url);
    };
  const page = (title: string, body: string, head = ''): FixtureHandler =>
    delay((_req, res) => send(res, 200, HTML, document(title, body, head)));

  main.route('/', page('Fixture home', homeBody(expected, o)));
  main.route(
    '/robots.txt',
    delay((_req, res) =>
      send(
        res,
        200,
        'text/plain',
        // The longer Allow wins over the shorter Disallow for the one open page (RFC 9309).
        'User-agent: *\nDisallow: /private/\nAllow: /private/open.html\n\n' +
          `Sitemap: ${main.origin}/sitemap_index.xml\n`,
      ),
    ),
  );
  main.route(
    '/sitemap_index.xml',
    delay((_req, res) =>
      send(
        res,
        200,
        'application/xml',
        sitemapIndex([`${main.origin}/sitemap-hidden.xml.gz`, `${main.origin}/sitemap-docs.xml`]),
      ),
    ),
  );
  main.route(
    '/sitemap-hidden.xml.gz',
    delay((_req, res) => send(res, 200, 'application/gzip', zlib.gzipSync(urlset(expected.hiddenPages)))),
  );
  main.route(
    '/sitemap-docs.xml',
    delay((_req, res) =>
      send(
        res,
        200,
        'application/xml',
        urlset(range(Math.min(SITEMAP_DOCS, o.pages)).map((i) => `${main.origin}/docs/${i}.html`)),
      ),
    ),
  );
  for (let s = 0; s < SECTIONS; s++) main.route(`/section/${s}/`, page(`Section ${s}`, sectionBody(s, o.pages)));
  const docHead = o.css ? '<link rel="stylesheet" href="/assets/site.css">' : '';
  for (let i = 0; i < o.pages; i++)
    main.route(`/docs/${i}.html`, page(`Doc ${i}`, docBody(i, o, externalUrl), docHead));
  if (o.css) addCss(main, delay);
  for (const [j, url] of expected.hiddenPages.entries())
    main.route(
      new URL(url).pathname,
      page(
        `Hidden ${j}`,
        `<p>Only the sitemap lists this page.</p><a href="/">Home</a> <a href="/docs/${j}.html">Doc ${j}</a>`,
      ),
    );
  main.route(
    '/all.html',
    page(
      'Everything',
      [...range(o.pages).map((i) => `/docs/${i}.html`), ...range(o.pages * o.externalPerPage).map(externalUrl)]
        .map((u) => `<a href="${u}">${u}</a>`)
        .join('\n'),
    ),
  );
  main.route(
    '/base/',
    page(
      'Base href',
      '<p><a href="4.html">Doc 4 through base</a> <a href="../section/0/">Section 0</a></p>',
      '<base href="/docs/">',
    ),
  );
  main.route('/private/secret.html', page('Secret', '<p>Not for crawlers.</p><a href="/docs/3.html">Doc 3</a>'));
  main.route('/private/open.html', page('Open', '<p>Crawlers welcome.</p><a href="/">Home</a>'));
  main.route(
    '/moved',
    delay((_req, res) => redirect(res, 301, '/docs/0.html')),
  );
  main.route(
    '/head-hostile',
    delay((req, res) =>
      req.method === 'HEAD' ? send(res, 405, HTML, '') : send(res, 200, HTML, document('GET only', '<p>fine</p>')),
    ),
  );
  main.route(
    '/files/report.pdf',
    delay((_req, res) => send(res, 200, 'application/pdf', Buffer.from('%PDF-1.4\n%fixture\n'))),
  );
  main.route(
    '/download',
    delay((_req, res) => send(res, 200, 'application/octet-stream', Buffer.alloc(2048, 7))),
  );
  let rateLimitCalls = 0;
  main.route('/rate-limited', (_req, res) => {
    if (rateLimitCalls++ % 2 === 0) {
      res.writeHead(429, { 'retry-after': '1', 'content-type': HTML, 'content-length': 0 });
      res.end();
      return;
    }
    send(res, 200, HTML, document('Rate limited', '<p>patience paid off</p>'));
  });
  main.route(
    '/calendar',
    delay((_req, res, url) => send(res, 200, HTML, document('Calendar', calendarBody(url.searchParams.get('month'))))),
  );

  for (let n = 0; n < o.pages * o.externalPerPage; n++) {
    (externals[n % externals.length] as FixtureSite).route(
      `/ext/${n}`,
      delay((_req, res) =>
        n % 50 === 7
          ? send(res, 404, HTML, document('Not found', 'gone'))
          : send(res, 200, HTML, document(`External ${n}`, `<p>external ${n}</p>`)),
      ),
    );
  }
  external.route('/protected', (_req, res) => {
    const body = document(
      'Just a moment...',
      '<div id="challenge-platform">Checking your browser before accessing the site.</div>',
    );
    res.writeHead(403, {
      'content-type': HTML,
      server: 'cloudflare',
      'cf-mitigated': 'challenge',
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
  });

  return {
    entryUrl: `${main.origin}/`,
    main,
    external,
    externals,
    expected,
    close: async () => {
      await Promise.all([main.close(), ...externals.map((x) => x.close()), soft.close(), silent?.close()]);
    },
  };
}

/** The URLs whose verdicts tests assert, and the site's shape. */
function expectations(
  main: string,
  externalUrl: (n: number) => string,
  external: string,
  soft: string,
  silent: string | undefined,
  o: Required<CrawlSiteOptions>,
) {
  const brokenExternal = range(o.pages * o.externalPerPage)
    .filter((n) => n % 50 === 7)
    .map(externalUrl);
  return {
    pages: o.pages,
    /** One page linking to every doc page and every external URL (for single-page checks). */
    everything: `${main}/all.html`,
    hiddenPages: range(HIDDEN_PAGES).map((j) => `${main}/hidden/${j}.html`),
    brokenExternal,
    notFound: `${main}/status/404`,
    gone: `${main}/status/410`,
    serverError: `${main}/status/500`,
    redirectChain: `${main}/redirect/3`,
    redirectLoop: `${main}/redirect-loop`,
    moved: `${main}/moved`,
    headHostile: `${main}/head-hostile`,
    rateLimited: o.rateLimited ? `${main}/rate-limited` : undefined,
    pdf: `${main}/files/report.pdf`,
    download: `${main}/download`,
    calendar: o.trap ? `${main}/calendar?month=2024-01` : undefined,
    baseResolved: `${main}/docs/4.html`,
    relative: `${main}/docs/2.html`,
    goodAnchor: `${main}/#intro`,
    missingAnchor: `${main}/#missing-anchor`,
    /** Linked as /docs/0.html#section-2 (a link is its URL without the fragment). */
    goodFragment: `${main}/docs/0.html`,
    /** Linked as /docs/1.html#nope. */
    missingFragment: `${main}/docs/1.html`,
    /** Linked from the home page; robots.txt disallows it. */
    robotsDisallowed: `${main}/private/secret.html`,
    /** Linked from the home page; under the disallowed folder, but allowed by a longer rule. */
    robotsAllowed: `${main}/private/open.html`,
    /** A missing page the home page links with FRAGMENT_FAN_OUT different fragments. */
    fragmentedMissing: `${main}/docs/missing.html`,
    mailto: 'mailto:team@fixture.test',
    tel: 'tel:+15550100',
    javascript: 'javascript:void(0)',
    botWall: `${external}/protected`,
    softNotFound: `${soft}/products/999`,
    softFound: `${soft}/products/1`,
    silent: silent === undefined ? [] : range(4).map((k) => `${silent}/never-${k}`),
  };
}

/** Fragments the home page links one missing page with. */
export const FRAGMENT_FAN_OUT = 50;

function homeBody(e: ReturnType<typeof expectations>, o: Required<CrawlSiteOptions>): string {
  const links = [
    ...range(SECTIONS).map((s) => `<a href="/section/${s}/">Section ${s}</a>`),
    '<a href="docs/2.html">Relative doc 2</a>',
    '<a href="/base/">Base href page</a>',
    `<a href="${e.mailto}">Mail us</a>`,
    `<a href="${e.tel}">Call us</a>`,
    `<a href="${e.javascript}">Do nothing</a>`,
    '<a href="#intro">Intro</a>',
    '<a href="#missing-anchor">Nowhere</a>',
    '<a href="/docs/0.html#section-2">Doc 0, section 2</a>',
    '<a href="/docs/1.html#nope">Doc 1, missing section</a>',
    `<a href="${e.robotsDisallowed}">Private</a>`,
    `<a href="${e.robotsAllowed}">Private but open</a>`,
    ...range(FRAGMENT_FAN_OUT).map((k) => `<a href="/docs/missing.html#part-${k}">Missing doc, part ${k}</a>`),
    `<a href="${e.notFound}">Missing page</a>`,
    `<a href="${e.gone}">Removed page</a>`,
    `<a href="${e.serverError}">Crashing page</a>`,
    `<a href="${e.redirectChain}">Redirect chain</a>`,
    `<a href="${e.redirectLoop}">Redirect loop</a>`,
    `<a href="${e.moved}">Moved</a>`,
    `<a href="${e.headHostile}">HEAD-hostile</a>`,
    `<a href="${e.pdf}">Report (PDF)</a>`,
    `<a href="${e.download}">Download</a>`,
    `<a href="${e.botWall}">Members area</a>`,
    `<a href="${e.softNotFound}">Discontinued product</a>`,
    `<a href="${e.softFound}">Product 1</a>`,
    ...(e.rateLimited ? [`<a href="${e.rateLimited}">Busy endpoint</a>`] : []),
    ...(e.calendar ? [`<a href="${e.calendar}">Events calendar</a>`] : []),
    ...e.silent.map((url, k) => `<a href="${url}">Silent ${k}</a>`),
  ];
  const items = links.map((l) => `<li>${l}</li>`).join('\n');
  return `<h1 id="top">Fixture site (${o.pages} docs)</h1>\n<h2 id="intro">Intro</h2>\n<ul>\n${items}\n</ul>`;
}

function sectionBody(s: number, pages: number): string {
  const docs = range(pages).filter((i) => i % SECTIONS === s);
  const items = docs.map((i) => `<li><a href="../../docs/${i}.html">Doc ${i}</a></li>`).join('\n');
  return `<p><a href="../../">Home</a></p>\n<ul>\n${items}\n</ul>`;
}

function docBody(i: number, o: Required<CrawlSiteOptions>, externalUrl: (n: number) => string): string {
  const links = [
    '<a href="/">Home</a>',
    `<a href="/section/${i % SECTIONS}/">Section</a>`,
    ...(i > 0 ? [`<a href="${i - 1}.html" rel="prev">Previous</a>`] : []),
    ...(i + 1 < o.pages ? [`<a href="${i + 1}.html" rel="next">Next</a>`] : []),
    ...range(o.externalPerPage).map(
      (k) => `<a href="${externalUrl(i * o.externalPerPage + k)}" rel="nofollow">Reference ${k}</a>`,
    ),
  ];
  const style = o.css ? ` style="background-image: url(/assets/section-${i % SECTIONS}.png)"` : '';
  return `<h1${style}>Doc ${i}</h1>\n<h2 id="section-2">Section 2</h2>\n<p>${links.join(' | ')}</p>`;
}

/** The stylesheets and images of a `css` site (see CrawlSiteOptions.css). */
function addCss(main: FixtureSite, delay: (handler: FixtureHandler) => FixtureHandler): void {
  const images = range(CSS_IMAGES).map((k) => `.i${k} { background: url("img-${k}.png") no-repeat }`);
  const css = (body: string): FixtureHandler => delay((_req, res) => send(res, 200, 'text/css', body));
  main.route('/assets/site.css', css(`@import "theme.css";\n${images.join('\n')}\n`));
  main.route('/assets/theme.css', css('body { background-image: url(/assets/section-0.png) }\n'));
  const png = delay((_req, res) => send(res, 200, 'image/png', Buffer.from('89504e470d0a1a0a', 'hex')));
  for (let k = 0; k < CSS_IMAGES - 1; k++) main.route(`/assets/img-${k}.png`, png);
  for (let s = 0; s < SECTIONS; s++) main.route(`/assets/section-${s}.png`, png);
}

/** Every month links to the one before and after it: an endless chain of one URL shape. */
function calendarBody(month: string | null): string {
  const [y, m] = (month ?? '2024-01').split('-').map(Number);
  const at = (y ?? 2024) * 12 + ((m ?? 1) - 1);
  const label = (n: number) => `${Math.floor(n / 12)}-${String((n % 12) + 1).padStart(2, '0')}`;
  return (
    `<h1>Events ${label(at)}</h1><a href="/calendar?month=${label(at - 1)}">Previous month</a> ` +
    `<a href="/calendar?month=${label(at + 1)}">Next month</a>`
  );
}

function sitemapIndex(urls: string[]): string {
  const entries = urls.map((u) => `  <sitemap><loc>${u}</loc></sitemap>`).join('\n');
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${entries}\n</sitemapindex>\n`
  );
}

function urlset(urls: string[]): string {
  const entries = urls.map((u) => `  <url><loc>${u}</loc></url>`).join('\n');
  return (
    '<?xml version="1.0" encoding="UTF-8"?>\n' +
    `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${entries}\n</urlset>\n`
  );
}

function document(title: string, body: string, head = ''): string {
  return (
    `<!doctype html>\n<html><head><meta charset="utf-8"><title>${title}</title>${head}</head>\n` +
    `<body>\n${body}\n</body></html>\n`
  );
}

function send(res: http.ServerResponse, status: number, type: string, body: string | Buffer): void {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  res.writeHead(status, { 'content-type': type, 'content-length': bytes.length });
  res.end(bytes);
}

function redirect(res: http.ServerResponse, status: number, location: string): void {
  res.writeHead(status, { location, 'content-length': 0 });
  res.end();
}

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}

interface SmallHost {
  origin: string;
  close(): Promise<void>;
}

/** A shop that answers every unknown path with 200 and its "not found" page: soft 404s. */
async function startSoftNotFoundHost(): Promise<SmallHost> {
  const products = new Map(range(5).map((n) => [`/products/${n + 1}`, n + 1]));
  const server = http.createServer({ keepAliveTimeout: 5_000 }, (req, res) => {
    const path = new URL(req.url ?? '/', 'http://soft.invalid').pathname;
    const product = products.get(path);
    if (path === '/')
      return send(
        res,
        200,
        HTML,
        document(
          'Acme shop',
          '<h1>Welcome to Acme</h1><p>Browse our catalogue of sturdy anvils, rockets and magnets.</p>',
        ),
      );
    if (product !== undefined) {
      return send(
        res,
        200,
        HTML,
        document(
          `Product ${product} | Acme`,
          `<h1>Product ${product}</h1>` +
            `<p>Model ${product} ships in ${product} days with a lifetime guarantee and spare parts.</p>`,
        ),
      );
    }
    send(
      res,
      200,
      HTML,
      document(
        'Page not found | Acme',
        `<h1>Oops</h1><p>Sorry, we could not find ${path.replace(/[<>&"]/g, '')}. ` +
          'Try the <a href="/">home page</a>.</p>',
      ),
    );
  });
  return listen(server, '127.0.0.3');
}

/** Accepts connections and never answers: every request to it times out. */
async function startSilentHost(): Promise<SmallHost> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  const host = await listen(server, '127.0.0.4');
  return {
    origin: host.origin,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await host.close();
    },
  };
}

async function listen(server: net.Server, host: string): Promise<SmallHost> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port: 0, backlog: 4096 }, resolve);
  });
  const { port } = server.address() as net.AddressInfo;
  return {
    origin: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        if (server instanceof http.Server) server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
