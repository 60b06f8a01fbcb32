/**
 * The issues an audit of a generated site (site-audit-fixture.ts) must report, computed from the
 * site's definition by the rules of docs/decisions/0442: for each issue id, the affected URLs.
 */
import { DEAD_EXTERNAL, defaults, type FixturePage, type FixtureSite } from './site-audit-fixture.js';

/** The decision's figures. */
const TITLE = { min: 10, max: 60 };
const DESCRIPTION = { min: 50, max: 160 };
/** The catalogue's time to first byte past which a page is slow. */
export const SLOW_MS = 1_000;
const HEAVY_CHARS = 2 * 1024 * 1024;
const DEEP = 3;
const VALID_HREFLANG = /^(x-default|[a-z]{2}(-[A-Z]{2})?)$/;
const REGIONS_REFUSED = new Set(['UK']);

export interface ExpectedAudit {
  /** URLs audited (fetched). */
  audited: Set<string>;
  /** URLs robots.txt kept the crawl from. */
  refused: Set<string>;
  issues: Map<string, Set<string>>;
  /** Pages with an error-priority issue (for the health score). */
  errorPages: Set<string>;
}

const ERRORS = new Set([
  'http_4xx',
  'http_5xx',
  'redirect_loop',
  'canonical_to_non200',
  'duplicate_content',
  'title_missing',
  'hreflang_invalid_code',
  'hreflang_no_return',
  'mixed_content',
]);
const LINK_ERRORS = new Set(['broken_link_internal', 'broken_resource']);

/** A link's path without its #fragment ('' for an in-page anchor). */
const pathOf = (href: string) => href.split('#')[0] as string;

