import { invalidArgument } from '@webutil/kit';
import { SaxesParser } from 'saxes';
import { readNetscape } from './netscape-read.js';
import { hasInternalSubset, MAX_ELEMENT_DEPTH } from './xbel.js';

/**
 * A cleaned copy of a bookmark file: some bookmarks left out, some URLs replaced, and every other
 * character of the file as it was (titles, dates, separators, aliases, metadata, white space).
 * The file is edited as text: each bookmark's span is found by a parser, and only those spans
 * change. The text is the file's bytes read as Latin-1, so bytes outside the edits are written
 * back exactly, whatever the file's encoding (a new URL is ASCII: URL serialisation makes it so).
 */
export interface BookmarkEdits {
  /** Indexes (file order) of bookmarks to leave out. */
  drop: ReadonlySet<number>;
  /** Index -> new URL. */
  rewrite: ReadonlyMap<number, string>;
}

interface Span {
  start: number;
  end: number;
  replacement?: string;
}

/** The file's bytes as text, one character per byte. */
export const asLatin1 = (bytes: Uint8Array) =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('latin1');

export const fromLatin1 = (text: string) => Buffer.from(text, 'latin1');

/** Widens a span to whole lines when it stands alone on them, so no blank line is left. */
function wholeLines(text: string, start: number, end: number): [number, number] {
  let s = start;
  while (s > 0 && (text[s - 1] === ' ' || text[s - 1] === '\t')) s--;
  let e = end;
  while (e < text.length && (text[e] === ' ' || text[e] === '\t')) e++;
  const lineStart = s === 0 || text[s - 1] === '\n';
  const lineEnd = e === text.length || text[e] === '\n' || text[e] === '\r';
  if (!lineStart || !lineEnd) return [start, end];
  if (text[e] === '\r') e++;
  if (text[e] === '\n') e++;
  return [s, e];
}

function applySpans(text: string, spans: Span[]): string {
  spans.sort((a, b) => a.start - b.start);
  const out: string[] = [];
  let at = 0;
  for (const span of spans) {
    if (span.start < at) continue; // inside a span already left out
    out.push(text.slice(at, span.start));
    if (span.replacement !== undefined) out.push(span.replacement);
    at = span.end;
  }
  out.push(text.slice(at));
  return out.join('');
}

const xmlAttr = (value: string) =>
  value.replace(/[&<>"]/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[ch] ?? ch);

const HREF = /(\shref\s*=\s*)("[^"]*"|'[^']*'|[^\s>]+)/i;

/** A start tag with its href value replaced (quoted with double quotes). */
function withHref(tag: string, url: string): string {
  return tag.replace(HREF, (_m, lead: string) => `${lead}"${xmlAttr(url)}"`);
}

/**
 * An XBEL file edited: a left-out bookmark takes with it the aliases that reference it (an alias
 * to nothing would be dangling). Bookmarks are counted as the reader counts them: <bookmark>
 * elements whose ancestors are all <xbel> or <folder>.
 */
export function editXbel(text: string, edits: BookmarkEdits): string {
  const parser = new SaxesParser({ xmlns: false, position: true });
  interface Open {
    name: string;
    container: boolean;
    start: number;
    openEnd: number;
    index?: number;
    id?: string;
    ref?: string;
  }
  const stack: Open[] = [];
  const spans: Span[] = [];
  const droppedIds = new Set<string>();
  const aliases: { ref: string; start: number; end: number }[] = [];
  let index = 0;
  parser.on('doctype', (doctype) => {
    if (hasInternalSubset(doctype)) throw invalidArgument('INVALID_XBEL', 'the file declares a DTD internal subset');
  });
  parser.on('opentag', (tag) => {
    if (stack.length >= MAX_ELEMENT_DEPTH) throw invalidArgument('INVALID_XBEL', 'elements are nested too deep');
    const parentContainer = stack.length === 0 ? true : (stack.at(-1) as Open).container;
    const start = text.lastIndexOf('<', parser.position - 1);
    const open: Open = {
      name: tag.name,
      container: parentContainer && (tag.name === 'folder' || (stack.length === 0 && tag.name === 'xbel')),
      start,
      openEnd: parser.position,
    };
    const attr = (name: string) => {
      const value = tag.attributes[name];
      return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
    };
    if (stack.length > 0 && parentContainer && tag.name === 'bookmark') {
      open.index = index++;
      open.id = attr('id');
    }
    if (stack.length > 0 && parentContainer && tag.name === 'alias') open.ref = attr('ref');
    stack.push(open);
  });
  parser.on('closetag', () => {
    const open = stack.pop();
    if (!open) return;
    const end = parser.position;
    if (open.index !== undefined) {
      if (edits.drop.has(open.index)) {
        const [s, e] = wholeLines(text, open.start, end);
        spans.push({ start: s, end: e });
        if (open.id !== undefined) droppedIds.add(open.id);
      } else {
        const url = edits.rewrite.get(open.index);
        if (url !== undefined)
          spans.push({
            start: open.start,
            end: open.openEnd,
            replacement: withHref(text.slice(open.start, open.openEnd), url),
          });
      }
    } else if (open.ref !== undefined) aliases.push({ ref: open.ref, start: open.start, end });
  });
  try {
    parser.write(text);
    parser.close();
  } catch (err) {
    if (err instanceof Error && 'reason' in err) throw err;
    throw invalidArgument('INVALID_XBEL', `the file is not valid XML: ${err instanceof Error ? err.message : err}`);
  }
  for (const alias of aliases) {
    if (!droppedIds.has(alias.ref)) continue;
    const [s, e] = wholeLines(text, alias.start, alias.end);
    spans.push({ start: s, end: e });
  }
  return applySpans(text, spans);
}

/** A Netscape bookmark file edited: a left-out bookmark takes its <DD> description with it. */
export function editNetscape(text: string, edits: BookmarkEdits): string {
  const doc = readNetscape(text);
  const spans: Span[] = [];
  doc.bookmarks.forEach((item, index) => {
    if (edits.drop.has(index)) {
      let end = item.end;
      const dd = /^\s*<dd>[^<]*/i.exec(text.slice(end, end + 64 * 1024));
      if (dd) end += dd[0].replace(/\s+$/, '').length;
      const [s, e] = wholeLines(text, item.start, end);
      spans.push({ start: s, end: e });
      return;
    }
    const url = edits.rewrite.get(index);
    const aStart = text.indexOf(
      '<',
      item.start + (text.slice(item.start, item.start + 4).toLowerCase() === '<dt>' ? 4 : 0),
    );
    if (url !== undefined)
      spans.push({ start: aStart, end: item.openEnd, replacement: withHref(text.slice(aStart, item.openEnd), url) });
  });
  return applySpans(text, spans);
}
