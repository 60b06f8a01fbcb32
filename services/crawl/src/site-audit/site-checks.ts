/**
 * The checks that need the whole site: click depth and incoming links (from the pages' anchors),
 * orphans, noindex or robots-blocked pages that are linked, duplicate titles, descriptions and
 * content, canonicals to bad or canonicalised targets, hreflang return links, the sitemap's
 * entries, and broken links with the pages they are on. Pure.
 */
import { THRESHOLDS as T } from './catalogue.js';
import { type AuditedPage, type Finding, isIndexable, sameUrl } from './page-checks.js';

/** A checked link of the crawl, as the audit reads it (the crawl's LinkRecord with its sources). */
export interface AuditLink {
  url: string;
  type: string;
  element: string;
  severity: string;
  statusCode?: number;
  reason: string;
  sources: string[];
  sourceCount: number;
}

export interface SiteFacts {
  entry: string;
  pages: readonly AuditedPage[];
  links: readonly AuditLink[];
  sitemapFound: boolean;
  /** The site's pages its sitemaps list. */
  sitemap: readonly string[];
}

/** Clicks from the entry page over anchors between audited pages; unreachable pages are absent. */
export function clickDepths(entry: string, pages: readonly AuditedPage[]): Map<string, number> {
  const byUrl = new Map(pages.map((p) => [p.url, p]));
  const depth = new Map<string, number>([[entry, 0]]);
  let level = [entry];
  for (let d = 1; level.length > 0; d++) {
    const next: string[] = [];
    for (const url of level)
      for (const target of byUrl.get(url)?.links ?? [])
        if (!depth.has(target)) {
          depth.set(target, d);
          next.push(target);
        }
    level = next;
  }
  return depth;
}

/** How many other audited pages link to each page. */
export function incomingLinks(pages: readonly AuditedPage[]): Map<string, number> {
  const incoming = new Map<string, number>();
  for (const page of pages) for (const target of page.links) incoming.set(target, (incoming.get(target) ?? 0) + 1);
  return incoming;
}

export function checkSite(site: SiteFacts): { findings: Finding[]; depths: Map<string, number> } {
  const findings: Finding[] = [];
  const depths = clickDepths(site.entry, site.pages);
  const incoming = incomingLinks(site.pages);
  const byUrl = new Map(site.pages.map((p) => [p.url, p]));
  const linkStatus = new Map(site.links.map((l) => [l.url, l.statusCode]));
  for (const page of site.pages) {
    const add = (id: Finding['id'], detail: string) => findings.push({ id, url: page.url, detail });
    const linked = incoming.get(page.url) ?? 0;
    const clicks = depths.get(page.url);
    if (clicks !== undefined && clicks > T.maxClickDepth) add('deep_page', `${clicks} clicks from the start page`);
    if (page.refused && linked > 0) add('blocked_by_robots', `linked from ${linked} page(s)`);
    if (page.facts?.noindex && page.status === 200 && linked > 0) add('noindex', `linked from ${linked} page(s)`);
    if (page.fromSitemap && linked === 0 && page.status === 200 && page.url !== site.entry)
      add('orphan_page', 'no audited page links to it');
    const canonical = page.facts?.canonical;
    if (page.status === 200 && canonical !== undefined && !sameUrl(canonical, page.url)) {
      const target = byUrl.get(canonical);
      const status = target ? target.status : linkStatus.get(canonical);
      if (target?.redirects || (status !== undefined && status !== 200))
        add('canonical_to_non200', `canonical ${canonical} answered ${target?.redirects ? 'a redirect' : status}`);
      else if (target?.facts?.canonical && !sameUrl(target.facts.canonical, canonical))
        add('canonical_chain', `canonical ${canonical} names ${target.facts.canonical}`);
    }
    for (const alternate of page.facts?.hreflang ?? []) {
      if (sameUrl(alternate.url, page.url)) continue;
      const other = byUrl.get(alternate.url);
      if (other?.facts && other.status === 200 && !other.facts.hreflang.some((h) => sameUrl(h.url, page.url)))
        add('hreflang_no_return', `${alternate.url} (${alternate.lang}) does not link back`);
    }
  }
  findings.push(...duplicates(site.pages), ...sitemapFindings(site, byUrl), ...brokenLinks(site.links));
  return { findings, depths };
}

/** Indexable pages sharing a title, a description, or their body text (without a canonical between them). */
function duplicates(pages: readonly AuditedPage[]): Finding[] {
  const indexable = pages.filter(isIndexable);
  const findings: Finding[] = [];
  const groups = (key: (p: AuditedPage) => string | undefined) => {
    const by = new Map<string, AuditedPage[]>();
    for (const page of indexable) {
      const value = key(page);
      if (value) by.set(value, [...(by.get(value) ?? []), page]);
    }
    return [...by.values()].filter((group) => group.length > 1);
  };
  for (const group of groups((p) => p.facts?.title))
    for (const page of group)
      findings.push({
        id: 'title_duplicate',
        url: page.url,
        detail: `same title as ${group.length - 1} other page(s)`,
      });
  for (const group of groups((p) => p.facts?.description))
    for (const page of group)
      findings.push({
        id: 'description_duplicate',
        url: page.url,
        detail: `same description as ${group.length - 1} other page(s)`,
      });
  for (const group of groups((p) => p.facts?.bodyHash))
    for (const page of group)
      findings.push({
        id: 'duplicate_content',
        url: page.url,
        detail: `same content as ${group
          .filter((p) => p !== page)
          .map((p) => p.url)
          .slice(0, 3)
          .join(', ')}`,
      });
  return findings;
}

function sitemapFindings(site: SiteFacts, byUrl: Map<string, AuditedPage>): Finding[] {
  if (!site.sitemapFound) return [{ id: 'sitemap_missing', url: site.entry, detail: 'no sitemap.xml found' }];
  const findings: Finding[] = [];
  for (const url of new Set(site.sitemap)) {
    const page = byUrl.get(url);
    if (!page || page.refused) continue;
    if (page.status !== 200 || page.redirects > 0)
      findings.push({
        id: 'sitemap_non200',
        url,
        detail: page.redirects > 0 ? `redirects to ${page.finalUrl}` : `answered ${page.status ?? page.error}`,
      });
    else if (page.facts && !isIndexable(page))
      findings.push({
        id: 'sitemap_non_indexable',
        url,
        detail: page.facts.noindex ? 'noindex' : `canonical is ${page.facts.canonical}`,
      });
  }
  return findings;
}

const ANCHORS = new Set(['a', 'area']);

/** Each broken link or resource, with the pages it is on. */
function brokenLinks(links: readonly AuditLink[]): Finding[] {
  return links
    .filter((link) => link.severity === 'broken')
    .map((link) => ({
      id: !ANCHORS.has(link.element)
        ? ('broken_resource' as const)
        : link.type === 'internal'
          ? ('broken_link_internal' as const)
          : ('broken_link_external' as const),
      url: link.url,
      detail: link.statusCode !== undefined ? `answered ${link.statusCode}` : link.reason,
      sources: link.sources,
      pages: link.sources,
    }));
}
