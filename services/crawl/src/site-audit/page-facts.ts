/**
 * What a site audit reads from a page's HTML beside its links, in the same pass over the same
 * fetch (no second request): head metadata, headings, language, hreflang, JSON-LD, images, mixed
 * content, size and a hash of the visible text. Each list is bounded, so a hostile page costs a
 * bounded record.
 */
import { createHash } from 'node:crypto';
import type { SafeResponse } from '@webutil/kit';
import type { BoundedParser } from '@webutil/kit/html';
import { header } from '@webutil/kit/http-header';
import type { LinkCollector, ParseEvents } from '../page/links.js';
import type { HtmlSink } from '../page/markdown-links.js';

/** Entries kept per list on one page (hreflang alternates, images without alt, mixed resources). */
const MAX_LISTED = 20;
/** Characters of a title, description or hreflang URL kept. */
const MAX_TEXT = 2_000;
/** JSON-LD characters parsed per block. */
const MAX_JSON_LD_CHARS = 256 * 1024;

export interface Hreflang {
  lang: string;
  url: string;
}

/** One page's facts, as the checks (page-checks.ts, site-checks.ts) read them. */
export interface PageFacts {
  /** The first `<title>`'s text, trimmed; undefined when there is none. */
  title?: string;
  description?: string;
  h1Count: number;
  /** The first `<link rel=canonical>`, resolved; undefined when there is none. */
  canonical?: string;
  /** noindex in a robots or googlebot meta tag, or in the X-Robots-Tag header. */
  noindex: boolean;
  /** The `<html lang>` value; undefined when absent or empty. */
  lang?: string;
  hreflang: Hreflang[];
  /** JSON-LD blocks that do not parse. */
  jsonLdInvalid: number;
  /** `<img>` elements without an alt attribute (alt="" marks a decorative image and is fine), and the first srcs. */
  imagesWithoutAlt: number;
  imagesWithoutAltSrc: string[];
  /** http: resources (scripts, images, stylesheets, frames, media) of an https page. */
  mixedContent: string[];
  /** Decoded characters of the HTML read. */
  htmlChars: number;
  /** A hash of the whitespace-collapsed visible text of the body; undefined when it has none. */
  bodyHash?: string;
  /** Milliseconds from the request to the final response's headers. */
  ttfbMs: number;
}

/** Elements whose URL attribute loads a resource into the page (mixed content when http: on https). */
const RESOURCE_ATTRS: Readonly<Record<string, string>> = {
  img: 'src',
  script: 'src',
  iframe: 'src',
  video: 'src',
  audio: 'src',
  source: 'src',
  embed: 'src',
  track: 'src',
  object: 'data',
};

/**
 * An HtmlSink that feeds the page's link collector and reads the page's facts on the way. The
 * facts are final once `end()` has run.
 */
export class PageFactsReader implements HtmlSink {
  readonly facts: PageFacts;
  private readonly parser: BoundedParser;
  private readonly base: URL;
  private readonly secure: boolean;
  private inTitle = false;
  private titleText: string[] | undefined;
  private inBody = false;
  private skipDepth = 0;
  private jsonLd: string[] | undefined;
  private jsonLdChars = 0;
  private readonly text = createHash('sha1');
  private textChars = 0;
  /** Whitespace came after the last word hashed. */
  private space = false;

  constructor(
    private readonly links: LinkCollector,
    res: Pick<SafeResponse, 'url' | 'headers' | 'timeToHeadersMs'>,
  ) {
    this.base = new URL(res.url);
    this.secure = this.base.protocol === 'https:';
    this.facts = {
      h1Count: 0,
      noindex: /\bnoindex\b|\bnone\b/i.test(header(res.headers, 'x-robots-tag') ?? ''),
      hreflang: [],
      jsonLdInvalid: 0,
      imagesWithoutAlt: 0,
      imagesWithoutAltSrc: [],
      mixedContent: [],
      htmlChars: 0,
      ttfbMs: Math.round(res.timeToHeadersMs),
    };
    const events: ParseEvents = {
      onopentag: (name, attrs) => this.open(name, attrs),
      onclosetag: (name) => this.close(name),
      ontext: (text) => this.onText(text),
    };
    // The link collector and this reader share one parse of the page.
    this.parser = links.parseWith(events);
  }

  /** The facts need the whole page, past the link cap: done only once the parse stopped (too deep). */
  get done(): boolean {
    return this.parser.stopped;
  }

  write(chunk: string): void {
    this.facts.htmlChars += chunk.length;
    if (!this.parser.stopped) this.parser.write(chunk);
  }

  cutShort(): void {
    this.links.cutShort();
  }

  async end(): Promise<void> {
    if (!this.parser.stopped) this.parser.end();
    if (this.textChars > 0) this.facts.bodyHash = this.text.digest('hex').slice(0, 20);
    await this.links.end();
  }

