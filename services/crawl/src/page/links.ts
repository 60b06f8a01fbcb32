import { BoundedParser, HTML_OPTIONS } from '@webutil/kit/html';
import type { FoundLink, LinkCounts, LinkType } from '../model.js';
import { cssUrls, MAX_CSS_CHARS } from './css-links.js';
import { addTargets, checkableFragment, MAX_TARGETS_PER_PAGE, PageTargets } from './fragments.js';

/** What a reader is told of a page as it is parsed (htmlparser2's events that readers here use). */
export interface ParseEvents {
  onopentag(name: string, attrs: Record<string, string>): void;
  onclosetag(name: string): void;
  ontext(text: string): void;
}

const MAX_TEXT = 500;
const MAX_REL = 200;
/**
 * Longest href, and longest URL it resolves to, that is reported. Longer ones are dropped (and
 * the page's list says `truncated`): servers refuse request lines past about 8 KiB anyway, and a
 * `<base href>` of megabytes would otherwise make every link on the page that long.
 */
export const MAX_HREF = 8 * 1024;
/**
 * UTF-8 bytes of link fields (URL, href, text, rel) kept from one page at most: with MAX_HREF
 * and the link cap alone a page could still yield ~85 MB, past gRPC's 64 MiB message limit.
 */
export const MAX_LINK_BYTES = 8 * 1024 * 1024;
/** Distinct fragments kept per link (docs/decisions/0211-link-identity-without-fragment.md). */
export const MAX_FRAGMENTS_PER_LINK = 25;
/**
 * Fragments kept from one page at most, over all its links: as many as the ids a page keeps
 * (PageTargets). Each is a row in a distributed audit's store; a page of thousands of links with
 * 25 fragments each would otherwise write a row for each, and both audit engines read the same cut.
 */
export const MAX_FRAGMENTS_PER_PAGE = MAX_TARGETS_PER_PAGE;

/** Elements whose URL is a resource (what the page loads or names), not a link to follow. */
export const RESOURCE_ELEMENTS = [
  'img',
  'source',
  'script',
  'link',
  'iframe',
  'video',
  'audio',
  'track',
  'embed',
  'object',
  'input',
  'image',
  'use',
  'meta',
  'json-ld',
  'style',
  'css',
];
/**
 * `<link rel>` tokens whose href is checked: what the page loads (docs/decisions/0214) and what it
 * names as another form of itself (canonical, alternate, amphtml, next/prev: decision 0302).
 */
const CHECKED_REL_NAMES = [
  'stylesheet',
  'icon',
  'preload',
  'modulepreload',
  'manifest',
  'apple-touch-icon',
  'apple-touch-icon-precomposed',
  'mask-icon',
  'canonical',
  'alternate',
  'amphtml',
  'next',
  'prev',
];
const CHECKED_RELS = new RegExp(`(?:^|\\s)(?:${CHECKED_REL_NAMES.join('|')})(?:\\s|$)`, 'i');
/** `<meta property|name>` whose content is a URL (Open Graph, Twitter cards). */
const URL_METAS = new Set([
  'og:url',
  'og:image',
  'og:image:url',
  'og:image:secure_url',
  'og:video',
  'og:video:url',
  'og:video:secure_url',
  'og:audio',
  'twitter:image',
  'twitter:image:src',
  'twitter:player',
]);
/** JSON-LD keys whose string values (or arrays of them) are URLs (schema.org). */
const JSON_LD_URL_KEYS = new Set([
  'url',
  'image',
  'logo',
  'sameAs',
  'thumbnailUrl',
  'contentUrl',
  'embedUrl',
  'mainEntityOfPage',
  'photo',
  'screenshot',
]);
/** Characters of one JSON-LD block read at most; a longer block is skipped (its links not read). */
const MAX_JSON_LD_CHARS = 256 * 1024;
/** URLs taken from one JSON-LD block at most, and nesting walked at most. */
const MAX_JSON_LD_URLS = 200;
const MAX_JSON_LD_DEPTH = 32;
/** Resource URLs that name nothing to fetch: inline data and the page's own objects. */
const NOT_FETCHED = /^\s*(?:data|blob|javascript|about):/i;

/** Whether a link's element is a resource (its URL is checked, never followed as a page). */
export const isResource = (element: string): boolean => element !== 'a' && element !== 'area';

/**
 * The URLs of a srcset attribute's image candidates, as the HTML standard splits them: a URL runs
 * to the next whitespace, trailing commas end it, and a candidate's descriptors (whose
 * parentheses may hold commas) run to the next comma outside parentheses.
 */
