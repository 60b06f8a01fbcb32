import { Parser } from 'htmlparser2';
import { addTargets } from './fragments.js';

/** Link types of the spec's link records and link items. */
export type LinkType = 'internal' | 'external' | 'mailto' | 'tel' | 'anchor' | 'other';

export interface FoundLink {
  /** Resolved absolute URL; the raw href for non-HTTP schemes. */
  url: string;
  originalHref: string;
  text: string;
  rel: string | undefined;
  type: LinkType;
  /** URL scheme without the colon. */
  scheme: string;
}

/** Counted types; in-page anchors and non-HTTP schemes (script, data, ...) are found but not counted. */
export const COUNTED_TYPES: readonly LinkType[] = ['internal', 'external', 'mailto', 'tel'];

const MAX_TEXT = 500;

/** Host equality that treats www.example.com and example.com as one site. */
export function sameSite(a: URL, b: URL): boolean {
  const strip = (host: string) => host.replace(/^www\./, '');
  return strip(a.hostname) === strip(b.hostname);
}

/** Resolves and types one href as authored; undefined for an empty href (it names nothing). */
export function classifyHref(href: string, base: URL, page: URL): Omit<FoundLink, 'text' | 'rel' | 'originalHref'> | undefined {
  const trimmed = href.trim();
  if (!trimmed) return undefined;
  if (trimmed.startsWith('#')) return { url: new URL(trimmed, base).href, type: 'anchor', scheme: base.protocol.slice(0, -1) };
  let resolved: URL;
  try {
    resolved = new URL(trimmed, base);
  } catch {
    return { url: trimmed, type: 'other', scheme: /^([a-z][a-z0-9+.-]*):/i.exec(trimmed)?.[1]?.toLowerCase() ?? '' };
  }
  const scheme = resolved.protocol.slice(0, -1);
  if (scheme === 'http' || scheme === 'https') return { url: resolved.href, type: sameSite(resolved, page) ? 'internal' : 'external', scheme };
  if (scheme === 'mailto' || scheme === 'tel') return { url: trimmed, type: scheme, scheme };
  return { url: trimmed, type: 'other', scheme };
}

interface OpenAnchor {
  href: string;
  rel: string | undefined;
  text: string[];
  /** Alt text of the first image inside, used when the anchor has no text. */
  imageAlt: string | undefined;
  /** aria-label or title, the last resort for a name. */
  label: string | undefined;
}

/**
 * Streaming link collector over htmlparser2: feed decoded chunks, read `links` at any time.
 * Links are de-duplicated by type and resolved URL (the first anchor's text and rel are kept);
 * `<base href>` applies to the links after it, as it does in the document's head. Once more than
 * `cap` distinct links are seen, `full` turns true and the caller can stop reading. Element ids
 * and anchor names are collected on the way, for checking `#fragment` links.
 */
export class LinkCollector {
  readonly links: FoundLink[] = [];
  readonly targets = new Set<string>();
  /** Whether a link beyond the cap was seen. */
  full = false;
  private readonly seen = new Set<string>();
  private readonly parser: Parser;
  private base: URL;
  private baseSet = false;
  private anchor: OpenAnchor | undefined;
  private skipDepth = 0;

  constructor(
    private readonly page: URL,
    private readonly cap: number,
  ) {
    this.base = page;
    this.parser = new Parser(
      {
        onopentag: (name, attrs) => this.open(name, attrs),
        onclosetag: (name) => this.close(name),
        ontext: (text) => {
          if (this.anchor && this.skipDepth === 0) this.anchor.text.push(text);
        },
      },
      { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
    );
  }

  write(chunk: string): void {
    if (!this.full) this.parser.write(chunk);
  }

  end(): void {
    if (!this.full) this.parser.end();
    if (this.anchor) this.finishAnchor();
  }

  private open(name: string, attrs: Record<string, string>): void {
    addTargets(name, attrs, this.targets);
    switch (name) {
      case 'base':
        if (!this.baseSet && attrs.href !== undefined) {
          this.baseSet = true;
          try {
            this.base = new URL(attrs.href, this.page);
          } catch {
            // An unusable base leaves the page URL as the base, as browsers do.
          }
        }
        break;
      case 'a':
        if (this.skipDepth > 0) break;
        if (this.anchor) this.finishAnchor(); // <a> cannot nest: a new one closes the open one
        if (attrs.href !== undefined) this.anchor = { href: attrs.href, rel: attrs.rel, text: [], imageAlt: undefined, label: attrs['aria-label'] ?? attrs.title };
        break;
      case 'area':
        if (this.skipDepth === 0 && attrs.href !== undefined) this.add(attrs.href, attrs.rel, attrs.alt ?? attrs['aria-label'] ?? '');
        break;
      case 'img':
        if (this.anchor && this.anchor.imageAlt === undefined && attrs.alt) this.anchor.imageAlt = attrs.alt;
        break;
      case 'script':
      case 'style':
      case 'template':
        this.skipDepth++;
        break;
    }
  }

  private close(name: string): void {
    if (name === 'a' && this.anchor) this.finishAnchor();
    else if ((name === 'script' || name === 'style' || name === 'template') && this.skipDepth > 0) this.skipDepth--;
  }

  private finishAnchor(): void {
    const anchor = this.anchor;
    this.anchor = undefined;
    if (!anchor) return;
    const text = collapse(anchor.text.join(''));
    this.add(anchor.href, anchor.rel, text || collapse(anchor.imageAlt ?? anchor.label ?? ''));
  }

  private add(href: string, rel: string | undefined, text: string): void {
    if (this.full) return;
    const classified = classifyHref(href, this.base, this.page);
    if (!classified) return;
    const key = `${classified.type} ${classified.url}`;
    if (this.seen.has(key)) return;
    if (this.links.length >= this.cap) {
      this.full = true;
      return;
    }
    this.seen.add(key);
    this.links.push({ ...classified, originalHref: href, text: text.slice(0, MAX_TEXT), rel: rel === undefined ? undefined : collapse(rel) });
  }
}

function collapse(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

export function countLinks(links: readonly FoundLink[]) {
  const counts = { total: 0, internal: 0, external: 0, mailto: 0, tel: 0 };
  for (const link of links) {
    if (link.type === 'anchor' || link.type === 'other') continue;
    counts[link.type]++;
    counts.total++;
  }
  return counts;
}
