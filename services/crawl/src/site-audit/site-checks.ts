/**
 * The checks that need the whole site: click depth and incoming links (from the pages' anchors),
 * orphans, noindex or robots-blocked pages that are linked, duplicate titles, descriptions and
 * content, canonicals to bad or canonicalised targets, hreflang return links, the sitemap's
 * entries, and broken links with the pages they are on. Pure.
 */
import { MISSING_ANCHOR } from '../checking/grade.js';
import { THRESHOLDS as T } from './catalogue.js';
import { type AuditedPage, type Finding, isIndexable, sameUrl } from './page-checks.js';

/** A checked link of the crawl, as the audit reads it (the crawl's LinkRecord with its sources). */
export interface AuditLink {
  url: string;
  type: string;
  element: string;
  severity: string;
  /** Its verdict's category (a missing fragment's is MISSING_ANCHOR). */
  category?: string;
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

/** What the per-page site checks ask of the rest of the site. */
export interface SiteView {
  entry: string;
  /** Audited pages linking to `url`. */
  incoming(url: string): number;
  /** Clicks from the entry page; undefined when no path of anchors reaches it. */
  depth(url: string): number | undefined;
  /** An audited page's record, for the URLs `lookupsOf` names. */
  page(url: string): AuditedPage | undefined;
  /** A checked link's status, for a canonical target that is not an audited page. */
  linkStatus(url: string): number | undefined;
}

/** The pages `checkSitePage` reads the records of: its canonical target and hreflang alternates. */
export function lookupsOf(page: AuditedPage): string[] {
  const urls: string[] = [];
  const canonical = page.facts?.canonical;
  if (page.status === 200 && canonical !== undefined && !sameUrl(canonical, page.url)) urls.push(canonical);
  for (const alternate of page.facts?.hreflang ?? []) if (!sameUrl(alternate.url, page.url)) urls.push(alternate.url);
  return urls;
}

/** A page's issues that need the rest of the site: depth, links to it, canonical target, hreflang return. */
export function checkSitePage(page: AuditedPage, site: SiteView): Finding[] {
  const findings: Finding[] = [];
  const add = (id: Finding['id'], detail: string) => findings.push({ id, url: page.url, detail });
  const linked = site.incoming(page.url);
  const clicks = site.depth(page.url);
  if (clicks !== undefined && clicks > T.maxClickDepth) add('deep_page', `${clicks} clicks from the start page`);
  if (page.refused && linked > 0) add('blocked_by_robots', `linked from ${linked} page(s)`);
  if (page.facts?.noindex && page.status === 200 && linked > 0) add('noindex', `linked from ${linked} page(s)`);
  if (page.fromSitemap && linked === 0 && page.status === 200 && page.url !== site.entry)
    add('orphan_page', 'no audited page links to it');
  const canonical = page.facts?.canonical;
  if (page.status === 200 && canonical !== undefined && !sameUrl(canonical, page.url)) {
    const target = site.page(canonical);
    const status = target ? target.status : site.linkStatus(canonical);
    if (target?.redirects || (status !== undefined && status !== 200))
      add('canonical_to_non200', `canonical ${canonical} answered ${target?.redirects ? 'a redirect' : status}`);
    else if (target?.facts?.canonical && !sameUrl(target.facts.canonical, canonical))
      add('canonical_chain', `canonical ${canonical} names ${target.facts.canonical}`);
  }
  for (const alternate of page.facts?.hreflang ?? []) {
    if (sameUrl(alternate.url, page.url)) continue;
    const other = site.page(alternate.url);
    if (other?.facts && other.status === 200 && !other.facts.hreflang.some((h) => sameUrl(h.url, page.url)))
      add('hreflang_no_return', `${alternate.url} (${alternate.lang}) does not link back`);
  }
  return findings;
}

export function checkSite(site: SiteFacts): { findings: Finding[]; depths: Map<string, number> } {
  const findings: Finding[] = [];
  const depths = clickDepths(site.entry, site.pages);
  const incoming = incomingLinks(site.pages);
  const byUrl = new Map(site.pages.map((p) => [p.url, p]));
  const linkStatus = new Map(site.links.map((l) => [l.url, l.statusCode]));
  const view: SiteView = {
    entry: site.entry,
    incoming: (url) => incoming.get(url) ?? 0,
    depth: (url) => depths.get(url),
    page: (url) => byUrl.get(url),
    linkStatus: (url) => linkStatus.get(url),
  };
  const duplicates = new DuplicateGroups();
  for (const page of site.pages) duplicates.note(page);
  for (const page of site.pages) findings.push(...checkSitePage(page, view));
  for (const page of site.pages) findings.push(...duplicates.findingsOf(page));
  if (!site.sitemapFound) findings.push(sitemapMissing(site.entry));
  else for (const url of new Set(site.sitemap)) findings.push(...sitemapFindings(url, byUrl.get(url)));
  findings.push(...brokenLinks(site.links), ...missingFragments(site.links));
  return { findings, depths };
}

/** Pages that share a value (title, description, body hash): how many, and the first four. */
interface Group {
  count: number;
  first: string[];
}

/**
 * Indexable pages sharing a title, a description, or their body text (without a canonical between
 * them): one pass notes each page's values, a second gives each page its findings. Holds a count
 * and four URLs per distinct value, not the pages.
 */
export class DuplicateGroups {
  private readonly by = {
    title_duplicate: new Map<string, Group>(),
    description_duplicate: new Map<string, Group>(),
    duplicate_content: new Map<string, Group>(),
  };