export function srcsetUrls(srcset: string): string[] {
  const urls: string[] = [];
  const space = /[\t\n\f\r ]/;
  let i = 0;
  const n = srcset.length;
  while (i < n) {
    while (i < n && (space.test(srcset[i] as string) || srcset[i] === ',')) i++;
    if (i >= n) break;
    const start = i;
    while (i < n && !space.test(srcset[i] as string)) i++;
    let url = srcset.slice(start, i);
    let ended = false;
    if (url.endsWith(',')) {
      url = url.replace(/,+$/, '');
      ended = true;
    }
    if (url) urls.push(url);
    if (ended) continue;
    let depth = 0;
    for (; i < n; i++) {
      const c = srcset[i];
      if (c === '(') depth++;
      else if (c === ')') depth = Math.max(0, depth - 1);
      else if (c === ',' && depth === 0) break;
    }
  }
  return urls;
}

/** Host equality that treats www.example.com and example.com as one site. */
export function sameSite(a: URL, b: URL): boolean {
  const strip = (host: string) => host.replace(/^www\./, '');
  return strip(a.hostname) === strip(b.hostname);
}

/** Resolves and types one href as authored; undefined for an empty href (it names nothing). */
export function classifyHref(
  href: string,
  base: URL,
  page: URL,
): Omit<FoundLink, 'text' | 'rel' | 'originalHref' | 'element'> | undefined {
  const trimmed = href.trim();
  if (!trimmed) return undefined;
  if (trimmed.startsWith('#'))
    return { url: new URL(trimmed, base).href, type: 'anchor', scheme: base.protocol.slice(0, -1) };
  let resolved: URL;
  try {
    resolved = new URL(trimmed, base);
  } catch {
    // A reference without a scheme of its own (`//`, `//////`) is the base's: an http(s) link that
    // does not parse, graded broken ("Invalid URL", docs/grading.md), not a link of an unknown scheme.
    const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(trimmed)?.[1]?.toLowerCase() ?? base.protocol.slice(0, -1);
    return { url: trimmed, type: 'other', scheme };
  }
  const scheme = resolved.protocol.slice(0, -1);
  if (scheme === 'http' || scheme === 'https')
    return { url: resolved.href, type: sameSite(resolved, page) ? 'internal' : 'external', scheme };
  if (scheme === 'mailto' || scheme === 'tel') return { url: trimmed, type: scheme, scheme };
  return { url: trimmed, type: 'other', scheme };
}

interface OpenAnchor {
  href: string;
  rel: string | undefined;
  text: string[];
  /** Characters in `text`; collection stops past what a record keeps. */
  textLength: number;
  /** Alt text of the first image inside, used when the anchor has no text. */
  imageAlt: string | undefined;
  /** aria-label or title, the last resort for a name. */
  label: string | undefined;
}

/**
 * Streaming link collector over htmlparser2: feed decoded chunks, read `links` at any time.
 * Links are de-duplicated by type and resolved URL (the first anchor's text and rel are kept);
 * `<base href>` applies to the links after it, as it does in the document's head. Once more than
 * `cap` distinct links or MAX_LINK_BYTES are seen, or the markup nests too deep to parse further,
 * `done` turns true and the caller can stop reading; `truncated` also counts links dropped as too
 * long. Element ids and anchor names are collected on the way, for checking `#fragment` links.
 */
export class LinkCollector {
  readonly links: FoundLink[] = [];
  readonly targets = new PageTargets();
  /** Whether a link beyond the cap or the byte budget was seen (the rest of the page is not read). */
  full = false;
  /** Links not reported because their href or URL is longer than MAX_HREF. */
  tooLong = 0;
  /** The document given was cut short before it reached the parser (a Markdown page past its cap). */
  private cut = false;
  private bytes = 0;
  /** Fragments kept over the page's links (at most MAX_FRAGMENTS_PER_PAGE). */
  private fragmentsKept = 0;
  private readonly seen = new Map<string, FoundLink>();
  private readonly events: ParseEvents;
  private parser: BoundedParser;
  /** The parser is a reader's, shared with it (parseWith): that reader feeds and ends it. */
  private shared = false;
  private base: URL;
  private baseSet = false;
  private anchor: OpenAnchor | undefined;
  private skipDepth = 0;
  /** The text of the JSON-LD block being read, undefined outside one (or past its size cap). */
  private jsonLd: string[] | undefined;
  private jsonLdChars = 0;
  /** The CSS of the `<style>` block being read (its first MAX_CSS_CHARS), undefined outside one. */
  private style: string[] | undefined;
  private styleChars = 0;

