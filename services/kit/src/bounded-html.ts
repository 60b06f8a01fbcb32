import { type Handler, Parser, type ParserOptions } from 'htmlparser2';

/** Open elements at most; Chromium's HTML parser stops nesting at 512 too. */
export const MAX_HTML_DEPTH = 512;

/**
 * htmlparser2 with a bounded cost. It keeps open elements in an array it `unshift`s, so n nested
 * unclosed tags cost n² (a megabyte of `<b>` blocked for many seconds:
 * docs/decisions/0027-bounded-html-parsing.md). Counting open
 * elements through its own open and close events (void and implied closes included) and stopping
 * the parse once more than `maxDepth` are open keeps every parse linear; `tooDeep` then says the
 * rest of the document was not read.
 */
export class BoundedParser {
  /** True once the document nested deeper than allowed; nothing more is parsed. */
  tooDeep = false;
  private depth = 0;
  private halted = false;
  private readonly parser: Parser;

  constructor(handler: Partial<Handler>, options: ParserOptions, maxDepth = MAX_HTML_DEPTH) {
    this.parser = new Parser(
      {
        ...handler,
        onopentag: (name, attrs, implied) => {
          if (++this.depth > maxDepth) {
            this.tooDeep = true;
            this.parser.pause(); // the tokenizer stops inside the current chunk
            return;
          }
          if (!this.stopped) handler.onopentag?.(name, attrs, implied);
        },
        onclosetag: (name, implied) => {
          this.depth--;
          if (!this.stopped) handler.onclosetag?.(name, implied);
        },
        ontext: (text) => {
          if (!this.stopped) handler.ontext?.(text);
        },
      },
      options,
    );
  }

  /** True once the parse stopped, too deep or by stop(). */
  get stopped(): boolean {
    return this.tooDeep || this.halted;
  }

  /** Ends the parse early, inside the current chunk: the reader has what it needs. */
  stop(): void {
    this.halted = true;
    this.parser.pause();
  }

  write(chunk: string): void {
    if (!this.stopped) this.parser.write(chunk);
  }

  end(): void {
    if (!this.stopped) this.parser.end();
  }
}

/** The options every HTML reader uses: entities decoded, tag and attribute names lower-cased. */
export const HTML_OPTIONS: ParserOptions = { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true };
