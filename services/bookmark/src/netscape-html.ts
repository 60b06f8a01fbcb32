import { invalidArgument } from '@webutil/kit';
import { itemCount, type XbelAlias, type XbelDocument, type XbelFolder, type XbelItem } from './xbel.js';

export interface HtmlLimits {
  /** Folders nested deeper than this are refused, aliases' copies included (100). */
  maxFolderDepth: number;
}

/** Alias copies may add as many items as the file holds, and at least this many. */
const MIN_ALIAS_BUDGET = 10_000;
/** Output is handed on in pieces of about this many characters. */
const CHUNK_CHARS = 64 * 1024;

const HEADER = `<!DOCTYPE NETSCAPE-Bookmark-file-1>
<!-- This is an automatically generated file.
     It will be read and overwritten.
     DO NOT EDIT! -->
<META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=UTF-8">
`;

/**
 * Netscape bookmark HTML as browsers export and import it: one item per line (Chrome's importer
 * reads line by line), uppercase tags and attributes, double-quoted values, `<DL><p>` lists.
 * An alias is replaced by the item it references; one that would re-enter a folder it sits in,
 * or references nothing, is left out. Produced piece by piece, so only the document and one
 * piece are in memory.
 */
export async function* netscapeHtml(
  doc: XbelDocument,
  limits: HtmlLimits,
  signal?: AbortSignal,
): AsyncGenerator<Uint8Array> {
  for (const piece of pieces(doc, limits)) {
    signal?.throwIfAborted();
    yield Buffer.from(piece, 'utf8');
  }
}

function* pieces(doc: XbelDocument, limits: HtmlLimits): Generator<string> {
  const aliasBudget = Math.max(MIN_ALIAS_BUDGET, itemCount(doc));
  let aliasCopies = 0;
  /** Folders being written, to catch an alias loop. */
  const open = new Set<XbelFolder>();
  let lines: string[] = [];
  let size = 0;
  const line = (text: string) => {
    lines.push(text);
    size += text.length + 1;
  };
  const full = () => size >= CHUNK_CHARS;
  const take = () => {
    const piece = `${lines.join('\n')}\n`;
    lines = [];
    size = 0;
    return piece;
  };

  function* list(items: XbelItem[], depth: number, copy: boolean): Generator<string> {
    for (const item of items) {
      if (item.kind === 'alias') {
        const target = doc.ids.get(item.ref);
        if (target && !(target.kind === 'folder' && open.has(target))) yield* entry(target, depth, true);
      } else yield* entry(item, depth, copy);
      if (full()) yield take();
    }
  }

  function* entry(item: Exclude<XbelItem, XbelAlias>, depth: number, copy: boolean): Generator<string> {
    if (copy && ++aliasCopies > aliasBudget)
      throw invalidArgument('ALIAS_EXPANSION_TOO_LARGE', `aliases copy more than ${aliasBudget} items into the output`);
    const indent = '    '.repeat(depth);
    if (item.kind === 'separator') line(`${indent}<HR>`);
    else if (item.kind === 'bookmark') {
      line(
        `${indent}<DT><A HREF="${escapeHtml(item.href.replace(/[\t\n\r]/g, ''))}"${dates([
          ['ADD_DATE', item.added],
          ['LAST_VISIT', item.visited],
          ['LAST_MODIFIED', item.modified],
        ])}>${text(item.title)}</A>`,
      );
      if (item.desc?.trim()) line(`${indent}<DD>${text(item.desc)}`);
    } else if (item.kind === 'folder') {
      if (depth > limits.maxFolderDepth)
        throw invalidArgument(
          'NESTING_TOO_DEEP',
          `an alias nests folders deeper than ${limits.maxFolderDepth} levels; ` +
            `at most ${limits.maxFolderDepth} are supported`,
        );
      line(
        `${indent}<DT><H3${dates([
          ['ADD_DATE', item.added],
          ['LAST_MODIFIED', item.modified],
        ])}>${text(item.title)}</H3>`,
      );
      if (item.desc?.trim()) line(`${indent}<DD>${text(item.desc)}`);
      line(`${indent}<DL><p>`);
      open.add(item);
      yield* list(item.children, depth + 1, copy);
      open.delete(item);
      line(`${indent}</DL><p>`);
    }
  }

  const title = text(doc.title) || 'Bookmarks';
  line(`${HEADER}<TITLE>${title}</TITLE>\n<H1>${title}</H1>\n<DL><p>`);
  yield* list(doc.children, 1, false);
  line('</DL><p>');
  yield take();
}

function dates(pairs: [string, string | undefined][]): string {
  let out = '';
  for (const [name, iso] of pairs) {
    const seconds = iso === undefined ? undefined : unixSeconds(iso);
    if (seconds !== undefined) out += ` ${name}="${seconds}"`;
  }
  return out;
}

/** A title or description on one line: runs of HTML white space (newlines too) become one space; markup escaped. */
function text(value: string | undefined): string {
  return value ? escapeHtml(value.replace(/[\t\n\f\r ]+/g, ' ').trim()) : '';
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };
const NEEDS_ESCAPE = /[&<>"]/;

export function escapeHtml(value: string): string {
  return NEEDS_ESCAPE.test(value) ? value.replace(/[&<>"]/g, (ch) => ESCAPES[ch] ?? ch) : value;
}

/** Calendar date, optional time (a fraction allowed, and dropped), optional zone; no zone means UTC. */
const ISO_8601 =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,]\d{1,9})?)?)?(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;

/** ISO 8601 date-time to whole Unix seconds; undefined for anything else, so the attribute is left out. */
export function unixSeconds(iso: string): number | undefined {
  const m = ISO_8601.exec(iso);
  if (!m) return undefined;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  const hour = Number(m[4] ?? 0);
  const minute = Number(m[5] ?? 0);
  const second = Number(m[6] ?? 0);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 60) return undefined;
  return daysSinceEpoch(year, month, day) * 86_400 + hour * 3_600 + minute * 60 + second - zoneOffsetSeconds(m[7]);
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's days_from_civil). */
function daysSinceEpoch(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

function zoneOffsetSeconds(zone: string | undefined): number {
  if (!zone || zone === 'Z' || zone === 'z') return 0;
  const digits = zone.slice(1).replace(':', '');
  const minutes = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4) || 0);
  return (zone[0] === '-' ? -1 : 1) * minutes * 60;
}