  /**
   * `byDocument`: a link to another page is one link per URL without its fragment (what link
   * checking means by one); its distinct fragments are gathered in `fragments`. `resources`: the
   * URLs of images, scripts, stylesheets and the like are links too (their `element` says which).
   */
  constructor(
    private readonly page: URL,
    private readonly cap: number,
    private readonly byDocument = false,
    private readonly resources = false,
  ) {
    this.base = page;
    this.events = {
      onopentag: (name, attrs) => this.open(name, attrs),
      onclosetag: (name) => this.close(name),
      ontext: (text) => {
        if (this.jsonLd) {
          this.jsonLdChars += text.length;
          if (this.jsonLdChars > MAX_JSON_LD_CHARS) this.jsonLd = undefined;
          else this.jsonLd.push(text);
          return;
        }
        if (this.style) {
          if (this.styleChars < MAX_CSS_CHARS) this.style.push(text.slice(0, MAX_CSS_CHARS - this.styleChars));
          this.styleChars += text.length;
          return;
        }
        const anchor = this.anchor;
        if (!anchor || this.skipDepth > 0 || anchor.textLength > MAX_TEXT * 2) return;
        anchor.text.push(text.slice(0, MAX_TEXT * 2));
        anchor.textLength += text.length;
      },
    };
    this.parser = new BoundedParser(this.events, HTML_OPTIONS);
  }

  /**
   * A parser of the page for this collector and another reader (a site audit's page facts), so
   * that the page is tokenized once: the reader writes the text to it and ends it, not to this
   * collector, and this collector is given the events until it is done.
   */
  parseWith(other: ParseEvents): BoundedParser {
    const mine = this.events;
    this.shared = true;
    this.parser = new BoundedParser(
      {
        onopentag: (name, attrs) => {
          if (!this.done) mine.onopentag(name, attrs);
          other.onopentag(name, attrs);
        },
        onclosetag: (name) => {
          if (!this.done) mine.onclosetag(name);
          other.onclosetag(name);
        },
        ontext: (text) => {
          if (!this.done) mine.ontext(text);
          other.ontext(text);
        },
      },
      HTML_OPTIONS,
    );
    return this.parser;
  }

  /** Some links of the page are not in `links`: it was not read to its end, or links were too long. */
  get truncated(): boolean {
    return this.done || this.tooLong > 0 || this.cut;
  }

  /** The text fed was not the whole document: its links and targets are incomplete. */
  cutShort(): void {
    this.cut = true;
    this.targets.complete = false;
  }

  /** The page was not read to its end: the link cap or byte budget was reached, or it nested too deep. */
  get done(): boolean {
    return this.full || this.parser.tooDeep;
  }

  write(chunk: string): void {
    if (!this.done && !this.shared) this.parser.write(chunk);
  }

  end(): void {
    if (!this.done && !this.shared) this.parser.end();
    if (this.done) this.targets.complete = false;
    if (this.anchor) this.finishAnchor();
    this.targets.seal();
  }

