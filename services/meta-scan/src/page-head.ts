import { BoundedParser, HTML_OPTIONS } from '@webutil/kit/html';

/** One <meta> element's attributes (lower-cased names; values as written). */
export interface MetaTag {
  name?: string;
  property?: string;
  httpEquiv?: string;
  charset?: string;
  content?: string;
}

/** One <link> element's rel tokens and href. */
export interface LinkTag {
  rel: string[];
  href: string;
}

/** What the audit reads from a page: its head, and no more. */
export interface PageHead {
  /** Text of the first <title>, white space collapsed; undefined without one. */
  title: string | undefined;
  metas: MetaTag[];
  links: LinkTag[];
  /** First <base href>, as written. */
  baseHref: string | undefined;
  /** Why reading stopped: the head ended, the input ended, or a bound was reached. */
  stop: 'head-end' | 'input-end' | 'depth' | 'elements';
}

/** Nesting deeper than this is not a head; it is also where htmlparser2's stack gets costly. */
export const MAX_DEPTH = 64;
/** <meta> and <link> elements read at most; real heads have tens. */
export const MAX_ELEMENTS = 2_000;
const MAX_TITLE = 2_048;

/**
 * A bounded, streaming reader of a page's head over the kit's BoundedParser (linear in the bytes
 * read). It stops at <body> or </head>, at MAX_DEPTH open elements and at MAX_ELEMENTS tags,
 * mid-chunk. The caller bounds the bytes it feeds.
 */
export class HeadReader {
  private readonly parser: BoundedParser;
  private readonly head: PageHead = { title: undefined, metas: [], links: [], baseHref: undefined, stop: 'input-end' };
  private inTitle = false;
  private titleText = '';
  private titleSeen = false;
  private finished = false;

  constructor() {
    this.parser = new BoundedParser(
      {
        onopentag: (name, attrs) => this.open(name, attrs),
        onclosetag: (name, implied) => this.close(name, implied),
        ontext: (text) => {
          if (this.inTitle) this.titleText += text.slice(0, MAX_TITLE - this.titleText.length);
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

  write(chunk: string): void {
    this.parser.write(chunk);
  }

  end(): PageHead {
    this.parser.end();
    if (this.parser.tooDeep) this.head.stop = 'depth';
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

  private open(name: string, attrs: Record<string, string>): void {
    switch (name) {
      case 'body':
        this.stop('head-end');
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
          this.head.links.push({ rel: attrs.rel.toLowerCase().split(/\s+/).filter(Boolean), href: attrs.href.trim() });
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
    if (name === 'head' && !implied) this.stop('head-end');
  }
}
