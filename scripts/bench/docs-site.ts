/**
 * A generated documentation site for the docs-site benchmark (docs-crawl.ts), on 127.0.0.x:
 * `sections` x `perSection` pages (/docs/<s>/<n>.html), each with a stylesheet, an icon, a script,
 * a table of contents of in-page fragment links (#h-1..#h-6), prev/next and cross-section links to
 * other pages' fragments, an image of its own and the shared logo, and optionally a link to a
 * reference host. Known breakage, listed in `expected`: missing pages, images, a script and
 * fragments; robots.txt disallows /private/ and /docs/drafts/, both linked from the home page (the
 * drafts page links to a page that is missing too).
 *
 * Each host counts the requests it has in flight and the most at once; `latencyMs` delays every
 * answer, and `unavailableForMs` answers 503 (Retry-After: 1) to every request for that long after
 * the first one.
 */
import http from 'node:http';
import type net from 'node:net';

export interface DocsSiteOptions {
  sections?: number;
  perSection?: number;
  /** A second host the pages link to (/ref/<k>), one of its links missing. */
  reference?: boolean;
  latencyMs?: number;
  unavailableForMs?: number;
}

export interface DocsHost {
  origin: string;
  requests: number;
  inFlight: number;
  peakInFlight: number;
  /** Requests answered 503. */
  unavailable: number;
}

export interface DocsSite {
  entryUrl: string;
  main: DocsHost;
  reference?: DocsHost;
  pages: number;
  expected: {
    missingPages: string[];
    missingImages: string[];
    missingScripts: string[];
    /** page#fragment links whose target is missing. */
    missingFragments: string[];
    disallowed: string[];
    /** Missing only behind a disallowed page. */
    behindDisallowed: string[];
    missingReference: string[];
  };
  close(): Promise<void>;
}

const HTML = 'text/html; charset=utf-8';
const MISSING_PAGES: [number, string][] = [
  [1, 'old-5.html'],
  [3, 'old-7.html'],
  [6, 'removed.html'],
];
/** Pages whose own image is missing: [section, page]. */
const MISSING_IMAGES: [number, number][] = [
  [2, 4],
  [4, 9],
  [7, 1],
];