  private open(name: string, attrs: Record<string, string>): void {
    addTargets(name, attrs, this.targets);
    if (attrs.style !== undefined) this.addCss(attrs.style, 'style');
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
        if (attrs.href !== undefined)
          this.anchor = {
            href: attrs.href,
            rel: attrs.rel,
            text: [],
            textLength: 0,
            imageAlt: undefined,
            label: attrs['aria-label'] ?? attrs.title,
          };
        break;
      case 'area':
        if (this.skipDepth === 0 && attrs.href !== undefined)
          this.add(attrs.href, attrs.rel, attrs.alt ?? attrs['aria-label'] ?? '', 'area');
        break;
      case 'img':
        if (this.anchor && this.anchor.imageAlt === undefined && attrs.alt) this.anchor.imageAlt = attrs.alt;
        this.resource(name, attrs.src, attrs.alt);
        this.srcset(name, attrs.srcset, attrs.alt);
        break;
      case 'source':
        this.resource(name, attrs.src);
        this.srcset(name, attrs.srcset);
        break;
      case 'iframe':
        this.resource(name, attrs.src, attrs.title);
        break;
      case 'video':
        this.resource(name, attrs.src);
        this.resource(name, attrs.poster, '', 'poster');
        break;
      case 'audio':
      case 'track':
      case 'embed':
        this.resource(name, attrs.src);
        break;
      case 'input':
        if (attrs.type?.trim().toLowerCase() === 'image') this.resource(name, attrs.src, attrs.alt);
        break;
      case 'image': // SVG
      case 'use':
        this.resource(name, attrs.href ?? attrs['xlink:href']);
        break;
      case 'object':
        this.resource(name, attrs.data);
        break;
      case 'link':
        if (attrs.rel !== undefined && CHECKED_RELS.test(attrs.rel))
          this.resource(name, attrs.href, attrs.hreflang ?? '', attrs.rel);
        break;
      case 'meta':
        this.meta(attrs);
        break;
      case 'script':
        this.resource(name, attrs.src);
        if (this.resources && this.skipDepth === 0 && /^\s*application\/ld\+json\s*$/i.test(attrs.type ?? '')) {
          this.jsonLd = [];
          this.jsonLdChars = 0;
        }
        this.skipDepth++;
        break;
      case 'style':
        if (this.resources && this.skipDepth === 0) {
          this.style = [];
          this.styleChars = 0;
        }
        this.skipDepth++;
        break;
      case 'template':
        this.skipDepth++;
        break;
    }
  }

  /**
   * The URLs of a piece of CSS as resources of `element`: `style` for the page's style attributes
   * and `<style>` blocks, `css` for a stylesheet's (whose URL is the record's text). Rel is
   * `@import` or the property naming the URL (`background-image`, `src`...).
   */
  addCss(css: string, element: 'style' | 'css', text = ''): void {
    if (!this.resources || this.skipDepth > 0 || this.full) return;
    for (const { url, rel } of cssUrls(css)) this.resource(element, url, text, rel);
  }

  /** A resource URL of an element, when resources are collected (none inside a template). */
  private resource(element: string, url: string | undefined, text = '', rel?: string): void {
    if (!this.resources || this.skipDepth > 0 || url === undefined || NOT_FETCHED.test(url)) return;
    this.add(url, rel, collapse(text.slice(0, MAX_TEXT * 2)), element);
  }

  /** Open Graph and Twitter card URLs, and a refresh's target (`<meta http-equiv=refresh content="5; url=...">`). */
  private meta(attrs: Record<string, string>): void {
    const name = (attrs.property ?? attrs.name)?.trim().toLowerCase();
    if (name !== undefined && URL_METAS.has(name)) this.resource('meta', attrs.content?.trim(), '', name);
    else if (attrs['http-equiv']?.trim().toLowerCase() === 'refresh' && attrs.content !== undefined) {
      const target = refreshTarget(attrs.content);
      if (target !== undefined) this.resource('meta', target, '', 'refresh');
    }
  }

  /** The URLs of a JSON-LD block's URL-valued keys, as `json-ld` links whose rel is the key. */
  private readJsonLd(text: string): void {
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch {
      return; // not JSON: a browser would not read it either
    }
    let taken = 0;
    // `outer`: the URL key of an object being walked ({"logo": {"@type": "ImageObject", "url": ...}} is a logo).
    const walk = (value: unknown, key: string | undefined, outer: string | undefined, depth: number): void => {
      if (taken >= MAX_JSON_LD_URLS || depth > MAX_JSON_LD_DEPTH) return;
      if (typeof value === 'string') {
        if (key !== undefined && JSON_LD_URL_KEYS.has(key) && /^(?:https?:)?\/\//i.test(value.trim())) {
          taken++;
          this.resource('json-ld', value.trim(), '', outer ?? key);
        }
      } else if (Array.isArray(value)) {
        for (const item of value) walk(item, key, outer, depth + 1);
      } else if (value && typeof value === 'object') {
        const named = key !== undefined && JSON_LD_URL_KEYS.has(key) ? key : undefined;
        for (const [k, v] of Object.entries(value)) walk(v, k, named, depth + 1);
      }
    };
    walk(data, undefined, undefined, 0);
  }

  private srcset(element: string, srcset: string | undefined, text = ''): void {
    if (!this.resources || this.skipDepth > 0 || !srcset) return;
    for (const url of srcsetUrls(srcset.slice(0, MAX_HREF * 4))) this.resource(element, url, text);
  }

  private close(name: string): void {
    if (name === 'script' && this.jsonLd) {
      const text = this.jsonLd.join('');
      this.jsonLd = undefined;
      this.skipDepth--; // the block's own depth: its URLs are read outside it
      this.readJsonLd(text);
      this.skipDepth++;
    }
    if (name === 'style' && this.style) {
      const css = this.style.join('');
      this.style = undefined;
      this.skipDepth--; // the block's own depth: its URLs are read outside it
      this.addCss(css, 'style');
      this.skipDepth++;
    }
    if (name === 'a' && this.anchor) this.finishAnchor();
    else if ((name === 'script' || name === 'style' || name === 'template') && this.skipDepth > 0) this.skipDepth--;
  }

  private finishAnchor(): void {
    const anchor = this.anchor;
    this.anchor = undefined;
    if (!anchor) return;
    const text = collapse(anchor.text.join(''));
    this.add(
      anchor.href,
      anchor.rel,
      text || collapse((anchor.imageAlt ?? anchor.label ?? '').slice(0, MAX_TEXT * 2)),
      'a',
    );
  }

  private add(href: string, rel: string | undefined, text: string, element: string): void {
    if (this.full) return;
    if (href.length > MAX_HREF) {
      this.tooLong++;
      return;
    }
    const classified = classifyHref(href, this.base, this.page);
    if (!classified) return;
    const resource = isResource(element);
    // A resource is something to fetch: an in-page anchor or a mailto: names nothing to load.
    if (resource && classified.type !== 'internal' && classified.type !== 'external' && classified.type !== 'other')
      return;
    if (classified.url.length > MAX_HREF) {
      this.tooLong++;
      return;
    }
    let fragment: string | undefined;
    if (this.byDocument && (classified.type === 'internal' || classified.type === 'external')) {
      fragment = checkableFragment(classified.url);
      classified.url = withoutFragment(classified.url);
    }
    const key = `${classified.type} ${classified.url}`;
    const known = this.seen.get(key);
    if (known) {
      if (fragment !== undefined) this.keepFragment(known, fragment);
      if (!resource) known.viaAnchor = true;
      return;
    }
    // Each field named: a spread followed by more fields takes V8's slow path (Node 20).
    const link: FoundLink = {
      url: classified.url,
      type: classified.type,
      scheme: classified.scheme,
      originalHref: href,
      text: text.slice(0, MAX_TEXT),
      rel: rel === undefined ? undefined : collapse(rel.slice(0, MAX_REL * 2)).slice(0, MAX_REL),
      element,
    };
    if (!resource) link.viaAnchor = true;
    const bytes = linkBytes(link);
    if (this.links.length >= this.cap || this.bytes + bytes > MAX_LINK_BYTES) {
      this.full = true;
      return;
    }
    this.bytes += bytes;
    this.seen.set(key, link);
    if (fragment !== undefined) this.keepFragment(link, fragment);
    this.links.push(link);
  }

  private keepFragment(link: FoundLink, fragment: string): void {
    if (this.fragmentsKept < MAX_FRAGMENTS_PER_PAGE && addFragment(link, fragment)) this.fragmentsKept++;
  }
}

