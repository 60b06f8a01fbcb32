/**
 * The checks one page answers alone, from its fetch and its facts (page-facts.ts): status,
 * redirects, head metadata, headings, language, hreflang codes, JSON-LD, images, mixed content,
 * size and time to first byte. Pure: a page in, its findings out.
 */
import type { IssueId } from './catalogue.js';
import { THRESHOLDS as T } from './catalogue.js';
import type { PageFacts } from './page-facts.js';

/** One audited page as the checks see it. */
export interface AuditedPage {
  /** The URL crawled (normalised). */
  url: string;
  /** Breadth-first crawl depth (a sitemap page is 1). */
  depth: number;
  fromSitemap: boolean;
  /** Final status; undefined when nothing answered. */
  status?: number;
  /** Why nothing answered (a network error, a time-out). */
  error?: string;
  redirects: number;
  redirectTrouble?: 'loop' | 'too_many';
  finalUrl?: string;
  /** robots.txt kept the crawl from it. */
  refused: boolean;
  /** Facts of its HTML; undefined when it was not read as a page (an error, a redirect elsewhere). */
  facts?: PageFacts;
  /** The site's pages it links to with an anchor (normalised, each once, itself left out). */
  links: string[];
  /**
   * Every link and resource on it (`<type> <url>`, each once): a distributed audit finds a broken
   * link's pages from these (site-audit/distributed/); absent from the one-worker crawl's records.
   */
  outLinks?: string[];
}

/** An issue found on one URL. */
export interface Finding {
  id: IssueId;
  /** The page (or, for a broken link, the link) the issue is on. */
  url: string;
  detail: string;
  /** A broken link's pages. */
  sources?: string[];
  /** Pages the finding counts toward (a broken link's linking pages); absent: `url` itself. */
  pages?: string[];
}

/** A page answered 200, was read as HTML, and asks to be indexed under its own URL. */
export function isIndexable(page: AuditedPage): boolean {
  const facts = page.facts;
  if (page.status !== 200 || page.redirects > 0 || !facts || facts.noindex) return false;
  return facts.canonical === undefined || sameUrl(facts.canonical, page.url);
}

export function sameUrl(a: string, b: string): boolean {
  return a === b || a.replace(/\/$/, '') === b.replace(/\/$/, '');
}

const LANGUAGE_NAMES = new Intl.DisplayNames(['en'], { type: 'language', fallback: 'none' });
const REGION_NAMES = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });

/** An hreflang value: x-default, or an ISO 639 language with an optional script and ISO 3166-1 region. */
export function validHreflang(value: string): boolean {
  if (value.toLowerCase() === 'x-default') return true;
  const match = /^([a-z]{2,3})(?:-([a-z]{4}))?(?:-([a-z]{2}|\d{3}))?$/i.exec(value);
  if (!match) return false;
  const [, language, , region] = match as unknown as [string, string, string | undefined, string | undefined];
  try {
    if (LANGUAGE_NAMES.of(language.toLowerCase()) === undefined) return false;
    if (region && /^[a-z]{2}$/i.test(region) && REGION_NAMES.of(region.toUpperCase()) === undefined) return false;
  } catch {
    return false;
  }
  // "UK" is reserved, not a region: hreflang wants GB.
  return region?.toUpperCase() !== 'UK';
}

/** The issues a page has on its own. */
export function checkPage(page: AuditedPage): Finding[] {
  const found: Finding[] = [];
  const add = (id: IssueId, detail: string) => found.push({ id, url: page.url, detail });
  if (page.refused) return found;
  if (page.redirectTrouble) {
    add('redirect_loop', page.redirectTrouble === 'loop' ? 'redirects in a loop' : 'too many redirects');
    return found;
  }
  if (page.status === undefined) {
    add('http_5xx', page.error ?? 'no answer');
    return found;
  }
  if (page.status >= 500) add('http_5xx', `answered ${page.status}`);
  else if (page.status >= 400) add('http_4xx', `answered ${page.status}`);
  if (page.redirects >= 2) add('redirect_chain', `${page.redirects} hops to ${page.finalUrl ?? '?'}`);
  const facts = page.facts;
  if (!facts || page.status !== 200) return found;
  if (facts.ttfbMs > T.slowTtfbMs) add('slow_ttfb', `first byte after ${facts.ttfbMs} ms`);
  if (facts.htmlChars > T.heavyPageChars) add('page_too_heavy', `${facts.htmlChars} characters of HTML`);
  if (page.redirects > 0) return found; // the content is the target's, audited there
  const title = facts.title ?? '';
  if (!title) add('title_missing', facts.title === undefined ? 'no <title>' : 'empty <title>');
  else if (title.length > T.titleMaxChars) add('title_too_long', `title is ${title.length} characters`);
  else if (title.length < T.titleMinChars) add('title_too_short', `title is ${title.length} characters`);
  const description = facts.description ?? '';
  if (!description) add('description_missing', 'no meta description');
  else if (description.length > T.descriptionMaxChars)
    add('description_too_long', `description is ${description.length} characters`);
  else if (description.length < T.descriptionMinChars)
    add('description_too_short', `description is ${description.length} characters`);
  if (facts.h1Count === 0) add('h1_missing', 'no <h1>');
  else if (facts.h1Count > 1) add('h1_multiple', `${facts.h1Count} <h1> elements`);
  if (!facts.lang) add('lang_missing', 'no lang on <html>');
  if (facts.canonical === undefined) add('canonical_missing', 'no <link rel="canonical">');
  else if (!sameUrl(facts.canonical, page.url)) add('canonicalised', `canonical is ${facts.canonical}`);
  for (const alternate of facts.hreflang)
    if (!validHreflang(alternate.lang)) add('hreflang_invalid_code', `hreflang="${alternate.lang}"`);
  if (facts.jsonLdInvalid > 0) add('jsonld_invalid', `${facts.jsonLdInvalid} JSON-LD block(s) do not parse`);
  if (facts.imagesWithoutAlt > 0)
    add('image_missing_alt', `${facts.imagesWithoutAlt} image(s) without alt: ${facts.imagesWithoutAltSrc[0] ?? ''}`);
  if (facts.mixedContent.length > 0)
    add('mixed_content', `${facts.mixedContent.length} http: resource(s): ${facts.mixedContent[0]}`);
  return found;
}