async function host(
  address: string,
  options: DocsSiteOptions,
  answer: (url: URL) => { status: number; type: string; body: string } | undefined,
): Promise<DocsHost & { close(): Promise<void> }> {
  let firstAt: number | undefined;
  const state = { origin: '', requests: 0, inFlight: 0, peakInFlight: 0, unavailable: 0 };
  const server = http.createServer(async (req, res) => {
    state.requests++;
    state.inFlight++;
    state.peakInFlight = Math.max(state.peakInFlight, state.inFlight);
    firstAt ??= performance.now();
    try {
      if (options.latencyMs) await new Promise((resolve) => setTimeout(resolve, options.latencyMs));
      if (options.unavailableForMs && performance.now() - firstAt < options.unavailableForMs) {
        state.unavailable++;
        res.writeHead(503, { 'retry-after': '1', 'content-type': 'text/plain', 'content-length': '11' });
        res.end('unavailable');
        return;
      }
      const url = new URL(req.url ?? '/', state.origin);
      const got = answer(url) ?? { status: 404, type: HTML, body: '<title>Not found</title><h1>Not found</h1>' };
      res.writeHead(got.status, { 'content-type': got.type, 'content-length': Buffer.byteLength(got.body) });
      res.end(got.body);
    } finally {
      state.inFlight--;
    }
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, address, resolve));
  state.origin = `http://${address}:${(server.address() as net.AddressInfo).port}`;
  return Object.assign(state, {
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}

const sectionItem = (s: number) => `<li><a href="/docs/${s}/">Section ${s}</a></li>`;
const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>` +
  '<link rel="stylesheet" href="/assets/docs.css"><link rel="icon" href="/favicon.ico">' +
  `<script src="/assets/docs.js" defer></script></head><body>${body}</body></html>`;

export async function startDocsSite(options: DocsSiteOptions = {}): Promise<DocsSite> {
  const sections = options.sections ?? 8;
  const perSection = options.perSection ?? 40;
  const reference = options.reference
    ? await host('127.0.0.2', options, (url) =>
        url.pathname.startsWith('/ref/') && url.pathname !== '/ref/missing'
          ? { status: 200, type: HTML, body: `<title>Reference ${url.pathname}</title>` }
          : undefined,
      )
    : undefined;
  const pagePath = (s: number, n: number) => `/docs/${s}/${n}.html`;
  const missingImage = new Set(MISSING_IMAGES.map(([s, n]) => `/img/${s}/${n}.png`));
  const toc = Array.from({ length: 6 }, (_, k) => `<li><a href="#h-${k + 1}">Part ${k + 1}</a></li>`).join('');
  const docPage = (s: number, n: number) => {
    const prev = n > 0 ? pagePath(s, n - 1) : `/docs/${s}/`;
    const next = n + 1 < perSection ? pagePath(s, n + 1) : `/docs/${(s + 1) % sections}/`;
    const links = [
      '<a href="/">Home</a>',
      `<a href="/docs/${s}/">Section ${s}</a>`,
      `<a href="${prev}#h-6">Previous</a>`,
      `<a href="${next}#h-1">Next</a>`,
      `<a href="${pagePath((s + 1) % sections, n)}#h-3">See also</a>`,
      `<a href="${pagePath((s + 3) % sections, (n * 7) % perSection)}#h-2">Related</a>`,
    ];
    for (const [ms, name] of MISSING_PAGES)
      if (ms === s && n === 5) links.push(`<a href="/docs/${ms}/${name}">Old</a>`);
    if (s === 0 && n === 3) links.push(`<a href="${pagePath(0, 4)}#no-such-heading">Broken fragment</a>`);
    if (s === 5 && n === 5) links.push('<a href="#gone">Broken in-page fragment</a>');
    if (reference) links.push(`<a href="${reference.origin}/ref/${s}-${n % 10}">API reference</a>`);
    if (reference && s === 2 && n === 2) links.push(`<a href="${reference.origin}/ref/missing">Old reference</a>`);
    const legacy = s === 7 ? '<script src="/assets/legacy.js"></script>' : '';
    const parts = Array.from(
      { length: 6 },
      (_, k) => `<h2 id="h-${k + 1}">Part ${k + 1}</h2><p>Section ${s}, page ${n}, part ${k + 1}.</p>`,
    ).join('');
    return page(
      `Docs ${s}.${n}`,
      `<nav><ul>${toc}</ul></nav><img src="/img/logo.svg" alt="logo"><main><h1>Docs ${s}.${n}</h1>` +
        `<img src="/img/${s}/${n}.png" alt="diagram">${parts}<p>${links.join(' ')}</p></main>${legacy}`,
    );
  };
  const main = await host('127.0.0.1', options, (url) => {
    const p = url.pathname;
    const ok = (type: string, body: string) => ({ status: 200, type, body });
    if (p === '/robots.txt') return ok('text/plain', 'User-agent: *\nDisallow: /private/\nDisallow: /docs/drafts/\n');
    if (p === '/')
      return ok(
        HTML,
        page(
          'Docs',
          `<h1>Docs</h1><ul>${Array.from({ length: sections }, (_, s) => sectionItem(s)).join('')}</ul>` +
            '<a href="/private/admin.html">Admin</a> <a href="/docs/drafts/next.html">Drafts</a>',
        ),
      );
    if (p === '/private/admin.html') return ok(HTML, page('Admin', '<h1>Admin</h1>'));
    if (p === '/docs/drafts/next.html')
      return ok(HTML, page('Drafts', '<h1>Drafts</h1><a href="/docs/drafts/missing.html">Unwritten</a>'));
    if (p === '/assets/docs.css') return ok('text/css', 'body{font-family:sans-serif}');
    if (p === '/assets/docs.js') return ok('text/javascript', 'void 0;');
    if (p === '/favicon.ico') return ok('image/x-icon', 'ico');
    if (p === '/img/logo.svg') return ok('image/svg+xml', '<svg xmlns="http://www.w3.org/2000/svg"/>');
    const img = /^\/img\/(\d+)\/(\d+)\.png$/.exec(p);
    if (img) return missingImage.has(p) ? undefined : ok('image/png', 'png');
    const index = /^\/docs\/(\d+)\/$/.exec(p);
    if (index && Number(index[1]) < sections) {
      const s = Number(index[1]);
      const items = Array.from({ length: perSection }, (_, n) => `<li><a href="${pagePath(s, n)}">Page ${n}</a></li>`);
      return ok(HTML, page(`Section ${s}`, `<nav><a href="/">Home</a></nav><ul>${items.join('')}</ul>`));
    }
    const doc = /^\/docs\/(\d+)\/(\d+)\.html$/.exec(p);
    if (doc && Number(doc[1]) < sections && Number(doc[2]) < perSection)
      return ok(HTML, docPage(Number(doc[1]), Number(doc[2])));
    return undefined;
  });
  const url = (path: string) => `${main.origin}${path}`;
  return {
    entryUrl: url('/'),
    main,
    reference,
    pages: sections * perSection + sections + 1,
    expected: {
      missingPages: MISSING_PAGES.filter(([s]) => s < sections).map(([s, name]) => url(`/docs/${s}/${name}`)),
      missingImages: [...missingImage].map(url),
      missingScripts: sections > 7 ? [url('/assets/legacy.js')] : [],
      missingFragments: [`${url(pagePath(0, 4))}#no-such-heading`, `${url(pagePath(5, 5))}#gone`],
      disallowed: [url('/private/admin.html'), url('/docs/drafts/next.html')],
      behindDisallowed: [url('/docs/drafts/missing.html')],
      missingReference: reference ? [`${reference.origin}/ref/missing`] : [],
    },
    close: async () => {
      await Promise.all([main.close(), reference?.close()]);
    },
  };
}