/**
 * The URL of a `<meta http-equiv=refresh>` content (`5; url=/next`, `0;URL='/next'`), as the HTML
 * standard reads it; undefined when it names none (a plain reload).
 */
export function refreshTarget(content: string): string | undefined {
  const match = /^\s*[\d.]*\s*[;,]?\s*(?:url\s*=\s*)?(.*)$/is.exec(content.slice(0, MAX_HREF * 2));
  let url = match?.[1]?.trim() ?? '';
  const quote = url[0];
  if (quote === '"' || quote === "'") {
    const end = url.indexOf(quote, 1);
    url = end < 0 ? url.slice(1) : url.slice(1, end);
  }
  return url.trim() || undefined;
}

/** A URL without its fragment (the WHATWG serialisation puts `#` only there). */
export function withoutFragment(url: string): string {
  const hash = url.indexOf('#');
  return hash < 0 ? url : url.slice(0, hash);
}

/** Adds a fragment to the link's distinct fragments, up to MAX_FRAGMENTS_PER_LINK; true when added. */
export function addFragment(link: FoundLink, fragment: string): boolean {
  if (!link.fragments) link.fragments = [];
  const fragments = link.fragments;
  if (fragments.length >= MAX_FRAGMENTS_PER_LINK || fragment.length > MAX_HREF || fragments.includes(fragment))
    return false;
  fragments.push(fragment);
  return true;
}

/** UTF-8 bytes of a link's strings: what it weighs in a reply or a stored result. */
export function linkBytes(link: FoundLink): number {
  return (
    Buffer.byteLength(link.url) +
    Buffer.byteLength(link.originalHref) +
    Buffer.byteLength(link.text) +
    link.element.length +
    (link.rel === undefined ? 0 : Buffer.byteLength(link.rel))
  );
}

function collapse(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** Whether a link counts in `counts` (the spec: in-page anchors and non-HTTP schemes do not). */
export function isCounted(type: LinkType): type is keyof Omit<LinkCounts, 'total'> {
  return type !== 'anchor' && type !== 'other';
}

export function countLinks(links: readonly FoundLink[]): LinkCounts {
  const counts = { total: 0, internal: 0, external: 0, mailto: 0, tel: 0 };
  for (const link of links) {
    if (!isCounted(link.type)) continue;
    counts[link.type]++;
    counts.total++;
  }
  return counts;
}