  private open(name: string, attrs: Record<string, string>): void {
    if (name === 'script' || name === 'style' || name === 'noscript' || name === 'template') {
      this.skipDepth++;
      if (name === 'script' && attrs.type?.trim().toLowerCase() === 'application/ld+json') {
        this.jsonLd = [];
        this.jsonLdChars = 0;
      }
    }
    switch (name) {
      case 'html':
        if (attrs.lang?.trim()) this.facts.lang = attrs.lang.trim();
        break;
      case 'body':
        this.inBody = true;
        break;
      case 'title':
        if (this.facts.title === undefined && !this.inBody) {
          this.inTitle = true;
          this.titleText = [];
        }
        break;
      case 'h1':
        this.facts.h1Count++;
        break;
      case 'meta':
        this.meta(attrs);
        break;
      case 'link':
        this.link(attrs);
        break;
      case 'img':
        if (attrs.alt === undefined) {
          this.facts.imagesWithoutAlt++;
          if (this.facts.imagesWithoutAltSrc.length < MAX_LISTED)
            this.facts.imagesWithoutAltSrc.push(this.resolve(attrs.src ?? '') ?? (attrs.src ?? '').slice(0, MAX_TEXT));
        }
        break;
    }
    const attr = RESOURCE_ATTRS[name];
    if (attr) this.mixed(attrs[attr]);
    if (name === 'link' && /\bstylesheet\b/i.test(attrs.rel ?? '')) this.mixed(attrs.href);
  }

  private close(name: string): void {
    if (name === 'title' && this.inTitle) {
      this.inTitle = false;
      this.facts.title = collapse(this.titleText?.join('') ?? '').slice(0, MAX_TEXT);
      this.titleText = undefined;
    }
    if (name === 'script' || name === 'style' || name === 'noscript' || name === 'template') {
      if (this.skipDepth > 0) this.skipDepth--;
      if (name === 'script' && this.jsonLd) {
        const block = this.jsonLd.join('');
        this.jsonLd = undefined;
        if (this.jsonLdChars <= MAX_JSON_LD_CHARS && !parses(block)) this.facts.jsonLdInvalid++;
      }
    }
  }

  private onText(text: string): void {
    if (this.jsonLd) {
      this.jsonLdChars += text.length;
      if (this.jsonLdChars <= MAX_JSON_LD_CHARS) this.jsonLd.push(text);
      return;
    }
    if (this.inTitle && this.titleText) {
      this.titleText.push(text);
      return;
    }
    if (!this.inBody || this.skipDepth > 0) return;
    // Whitespace runs count as one space wherever the text was split (by the network or the parser).
    // Hashed once per text node: an update per word cost more than the words.
    let collapsed = '';
    const words = text.split(/\s+/);
    for (const [i, word] of words.entries()) {
      if (i > 0) this.space = true;
      if (!word) continue;
      if (this.space && this.textChars > 0) collapsed += ' ';
      this.space = false;
      collapsed += word;
      this.textChars += word.length;
    }
    if (collapsed) this.text.update(collapsed);
  }

  private meta(attrs: Record<string, string>): void {
    const name = attrs.name?.trim().toLowerCase();
    if (name === 'description' && this.facts.description === undefined)
      this.facts.description = collapse(attrs.content ?? '').slice(0, MAX_TEXT);
    if ((name === 'robots' || name === 'googlebot') && /\bnoindex\b|\bnone\b/i.test(attrs.content ?? ''))
      this.facts.noindex = true;
  }

  private link(attrs: Record<string, string>): void {
    const rel = (attrs.rel ?? '').toLowerCase().split(/\s+/);
    if (rel.includes('canonical') && this.facts.canonical === undefined && attrs.href !== undefined)
      this.facts.canonical = this.resolve(attrs.href);
    if (rel.includes('alternate') && attrs.hreflang !== undefined && this.facts.hreflang.length < MAX_LISTED) {
      const url = this.resolve(attrs.href ?? '');
      if (url) this.facts.hreflang.push({ lang: attrs.hreflang.trim().slice(0, 50), url });
    }
  }

  private mixed(url: string | undefined): void {
    if (!this.secure || !url || this.facts.mixedContent.length >= MAX_LISTED) return;
    const resolved = this.resolve(url);
    if (resolved?.startsWith('http:')) this.facts.mixedContent.push(resolved);
  }

  private resolve(href: string): string | undefined {
    try {
      const url = new URL(href.trim(), this.base);
      url.hash = '';
      return url.href.slice(0, MAX_TEXT);
    } catch {
      return undefined;
    }
  }
}

function collapse(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

function parses(json: string): boolean {
  try {
    JSON.parse(json);
    return true;
  } catch {
    return false;
  }
}
