import { nextTurn, type TextSink } from './parse-stream.js';

/**
 * Markdown characters read from one page at most: it is rendered in one piece, so the cap bounds
 * the time the event loop is held. Past it the rest is not read and the page is cut short.
 */
export const MAX_MARKDOWN_CHARS = 1024 * 1024;
/** Rendered HTML handed on per turn of the event loop (as parse-stream.ts feeds a page). */
const PIECE_CHARS = 16 * 1024;

/** An HTML reader that can be told its document was cut short (its lists are then incomplete). */
export interface HtmlSink extends TextSink {
  cutShort(): void;
}

/**
 * Reads a Markdown page (`text/markdown`, or `.md` served as text/plain) as the HTML it renders
 * to: fed to an HTML reader (links, images, ids), its links and targets are the page's. The text is
 * gathered (up to MAX_MARKDOWN_CHARS), rendered at the end and handed on a piece per turn.
 */
export class MarkdownSink implements TextSink {
  private readonly parts: string[] = [];
  private chars = 0;
  private cut = false;

  constructor(private readonly html: HtmlSink) {}

  get done(): boolean {
    return this.cut || this.html.done === true;
  }

  write(chunk: string): void {
    if (this.cut) return;
    const room = MAX_MARKDOWN_CHARS - this.chars;
    if (chunk.length > room) this.cut = true;
    const kept = chunk.length > room ? chunk.slice(0, room) : chunk;
    this.parts.push(kept);
    this.chars += kept.length;
  }

  async end(): Promise<void> {
    const text = this.parts.join('');
    this.parts.length = 0;
    await nextTurn();
    // Loaded with the first Markdown page: a site of HTML pages never holds the renderer.
    const { renderMarkdown } = await import('./markdown-render.js');
    const html = renderMarkdown(text);
    for (let at = 0; at < html.length && !this.html.done; at += PIECE_CHARS) {
      await nextTurn();
      this.html.write(html.slice(at, at + PIECE_CHARS));
    }
    if (this.cut) this.html.cutShort();
    this.html.end();
  }
}
