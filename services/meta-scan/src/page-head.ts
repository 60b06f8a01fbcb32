import { BoundedParser, HTML_OPTIONS } from '@webutil/kit/html';

/** One <meta> element's attributes (lower-cased names; values as written). */
export interface MetaTag {
  name?: string;
  property?: string;
  httpEquiv?: string;
  charset?: string;
  content?: string;
}

/** One <link> element's rel tokens and href (and hreflang, for alternates). */
export interface LinkTag {
  rel: string[];
  href: string;
  hreflang?: string;
}

/** The text of one <script type="application/ld+json">, cut at MAX_JSON_LD_CHARS. */
export interface JsonLdBlock {
  text: string;
  truncated: boolean;
}

/** What the audit reads from a page: its head, and the JSON-LD of its body. */
export interface PageHead {
  /** Text of the first <title>, white space collapsed; undefined without one. */
  title: string | undefined;
  metas: MetaTag[];
  links: LinkTag[];
  /** First <base href>, as written. */
  baseHref: string | undefined;
  /** The <html lang> attribute, as written. */
  lang: string | undefined;
  /** JSON-LD blocks of the head and then the body, in page order, at most MAX_JSON_LD_BLOCKS. */
  jsonLd: JsonLdBlock[];
  /** Why reading the head stopped: the head ended, the input ended, or a bound was reached. */
  stop: 'head-end' | 'input-end' | 'depth' | 'elements';
}

/** Nesting deeper than this is not a head; it is also where htmlparser2's stack gets costly. */
export const MAX_DEPTH = 64;
/** <meta> and <link> elements read at most; real heads have tens. */
export const MAX_ELEMENTS = 2_000;
const MAX_TITLE = 2_048;
/** JSON-LD read at most: blocks, and characters of each. */
export const MAX_JSON_LD_BLOCKS = 20;
export const MAX_JSON_LD_CHARS = 256 * 1024;

/**
 * A bounded, streaming reader of a page's head over the kit's BoundedParser (linear in the bytes
 * read). The head ends at <body> or </head>; past it only JSON-LD is collected, because sites
 * (and most CMS plugins) put it in the body. Reading stops at MAX_DEPTH open elements, at
 * MAX_ELEMENTS head tags and at MAX_JSON_LD_BLOCKS, mid-chunk. The caller bounds the bytes it feeds.
 */
export class HeadReader {
  private readonly parser: BoundedParser;
  private readonly head: PageHead = {
    title: undefined,
    metas: [],
    links: [],
    baseHref: undefined,
    lang: undefined,
    jsonLd: [],
    stop: 'input-end',
  };
  private inTitle = false;
  /** The JSON-LD block being read, while inside its <script>. */
  private jsonLd: JsonLdBlock | undefined;
  private titleText = '';
  private titleSeen = false;
  /** Past the head: only JSON-LD is read. */
  private inBody = false;
  private finished = false;

  constructor() {
    this.parser = new BoundedParser(
      {
        onopentag: (name, attrs) => this.open(name, attrs),
        onclosetag: (name, implied) => this.close(name, implied),
        ontext: (text) => {
          if (this.inTitle) this.titleText += text.slice(0, MAX_TITLE - this.titleText.length);
          const block = this.jsonLd;
          if (block && !block.truncated) {
            const room = MAX_JSON_LD_CHARS - block.text.length;
            block.text += text.slice(0, room);
            block.truncated = text.length > room;
          }
        },
      },
      HTML_OPTIONS,
      MAX_DEPTH,
    );
  }

  /** Whether the reader has what it needs; feeding more is then pointless. */
  get done(): boolean {
    return this.finished || this.parser.stopped;
  }

  /** Whether the head has been read; the body is then read for JSON-LD only. */
  get headDone(): boolean {
    return this.inBody || this.done;
  }

  write(chunk: string): void {
    this.parser.write(chunk);
  }

  end(): PageHead {
    this.parser.end();
    if (this.parser.tooDeep && !this.inBody) this.head.stop = 'depth';
    this.finished = true;
    if (this.titleSeen) this.head.title = this.titleText.replace(/\s+/g, ' ').trim();
    return this.head;
  }

  private stop(why: PageHead['stop']): void {
    if (this.finished) return;
    this.finished = true;
    this.head.stop = why;
    this.parser.stop();
  }

  /** The head is over: its fields are final; the body is read for JSON-LD while there is room. */
  private endHead(): void {
    if (this.inBody) return;
    this.inBody = true;
    this.inTitle = false;
    this.head.stop = 'head-end';
    if (this.head.jsonLd.length >= MAX_JSON_LD_BLOCKS) this.stop('head-end');
  }

  private open(name: string, attrs: Record<string, string>): void {
    if (this.inBody && name !== 'script') return;
    switch (name) {
      case 'body':
        this.endHead();
        return;
      case 'html':
        this.head.lang ??= attrs.lang?.trim();
        return;
      case 'script':
        if (
          attrs.type?.trim().toLowerCase() === 'application/ld+json' &&
          this.head.jsonLd.length < MAX_JSON_LD_BLOCKS
        ) {
          this.jsonLd = { text: '', truncated: false };
          this.head.jsonLd.push(this.jsonLd);
        }
        return;
      case 'title':
        if (!this.titleSeen) {
          this.titleSeen = true;
          this.inTitle = true;
        }
        return;
      case 'meta':
        this.head.metas.push({
          name: attrs.name?.trim().toLowerCase(),
          property: attrs.property?.trim().toLowerCase(),
          httpEquiv: attrs['http-equiv']?.trim().toLowerCase(),
          charset: attrs.charset?.trim(),
          content: attrs.content,
        });
        break;
      case 'link':
        if (attrs.href !== undefined && attrs.rel !== undefined) {
          const link: LinkTag = { rel: attrs.rel.toLowerCase().split(/\s+/).filter(Boolean), href: attrs.href.trim() };
          if (attrs.hreflang !== undefined) link.hreflang = attrs.hreflang.trim();
          this.head.links.push(link);
        }
        break;
      case 'base':
        this.head.baseHref ??= attrs.href?.trim();
        break;
      default:
        return;
    }
    if (this.head.metas.length + this.head.links.length >= MAX_ELEMENTS) this.stop('elements');
  }

  private close(name: string, implied: boolean): void {
    if (name === 'title') this.inTitle = false;
    if (name === 'script') {
      this.jsonLd = undefined;
      if (this.inBody && this.head.jsonLd.length >= MAX_JSON_LD_BLOCKS) this.stop('head-end');
    }
    if (name === 'head' && !implied) this.endHead();
  }
}
