import { type OriginHeaders, OutboundError, type SafeHttp } from '@webutil/kit';
import type { FoundLink } from '../model.js';
import { readCss } from './css-links.js';
import { LinkCollector } from './links.js';
import { normalizePageUrl } from './page-url.js';

/** Stylesheets of the site read at most per scan (one page's check, or a whole crawl). */
export const MAX_STYLESHEETS = 64;
/** `@import` levels followed below a stylesheet a page links. */
export const MAX_IMPORT_DEPTH = 4;

/** GETs a stylesheet: its CSS (bounded) and the URL it came from, or undefined when it has none. */
export type CssFetch = (url: string) => Promise<{ css: string; url: string } | undefined>;

const STYLESHEET_REL = /(?:^|\s)stylesheet(?:\s|$)/i;

/** A `<link rel=stylesheet>`, or an `@import` in a `<style>` block or a stylesheet. */
export function isStylesheet(link: FoundLink): boolean {
  if (link.element === 'link') return STYLESHEET_REL.test(link.rel ?? '');
  return (link.element === 'style' || link.element === 'css') && link.rel === '@import';
}

/** The URLs of a stylesheet's CSS as `css` links, resolved against its URL, the stylesheet their text. */
export function stylesheetLinks(css: string, sheet: URL, cap: number, byDocument: boolean): FoundLink[] {
  const collector = new LinkCollector(sheet, cap, byDocument, true);
  collector.addCss(css, 'css', sheet.href);
  return collector.links;
}

/**
 * Reads the site's stylesheets a scan's pages link (and those they `@import`), each once per scan,
 * and hands out the links in them: the first page to link a stylesheet gets its links, later ones
 * none (they are the same links). Other sites' stylesheets are checked, never read.
 */
export class StylesheetReader {
  private readonly started = new Set<string>();

  constructor(
    private readonly fetchCss: CssFetch,
    private readonly linksPerSheet: number,
    private readonly byDocument: boolean,
    private readonly signal: AbortSignal,
  ) {}

  async linksOf(links: readonly FoundLink[], depth = 0): Promise<FoundLink[]> {
    if (depth > MAX_IMPORT_DEPTH) return [];
    const urls: string[] = [];
    for (const link of links) {
      if (!isStylesheet(link) || link.type !== 'internal') continue;
      const url = normalizePageUrl(link.url);
      if (this.started.has(url) || this.started.size >= MAX_STYLESHEETS) continue;
      this.started.add(url);
      urls.push(url);
    }
    const found = await Promise.all(
      urls.map(async (url) => {
        const sheet = await this.fetchCss(url).catch((err: unknown) => {
          if (this.signal.aborted) return undefined; // out of time: its links are not read
          throw err;
        });
        if (!sheet) return [];
        const own = stylesheetLinks(sheet.css, new URL(sheet.url), this.linksPerSheet, this.byDocument);
        return [...own, ...(await this.linksOf(own, depth + 1))];
      }),
    );
    return found.flat();
  }
}

/** A CssFetch straight through the outbound client (link extraction, which checks nothing). */
export function fetchCssWith(
  http: SafeHttp,
  options: { timeoutMs: number; maxBodyBytes: number; originHeaders?: OriginHeaders },
  signal: AbortSignal,
): CssFetch {
  return async (url) => {
    try {
      const res = await http.fetch(new URL(url), { ...options, maxRedirects: 10, signal });
      try {
        return res.status >= 200 && res.status < 300 ? { css: await readCss(res), url: res.url } : undefined;
      } finally {
        await res.dump();
      }
    } catch (err) {
      if (err instanceof OutboundError && !signal.aborted) return undefined; // unreachable: nothing to read
      throw err;
    }
  };
}

/** Page links and stylesheet links as one list, each link once (the page's record first). */
export function withStylesheetLinks(page: FoundLink[], sheets: readonly FoundLink[]): FoundLink[] {
  const seen = new Set(page.map((link) => `${link.type} ${link.url}`));
  for (const link of sheets) {
    const key = `${link.type} ${link.url}`;
    if (seen.has(key)) continue;
    seen.add(key);
    page.push(link);
  }
  return page;
}