/** `checkFragments`: the audit verifies #fragments (of in-page anchors and links to the site's pages). */
export function expectedAudit(site: FixtureSite, base: string, checkFragments = false): ExpectedAudit {
  const byPath = new Map(site.pages.map((p) => [p.path, p]));
  const url = (path: string) => (path.startsWith('http') ? path : `${base}${path}`);
  /** Where a path's redirects end: the final page (undefined: 404), hops, a loop. */
  const resolve = (path: string) => {
    const seen = new Set<string>();
    let at = path;
    for (;;) {
      const page = byPath.get(at);
      if (!page?.redirect) return { page, hops: seen.size, loop: false, final: at };
      if (seen.has(at)) return { page: undefined, hops: seen.size, loop: true, final: at };
      seen.add(at);
      at = page.redirect;
    }
  };
  const statusOf = (path: string) => {
    if (path === '/img/ok.png') return 200;
    const r = resolve(path);
    return r.loop ? undefined : r.page ? (r.page.status ?? 200) : 404;
  };
  const blocked = (path: string) => site.disallow.some((d) => path.startsWith(d));
  const isPagePath = (href: string) => !href.startsWith('http') && !href.startsWith('/img/');

  // The crawl: the entry, what it links, what the sitemap lists; robots-blocked pages are refused.
  const audited = new Map<string, { refused: boolean; fromSitemap: boolean }>();
  const queue = ['/'];
  for (const path of site.sitemap ?? []) {
    audited.set(path, { refused: blocked(path), fromSitemap: true });
    queue.push(path);
  }
  audited.set('/', { refused: false, fromSitemap: (site.sitemap ?? []).includes('/') });
  const linksOf = (path: string): string[] => {
    const r = resolve(path);
    if (audited.get(path)?.refused || r.loop || !r.page || (r.page.status ?? 200) !== 200) return [];
    return [...new Set((r.page.links ?? []).map(pathOf))].filter((l) => l !== '' && isPagePath(l) && l !== path);
  };
  while (queue.length > 0) {
    const path = queue.shift() as string;
    for (const target of linksOf(path))
      if (!audited.has(target)) {
        audited.set(target, { refused: blocked(target), fromSitemap: false });
        queue.push(target);
      }
  }

  const issues = new Map<string, Set<string>>();
  const errorPages = new Set<string>();
  const add = (id: string, target: string, pages: string[] = [target]) => {
    issues.set(id, (issues.get(id) ?? new Set()).add(url(target)));
    if (ERRORS.has(id) || LINK_ERRORS.has(id)) for (const p of pages) errorPages.add(url(p));
  };
  const incoming = new Map<string, number>();
  for (const path of audited.keys())
    for (const t of new Set(linksOf(path))) incoming.set(t, (incoming.get(t) ?? 0) + 1);
  const depth = new Map([['/', 0]]);
  for (let level = ['/'], d = 1; level.length > 0; d++) {
    const next = level.flatMap(linksOf).filter((t) => !depth.has(t));
    for (const t of next) depth.set(t, d);
    level = [...new Set(next)];
  }
  const contentOf = (path: string): FixturePage | undefined => {
    const r = resolve(path);
    return r.hops === 0 && r.page && (r.page.status ?? 200) === 200 ? r.page : undefined;
  };
  const canonicalOf = (page: FixturePage) => defaults(page).canonical;
  const indexable = (path: string) => {
    const page = contentOf(path);
    return !!page && !page.noindex && canonicalOf(page) === path;
  };

  for (const [path, { refused, fromSitemap }] of audited) {
    const linked = incoming.get(path) ?? 0;
    if (refused) {
      if (linked > 0) add('blocked_by_robots', path);
      continue;
    }
    const r = resolve(path);
    const status = statusOf(path);
    if (r.loop) add('redirect_loop', path);
    else if ((status ?? 0) >= 500) add('http_5xx', path);
    else if ((status ?? 0) >= 400) add('http_4xx', path);
    if (r.hops >= 2 && !r.loop) add('redirect_chain', path);
    if ((depth.get(path) ?? 0) > DEEP) add('deep_page', path);
    if (fromSitemap && (r.hops > 0 || status !== 200)) add('sitemap_non200', path);
    else if (fromSitemap && !indexable(path)) add('sitemap_non_indexable', path);
    if (fromSitemap && status === 200 && linked === 0 && path !== '/') add('orphan_page', path);
    const page = contentOf(path);
    if (!page) continue;
    if ((page.delayMs ?? 0) > SLOW_MS) add('slow_ttfb', path);
    if ((page.padChars ?? 0) > HEAVY_CHARS) add('page_too_heavy', path);
    if (page.noindex && linked > 0) add('noindex', path);
    const { title, description, h1, lang, canonical } = defaults(page);
    if (!title) add('title_missing', path);
    else if (title.length > TITLE.max) add('title_too_long', path);
    else if (title.length < TITLE.min) add('title_too_short', path);
    if (!description) add('description_missing', path);
    else if (description.trim().length > DESCRIPTION.max) add('description_too_long', path);
    else if (description.trim().length < DESCRIPTION.min) add('description_too_short', path);
    if (h1 === 0) add('h1_missing', path);
    if (h1 > 1) add('h1_multiple', path);
    if (lang === null) add('lang_missing', path);
    if (canonical === null) add('canonical_missing', path);
    else if (canonical !== path) {
      add('canonicalised', path);
      const target = contentOf(canonical);
      if (statusOf(canonical) !== 200 || resolve(canonical).hops > 0) add('canonical_to_non200', path);
      else if (target && canonicalOf(target) !== canonical) add('canonical_chain', path);
    }
    for (const h of page.hreflang ?? []) {
      const [, region] = h.lang.split('-');
      if (!VALID_HREFLANG.test(h.lang) || (region && REGIONS_REFUSED.has(region))) add('hreflang_invalid_code', path);
      const other = contentOf(h.path);
      if (h.path !== path && other && !(other.hreflang ?? []).some((o) => o.path === path))
        add('hreflang_no_return', path);
    }
    if (page.jsonLd !== undefined && !parses(page.jsonLd)) add('jsonld_invalid', path);
    if ((page.images ?? []).some((img) => img.alt === undefined)) add('image_missing_alt', path);
  }

  // Duplicates among indexable pages.
  const groups = (key: (p: FixturePage) => string | undefined | null) => {
    const by = new Map<string, string[]>();
    for (const path of audited.keys()) {
      const page = contentOf(path);
      const value = page && indexable(path) ? key(page) : undefined;
      if (value) by.set(value, [...(by.get(value) ?? []), path]);
    }
    return [...by.values()].filter((g) => g.length > 1);
  };
  for (const g of groups((p) => defaults(p).title)) for (const p of g) add('title_duplicate', p);
  for (const g of groups((p) => defaults(p).description)) for (const p of g) add('description_duplicate', p);
  for (const g of groups((p) => defaults(p).body)) for (const p of g) add('duplicate_content', p);

  // Broken links and resources, with the pages they are on.
  for (const path of audited.keys()) {
    const page = contentOf(path);
    if (!page) continue;
    for (const href of new Set((page.links ?? []).map(pathOf).filter((p) => p !== ''))) {
      if (href === DEAD_EXTERNAL) add('broken_link_external', href, [path]);
      else if (!href.startsWith('http') && (statusOf(href) === undefined || (statusOf(href) ?? 0) >= 400))
        add('broken_link_internal', href, [path]);
    }
    const resources = [
      ...(page.images ?? []).map((i) => i.src),
      ...(page.canonical ? [page.canonical] : []),
      ...(page.hreflang ?? []).map((h) => h.path),
    ];
    for (const src of resources) if ((statusOf(src) ?? 0) >= 400) add('broken_resource', src, [path]);
  }
  // Links to a missing anchor: an in-page one on its page, a link to a page that answers 200 on the
  // page it lands on (a warning: no error page).
  if (checkFragments)
    for (const path of audited.keys()) {
      const page = contentOf(path);
      for (const href of page?.links ?? []) {
        const [target, name] = href.split('#') as [string, string | undefined];
        if (name === undefined || href.startsWith('http')) continue;
        const on = target === '' ? page : resolve(target).page;
        if (target !== '' && statusOf(target) !== 200) continue;
        if (!on?.ids?.includes(name)) add('missing_fragment', target === '' ? `${path}${href}` : target, [path]);
      }
    }
  if (!site.sitemap) add('sitemap_missing', '/');
  const [fetched, refused] = [false, true].map(
    (r) => new Set([...audited].flatMap(([path, page]) => (page.refused === r ? [url(path)] : []))),
  ) as [Set<string>, Set<string>];
  return { audited: fetched, refused, issues, errorPages };
}

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
