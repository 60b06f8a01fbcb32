import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { TextDecoder } from 'node:util';
import { invalidArgument, ServiceError } from '@webutil/kit';
import { SaxesParser } from 'saxes';

/** An XBEL file read into memory: its items in document order, and its ids for alias lookups. */
export interface XbelDocument {
  title?: string;
  desc?: string;
  children: XbelItem[];
  /** Folders and bookmarks by their `id` attribute (the first of duplicates wins). */
  ids: Map<string, XbelFolder | XbelBookmark>;
  /** How many of each item the file holds. */
  counts: Record<XbelItem['kind'], number>;
}

export type XbelItem = XbelFolder | XbelBookmark | XbelSeparator | XbelAlias;

export interface XbelFolder {
  kind: 'folder';
  title?: string;
  desc?: string;
  added?: string;
  modified?: string;
  children: XbelItem[];
}

export interface XbelBookmark {
  kind: 'bookmark';
  href: string;
  title?: string;
  desc?: string;
  added?: string;
  visited?: string;
  modified?: string;
}

export interface XbelSeparator {
  kind: 'separator';
}

export interface XbelAlias {
  kind: 'alias';
  ref: string;
}

export interface XbelLimits {
  /** Folders nested deeper than this stop the read (xbel-to-html: 100). */
  maxFolderDepth: number;
}

/**
 * Elements nested deeper than this stop the read whatever they are: a parser's open-element
 * stack is the memory a nesting bomb grows, and 100 folder levels with their titles need ~105.
 */
export const MAX_ELEMENT_DEPTH = 512;
/** Bytes decoded and handed to the parser between two yields to the event loop (~2 ms of parsing). */
const SLICE_BYTES = 128 * 1024;

/** The XBEL content elements; anything else (info, metadata, foreign markup) is skipped whole. */
type Frame =
  | { kind: 'xbel'; node: XbelDocument }
  | { kind: 'folder'; node: XbelFolder }
  | { kind: 'bookmark'; node: XbelBookmark }
  | { kind: 'text'; target: { title?: string; desc?: string }; field: 'title' | 'desc'; parts: string[] }
  | { kind: 'other' };

const invalid = (message: string) => invalidArgument('INVALID_XBEL', message);

/**
 * Reads an XBEL file with a strict, non-validating streaming XML parser (saxes): well-formedness
 * is checked, no DTD is read or fetched, and no entity other than XML's five and character
 * references is known, so entity bombs and external entities fail at their first use. A DOCTYPE
 * with an internal subset is refused outright. Every step is linear in the input; nesting is
 * capped; the event loop gets a turn after every slice.
 */
export async function readXbel(bytes: Uint8Array, limits: XbelLimits, signal?: AbortSignal): Promise<XbelDocument> {
  const { decoder, start } = xmlDecoder(bytes);
  const doc: XbelDocument = {
    children: [],
    ids: new Map(),
    counts: { folder: 0, bookmark: 0, separator: 0, alias: 0 },
  };
  const stack: Frame[] = [];
  let folderDepth = 0;
  const parser = new SaxesParser({ xmlns: false });

  parser.on('doctype', (doctype) => {
    if (hasInternalSubset(doctype))
      throw invalid(
        'the file declares a DTD internal subset (entity declarations); XBEL needs none and it is not read',
      );
  });
  parser.on('opentag', (tag) => {
    if (stack.length >= MAX_ELEMENT_DEPTH) throw invalid(`elements are nested deeper than ${MAX_ELEMENT_DEPTH} levels`);
    const parent = stack.at(-1);
    if (!parent) {
      if (tag.name !== 'xbel') throw invalid(`the root element is <${tag.name}>, not <xbel>`);
      stack.push({ kind: 'xbel', node: doc });
      return;
    }
    const attr = (name: string) => {
      const value = tag.attributes[name];
      return typeof value === 'string' && value.trim() !== '' ? detached(value.trim()) : undefined;
    };
    const container = parent.kind === 'xbel' || parent.kind === 'folder' ? parent.node : undefined;
    const item = container && itemOf(tag.name, attr);
    if (item) {
      container.children.push(item);
      doc.counts[item.kind]++;
      const id = attr('id');
      if (id !== undefined && item.kind !== 'separator' && item.kind !== 'alias' && !doc.ids.has(id))
        doc.ids.set(id, item);
      if (item.kind === 'folder') {
        folderDepth++;
        if (folderDepth > limits.maxFolderDepth)
          throw invalidArgument(
            'NESTING_TOO_DEEP',
            `folders are nested deeper than ${limits.maxFolderDepth} levels; ` +
              `at most ${limits.maxFolderDepth} are supported`,
          );
        stack.push({ kind: 'folder', node: item });
      } else if (item.kind === 'bookmark') stack.push({ kind: 'bookmark', node: item });
      else stack.push({ kind: 'other' });
      return;
    }
    const described = parent.kind === 'xbel' || parent.kind === 'folder' || parent.kind === 'bookmark';
    if (described && (tag.name === 'title' || tag.name === 'desc')) {
      stack.push({ kind: 'text', target: parent.node, field: tag.name, parts: [] });
      return;
    }
    stack.push({ kind: 'other' });
  });
  const onText = (chunk: string) => {
    const frame = stack.at(-1);
    if (frame?.kind === 'text') frame.parts.push(chunk);
  };
  parser.on('text', onText);
  parser.on('cdata', onText);
  parser.on('closetag', () => {
    const frame = stack.pop();
    if (frame?.kind === 'folder') folderDepth--;
    else if (frame?.kind === 'text') {
      frame.target[frame.field] = detached((frame.target[frame.field] ?? '') + frame.parts.join(''));
    }
  });

  try {
    for (let at = start; at < bytes.length; at += SLICE_BYTES) {
      parser.write(decoded(decoder, bytes.subarray(at, at + SLICE_BYTES), true));
      await yieldToLoop();
      signal?.throwIfAborted();
    }
    parser.write(decoded(decoder, undefined, false));
    parser.close();
  } catch (err) {
    if (err instanceof ServiceError || signal?.aborted) throw err;
    throw invalid(`the file is not valid XML: ${err instanceof Error ? err.message : String(err)}`);
  }
  return doc;
}

