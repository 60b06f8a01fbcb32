import type { SafeResponse } from '@webutil/kit';
import { header } from '@webutil/kit/http-header';
import { type HtmlSink, MarkdownSink } from './markdown-links.js';
import type { TextSink } from './parse-stream.js';

const HTML_TYPES = /^(text\/html|application\/xhtml\+xml)\b/i;
const MARKDOWN_TYPES = /^text\/(?:x-)?markdown\b/i;
/** Markdown files served as plain text (or with no type), as many servers and repositories do. */
const MARKDOWN_PATH = /\.(?:md|markdown)$/i;

/** What a page's body is read as: HTML, or Markdown rendered to HTML (docs/decisions/0342). */
export type PageFormat = 'html' | 'markdown';

/**
 * The format of an answer that is a page to read: an HTML content type, a Markdown one, a `.md`
 * file as text/plain; none at all is given a chance (as HTML, or Markdown by its name). Else undefined.
 */
export function pageFormat(res: Pick<SafeResponse, 'url' | 'headers'>): PageFormat | undefined {
  const type = header(res.headers, 'content-type')?.trim();
  if (MARKDOWN_TYPES.test(type ?? '')) return 'markdown';
  if (type === undefined || /^text\/plain\b/i.test(type)) {
    if (MARKDOWN_PATH.test(new URL(res.url).pathname)) return 'markdown';
    return type === undefined ? 'html' : undefined;
  }
  return HTML_TYPES.test(type) ? 'html' : undefined;
}

/** What the body of a page of `format` is fed to, for an HTML reader. */
export function pageSink(format: PageFormat, html: HtmlSink): TextSink {
  return format === 'markdown' ? new MarkdownSink(html) : html;
}
