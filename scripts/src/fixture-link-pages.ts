/**
 * Pages of link kinds for the link-checking tests (issue 37), added to a fixture site: one page per
 * category, every link in it twice, once to a target that answers 200 and once to one that answers
 * 404, so both outcomes are asserted. The expected records are computed from the same definitions.
 *
 *   /links/<category>      the category's page (head, meta, json-ld, embedded, css, malformed)
 *   /links/css/<category>.css  the stylesheet of a category with kinds written in CSS (text/css)
 *   /links/                an index page linking to every category page (a crawl's entry)
 *   /links/ok/<name>       200 HTML, the working target of link <name>
 *   /links/gone/<name>     404 (the built-in fallback), its missing target
 */
import type { FixtureSite } from './fixture-site.js';

/** One kind of link: how the page writes it, and the element and rel its record carries. */
interface LinkKind {
  name: string;
  element: string;
  rel: string | null;
  html(url: string): string;
  /** A kind written in the category's stylesheet (linked from the page), given the URL relative to it. */
  css?: (relativeUrl: string) => string;
}

/** A record a check of the page must have: the URL, where it came from and its severity. */
export interface ExpectedLink {
  url: string;
  element: string;
  rel: string | null;
  severity: 'ok' | 'broken';
}

export interface LinkPage {
  path: string;
  expected: ExpectedLink[];
}

const linkRel = (rel: string, extra = ''): LinkKind => ({
  name: `link-${rel.replace(/\s+/g, '-')}`,
  element: 'link',
  rel,
  html: (url) => `<link rel="${rel}" href="${url}"${extra}>`,
});
const metaUrl = (attr: 'property' | 'name', key: string): LinkKind => ({
  name: `meta-${key.replace(/:/g, '-')}`,
  element: 'meta',
  rel: key,
  html: (url) => `<meta ${attr}="${key}" content="${url}">`,
});
const jsonLd = (key: string, wrap: (url: string) => unknown): LinkKind => ({
  name: `json-ld-${key}`,
  element: 'json-ld',
  rel: key,
  html: (url) =>
    `<script type="application/ld+json">` +
    JSON.stringify({ '@context': 'https://schema.org', '@type': 'Organization', [key]: wrap(url) }) +
    '</script>',
});

const inCss = (name: string, rel: string, css: (url: string) => string): LinkKind => ({
  name,
  element: 'css',
  rel,
  html: () => '',
  css,
});

/** The categories of issue 37, items 2, 3 and 4. */
export const LINK_CATEGORIES: Record<string, LinkKind[]> = {
  head: [
    linkRel('canonical'),
    linkRel('alternate', ' hreflang="de"'),
    linkRel('amphtml'),
    linkRel('next'),
    linkRel('prev'),
    linkRel('manifest'),
    linkRel('apple-touch-icon'),
    linkRel('modulepreload'),
  ],
  meta: [
    metaUrl('property', 'og:url'),
    metaUrl('property', 'og:image'),
    metaUrl('name', 'twitter:image'),
    {
      name: 'meta-refresh',
      element: 'meta',
      rel: 'refresh',
      html: (url) => `<meta http-equiv="refresh" content="30; url=${url}">`,
    },
  ],
  'json-ld': [
    jsonLd('url', (url) => url),
    jsonLd('logo', (url) => ({ '@type': 'ImageObject', url })),
    jsonLd('image', (url) => [url]),
    jsonLd('sameAs', (url) => [url]),
  ],
  embedded: [
    { name: 'video-poster', element: 'video', rel: 'poster', html: (url) => `<video poster="${url}"></video>` },
    {
      name: 'track',
      element: 'track',
      rel: null,
      html: (url) => `<video><track kind="captions" src="${url}"></video>`,
    },
    { name: 'embed', element: 'embed', rel: null, html: (url) => `<embed src="${url}">` },
    { name: 'object', element: 'object', rel: null, html: (url) => `<object data="${url}"></object>` },
    { name: 'input-image', element: 'input', rel: null, html: (url) => `<input type="image" src="${url}" alt="go">` },
    { name: 'svg-image', element: 'image', rel: null, html: (url) => `<svg><image href="${url}"/></svg>` },
    { name: 'svg-use', element: 'use', rel: null, html: (url) => `<svg><use xlink:href="${url}#icon"/></svg>` },
  ],
  css: [
    {
      name: 'style-attribute',
      element: 'style',
      rel: 'background-image',
      html: (url) => `<div style="background-image: url('${url}')">x</div>`,
    },
    {
      name: 'style-block',
      element: 'style',
      rel: 'background',
      html: (url) => `<style>.b { background: url("${url}") no-repeat }</style>`,
    },
    { name: 'style-import', element: 'style', rel: '@import', html: (url) => `<style>@import "${url}";</style>` },
    linkRel('stylesheet'),
    inCss('css-import', '@import', (url) => `@import url("${url}");`),
    inCss('css-url', 'background-image', (url) => `.c { background-image: url(${url}) }`),
    inCss('css-font', 'src', (url) => `@font-face { font-family: f; src: url('${url}') format("woff2") }`),
  ],
};

