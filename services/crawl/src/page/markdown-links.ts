import GithubSlugger from 'github-slugger';
import MarkdownIt from 'markdown-it';
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
 * CommonMark with GitHub's habits: raw HTML kept (its links are links too), bare URLs linked, and
 * each heading given the id GitHub's anchor for it uses (`## Install` is `#install`, a repeat
 * `#install-1`), so `#fragment` links to the page can be verified.
 */
const markdown = new MarkdownIt({ html: true, linkify: true });
markdown.renderer.rules.heading_open = (tokens, idx, options, env, self) => {
  const slugger = (env as { slugger: GithubSlugger }).slugger;
  const inline = tokens[idx + 1];
  const text = (inline?.children ?? [])
    .filter((t) => t.type === 'text' || t.type === 'code_inline')
    .map((t) => t.content)
    .join('');
  tokens[idx]?.attrSet('id', slugger.slug(text));
  return self.renderToken(tokens, idx, options);
};

/** The HTML a Markdown document renders to, headings with GitHub's ids. */
export function renderMarkdown(text: string): string {
  return markdown.render(text, { slugger: new GithubSlugger() });
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
    const html = renderMarkdown(text);
    for (let at = 0; at < html.length && !this.html.done; at += PIECE_CHARS) {
      await nextTurn();
      this.html.write(html.slice(at, at + PIECE_CHARS));
    }
    if (this.cut) this.html.cutShort();
    this.html.end();
  }
}