  private static values(page: AuditedPage) {
    return {
      title_duplicate: page.facts?.title,
      description_duplicate: page.facts?.description,
      duplicate_content: page.facts?.bodyHash,
    };
  }

  note(page: AuditedPage): void {
    if (!isIndexable(page)) return;
    for (const [id, value] of Object.entries(DuplicateGroups.values(page)) as [keyof DuplicateGroups['by'], string][]) {
      if (!value) continue;
      const groups = this.by[id];
      const group = groups.get(value) ?? { count: 0, first: [] };
      group.count++;
      if (group.first.length < 4) group.first.push(page.url);
      groups.set(value, group);
    }
  }

  findingsOf(page: AuditedPage): Finding[] {
    if (!isIndexable(page)) return [];
    const findings: Finding[] = [];
    const values = DuplicateGroups.values(page);
    const title = values.title_duplicate && this.by.title_duplicate.get(values.title_duplicate);
    if (title && title.count > 1)
      findings.push({ id: 'title_duplicate', url: page.url, detail: `same title as ${title.count - 1} other page(s)` });
    const description = values.description_duplicate && this.by.description_duplicate.get(values.description_duplicate);
    if (description && description.count > 1)
      findings.push({
        id: 'description_duplicate',
        url: page.url,
        detail: `same description as ${description.count - 1} other page(s)`,
      });
    const content = values.duplicate_content && this.by.duplicate_content.get(values.duplicate_content);
    if (content && content.count > 1)
      findings.push({
        id: 'duplicate_content',
        url: page.url,
        detail: `same content as ${content.first
          .filter((url) => url !== page.url)
          .slice(0, 3)
          .join(', ')}`,
      });
    return findings;
  }
}

export const sitemapMissing = (entry: string): Finding => ({
  id: 'sitemap_missing',
  url: entry,
  detail: 'no sitemap.xml found',
});

/** A sitemap entry's issues: not 200 or not indexable; `page` is its audited record, if any. */
export function sitemapFindings(url: string, page: AuditedPage | undefined): Finding[] {
  if (!page || page.refused) return [];
  if (page.status !== 200 || page.redirects > 0)
    return [
      {
        id: 'sitemap_non200',
        url,
        detail: page.redirects > 0 ? `redirects to ${page.finalUrl}` : `answered ${page.status ?? page.error}`,
      },
    ];
  if (page.facts && !isIndexable(page))
    return [
      {
        id: 'sitemap_non_indexable',
        url,
        detail: page.facts.noindex ? 'noindex' : `canonical is ${page.facts.canonical}`,
      },
    ];
  return [];
}

const ANCHORS = new Set(['a', 'area']);

/** Each broken link or resource, with the pages it is on. */
export function brokenLinks(links: readonly AuditLink[]): Finding[] {
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

/** Each link to a page of the site (or an in-page anchor) whose fragment the page lacks, with the pages it is on. */
export function missingFragments(links: readonly AuditLink[]): Finding[] {
  return links
    .filter((link) => link.category === MISSING_ANCHOR)
    .map((link) => ({
      id: 'missing_fragment' as const,
      url: link.url,
      detail: link.reason,
      sources: link.sources,
      pages: link.sources,
    }));
}