export function itemCount(doc: XbelDocument): number {
  return doc.counts.folder + doc.counts.bookmark + doc.counts.separator + doc.counts.alias;
}

function itemOf(name: string, attr: (name: string) => string | undefined): XbelItem | undefined {
  switch (name) {
    case 'folder':
      return { kind: 'folder', added: attr('added'), modified: attr('modified'), children: [] };
    case 'bookmark':
      return {
        kind: 'bookmark',
        href: attr('href') ?? '',
        added: attr('added'),
        visited: attr('visited'),
        modified: attr('modified'),
      };
    case 'separator':
      return { kind: 'separator' };
    case 'alias': {
      const ref = attr('ref');
      return ref === undefined ? undefined : { kind: 'alias', ref };
    }
    default:
      return undefined;
  }
}

/** True when a DOCTYPE body has `[` outside its quoted public and system literals. */
export function hasInternalSubset(doctype: string): boolean {
  let quote = '';
  for (const ch of doctype) {
    if (quote) {
      if (ch === quote) quote = '';
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '[') return true;
  }
  return false;
}

/**
 * The decoder of a file's bytes, and where its text starts: a byte-order mark decides, else the
 * XML declaration's encoding, else UTF-8. It decodes slice by slice, so the file is never held
 * as one string besides its bytes; malformed bytes are an error rather than replacement
 * characters in someone's bookmarks.
 */
function xmlDecoder(bytes: Uint8Array): { decoder: TextDecoder; start: number } {
  let label = 'utf-8';
  let start = 0;
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) start = 3;
  else if (bytes[0] === 0xff && bytes[1] === 0xfe) [label, start] = ['utf-16le', 2];
  else if (bytes[0] === 0xfe && bytes[1] === 0xff) [label, start] = ['utf-16be', 2];
  else label = declaredEncoding(bytes) ?? label;
  try {
    return { decoder: new TextDecoder(label, { fatal: true }), start };
  } catch {
    throw invalid(`the file declares an encoding this service does not read: ${label}`);
  }
}

function decoded(decoder: TextDecoder, slice: Uint8Array | undefined, more: boolean): string {
  try {
    return decoder.decode(slice, { stream: more });
  } catch {
    throw invalid(`the file is not valid ${decoder.encoding} text`);
  }
}

/**
 * A copy of a string the document keeps. V8 makes a substring a view of the string it was cut
 * from, so one kept date would keep the parser's whole 128 KiB slice alive, and with them all the
 * text of the file, more than doubling the document's memory (docs/decisions/0042-xbel-to-html.md).
 */
function detached(value: string): string {
  return Buffer.from(value, 'utf8').toString('utf8');
}

const DECLARATION = /^<\?xml[^>]{0,200}?encoding\s*=\s*["']([A-Za-z0-9._-]{1,40})["']/;

function declaredEncoding(bytes: Uint8Array): string | undefined {
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, 256)).toString('latin1');
  return DECLARATION.exec(head)?.[1];
}
