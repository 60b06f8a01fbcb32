import { outputTooLarge } from './bookmark-files.js';
import type { NetscapeDocument, NetscapeItem } from './netscape-read.js';
import { isoOf } from './parse-bookmarks.js';

/** Indentation stops growing past this depth: by depth, a deep file's lines would be mostly spaces. */
const MAX_INDENT_DEPTH = 8;
/** Bytes gathered before they become one Buffer of the output. */
const PIECE_CHARS = 64 * 1024;

/**
 * XBEL written from a Netscape bookmark file: folders, bookmarks, descriptions and separators in
 * their order; the browser's Unix-second dates become ISO 8601 (`added`, `visited`, `modified`).
 * Written in pieces and refused (OUTPUT_TOO_LARGE) the moment it passes `maxBytes`.
 */
export function xbelFromNetscape(doc: NetscapeDocument, maxBytes: number): Buffer {
  const pieces: Buffer[] = [];
  let bytes = 0;
  let pending: string[] = [];
  let pendingChars = 0;
  const flush = () => {
    const piece = Buffer.from(pending.join(''), 'utf8');
    pending = [];
    pendingChars = 0;
    bytes += piece.length;
    if (bytes > maxBytes) throw outputTooLarge(maxBytes);
    pieces.push(piece);
  };
  const line = (text: string) => {
    pending.push(text, '\n');
    pendingChars += text.length + 1;
    if (pendingChars >= PIECE_CHARS) flush();
  };
  line('<?xml version="1.0" encoding="UTF-8"?>');
  line(
    '<!DOCTYPE xbel PUBLIC "+//IDN python.org//DTD XML Bookmark Exchange Language 1.0//EN//XML" ' +
      '"http://pyxml.sourceforge.net/topics/dtds/xbel.dtd">',
  );
  line('<xbel version="1.0">');
  if (doc.title) line(`  <title>${xmlText(doc.title)}</title>`);
  const walk = (items: NetscapeItem[], depth: number) => {
    const indent = '  '.repeat(Math.min(depth, MAX_INDENT_DEPTH));
    for (const item of items) {
      if (item.kind === 'separator') line(`${indent}<separator/>`);
      else if (item.kind === 'folder') {
        line(
          `${indent}<folder${attrs([
            ['added', isoOf(item.addDate)],
            ['modified', isoOf(item.lastModified)],
          ])}>`,
        );
        line(`${indent}  <title>${xmlText(item.title)}</title>`);
        walk(item.children, depth + 1);
        line(`${indent}</folder>`);
      } else {
        line(
          `${indent}<bookmark${attrs([
            ['href', item.href],
            ['added', isoOf(item.addDate)],
            ['visited', isoOf(item.lastVisit)],
            ['modified', isoOf(item.lastModified)],
          ])}>`,
        );
        line(`${indent}  <title>${xmlText(item.title)}</title>`);
        if (item.desc) line(`${indent}  <desc>${xmlText(item.desc)}</desc>`);
        line(`${indent}</bookmark>`);
      }
    }
  };
  walk(doc.children, 1);
  line('</xbel>');
  flush();
  return Buffer.concat(pieces, bytes);
}

function attrs(pairs: [string, string | undefined][]): string {
  return pairs
    .filter((p): p is [string, string] => p[1] !== undefined)
    .map(([name, value]) => ` ${name}="${xmlAttr(value)}"`)
    .join('');
}

/** Characters XML 1.0 does not allow are dropped; markup is escaped. */
function xmlText(value: string): string {
  return (
    value
      // biome-ignore lint/suspicious/noControlCharactersInRegex: removing what XML cannot hold is the point
      .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '')
      .replace(/[&<>]/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[ch] ?? ch)
  );
}

const xmlAttr = (value: string) => xmlText(value).replace(/"/g, '&quot;');