/** Malformed hrefs: broken as "Invalid URL" (their url is the href as written); data: images are not listed. */
export const MALFORMED_HREFS = ['//', '//////', 'http://'];

/**
 * The fragment page's in-page anchors (issue 37, item 6): for each, whether its target is found
 * under the HTML standard alone, and whether it is a single-page app's route or found only with
 * GitHub's `user-content-` prefix.
 */
export const FRAGMENT_ANCHORS: { href: string; present: boolean; route?: true; github?: true }[] = [
  { href: '#present', present: true },
  { href: '#missing', present: false },
  { href: '#/users/1', present: false, route: true },
  { href: '#!/home', present: false, route: true },
  { href: '#install', present: false, github: true },
];
/** Globs that skip the routes above. */
export const ROUTE_PATTERNS = ['/**', '!/**'];

/** The severity each fragment anchor gets with checkFragments, given the two options. */
export function fragmentSeverities(skipRoutes: boolean, githubAnchors: boolean): Record<string, 'info' | 'warning'> {
  return Object.fromEntries(
    FRAGMENT_ANCHORS.map((a) => {
      const fine = a.present || (a.route && skipRoutes) || (a.github && githubAnchors);
      return [a.href, fine ? 'info' : 'warning'];
    }),
  );
}

export function addLinkPages(site: FixtureSite): {
  index: string;
  pages: LinkPage[];
  malformed: string;
  fragments: string;
} {
  const pages: LinkPage[] = [];
  for (const [category, kinds] of Object.entries(LINK_CATEGORIES)) {
    const expected: ExpectedLink[] = [];
    const body: string[] = [];
    const css: string[] = [];
    for (const kind of kinds) {
      for (const [severity, folder] of [
        ['ok', 'ok'],
        ['broken', 'gone'],
      ] as const) {
        const url = site.url(`/links/${folder}/${kind.name}`);
        // A stylesheet's URLs are relative to it (/links/css/): a checker must resolve them there.
        if (kind.css) css.push(kind.css(`../${folder}/${kind.name}`));
        else body.push(kind.html(url));
        expected.push({ url, element: kind.element, rel: kind.rel, severity });
      }
    }
    if (css.length > 0) {
      const sheet = `/links/css/${category}.css`;
      const text = css.join('\n');
      site.route(sheet, (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/css' }).end(text);
      });
      body.push(`<link rel="stylesheet" href="${sheet}">`);
      expected.push({ url: site.url(sheet), element: 'link', rel: 'stylesheet', severity: 'ok' });
    }
    const path = `/links/${category}`;
    const html =
      `<!doctype html><html><head><title>${category}</title></head>` +
      `<body><p>${category}</p>${body.join('\n')}</body></html>`;
    site.route(path, (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end(html);
    });
    pages.push({ path, expected });
  }
  const malformed = '/links/malformed';
  const working = site.url('/links/ok/anchor');
  const malformedHtml =
    `<!doctype html><html><body>${MALFORMED_HREFS.map((href) => `<a href="${href}">bad</a>`).join('')}` +
    `<a href="${working}">good</a><img src="data:image/png;base64,iVBORw0KGgo=" alt="inline">` +
    '<a href="/links/gone/anchor">gone</a></body></html>';
  site.route(malformed, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' }).end(malformedHtml);
  });
  const anchors = pages.map((p) => `<a href="${p.path}">${p.path}</a>`).join('');
  const indexHtml = `<!doctype html><html><body>${anchors}</body></html>`;
  site.route('/links/', (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' }).end(indexHtml);
  });
  site.route('*', (_req, res, url) => {
    if (url.pathname.startsWith('/links/ok/'))
      res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>ok</title><p>ok</p>');
    else res.writeHead(404, { 'content-type': 'text/html' }).end('<!doctype html><title>gone</title><p>gone</p>');
  });
  const fragments = '/links/fragments';
  const fragmentHtml =
    '<!doctype html><html><body><p id="present">here</p><h2 id="user-content-install">Install</h2>' +
    `${FRAGMENT_ANCHORS.map((a) => `<a href="${a.href}">${a.href}</a>`).join('')}</body></html>`;
  site.route(fragments, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' }).end(fragmentHtml);
  });
  return { index: '/links/', pages, malformed, fragments };
}
