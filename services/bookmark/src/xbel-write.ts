import type { NetscapeDocument, NetscapeItem } from './netscape-read.js';
import { isoOf } from './parse-bookmarks.js';

/**
 * XBEL written from a Netscape bookmark file: folders, bookmarks, descriptions and separators in
 * their order; the browser's Unix-second dates become ISO 8601 (`added`, `visited`, `modified`).
 */
export function xbelFromNetscape(doc: NetscapeDocument): string {
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE xbel PUBLIC "+//IDN python.org//DTD XML Bookmark Exchange Language 1.0//EN//XML" ' +
      '"http://pyxml.sourceforge.net/topics/dtds/xbel.dtd">',
    '<xbel version="1.0">',
  ];
  if (doc.title) lines.push(`  <title>${xmlText(doc.title)}</title>`);
  const walk = (items: NetscapeItem[], depth: number) => {
    const indent = '  '.repeat(depth);
    for (const item of items) {
      if (item.kind === 'separator') lines.push(`${indent}<separator/>`);
      else if (item.kind === 'folder') {
        lines.push(
          `${indent}<folder${attrs([
            ['added', isoOf(item.addDate)],
            ['modified', isoOf(item.lastModified)],
          ])}>`,
        );
        lines.push(`${indent}  <title>${xmlText(item.title)}</title>`);
        walk(item.children, depth + 1);
        lines.push(`${indent}</folder>`);
      } else {
        lines.push(
          `${indent}<bookmark${attrs([
            ['href', item.href],
            ['added', isoOf(item.addDate)],
            ['visited', isoOf(item.lastVisit)],
            ['modified', isoOf(item.lastModified)],
          ])}>`,
        );
        lines.push(`${indent}  <title>${xmlText(item.title)}</title>`);
        if (item.desc) lines.push(`${indent}  <desc>${xmlText(item.desc)}</desc>`);
        lines.push(`${indent}</bookmark>`);
      }
    }
  };
  walk(doc.children, 1);
  lines.push('</xbel>', '');
  return lines.join('\n');
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
