import { invalidArgument } from '@webutil/kit';
import { Parser } from 'htmlparser2';

/**
 * Netscape bookmark HTML (every browser's export) read as a tree and as spans of the text, so a
 * check can list its bookmarks and a cleaned copy can leave some out without touching the rest.
 */

export interface NetscapeBookmark {
  kind: 'bookmark';
  href: string;
  title: string;
  /** Attribute values as written (Unix seconds). */
  addDate?: string;
  lastVisit?: string;
  lastModified?: string;
  desc?: string;
  /** Where the item stands in the text: from its <DT> (or <A>) to the end of its </A>. */
  start: number;
  end: number;
  /** The end of the <A ...> start tag (exclusive), where its HREF is. */
  openEnd: number;
  /** The folder it is in (undefined at the top): membership by reference, never a copied chain. */
  folder?: NetscapeFolder;
}

export interface NetscapeFolder {
  kind: 'folder';
  title: string;
  addDate?: string;
  lastModified?: string;
  children: NetscapeItem[];
  /** The folder it is in (undefined at the top). */
  parent?: NetscapeFolder;
}

export interface NetscapeSeparator {
  kind: 'separator';
}

export type NetscapeItem = NetscapeBookmark | NetscapeFolder | NetscapeSeparator;

export interface NetscapeDocument {
  title: string;
  children: NetscapeItem[];
  /** Every bookmark in file order. */
  bookmarks: NetscapeBookmark[];
}

/** The spec's folder nesting limit (as for xbel-to-html). */
export const MAX_HTML_FOLDER_DEPTH = 100;
/**
 * Most items (bookmarks, folders and separators) one file may hold, refused the moment the
 * reader passes it: what the tree costs stays bounded whatever the file's shape (decision 0292).
 */
export const MAX_HTML_ITEMS = 50_000;

/** The folders a bookmark is in, outermost first. */
export function folderChain(folder: NetscapeFolder | undefined): NetscapeFolder[] {
  const chain: NetscapeFolder[] = [];
  for (let f = folder; f; f = f.parent) chain.push(f);
  return chain.reverse();
}

/** True when the text looks like a Netscape bookmark file rather than some other HTML page. */
export function looksLikeNetscape(head: string): boolean {
  return /<!DOCTYPE\s+NETSCAPE-Bookmark-file/i.test(head) || /<DL\b[^>]*>\s*(<p>)?\s*<DT\b/i.test(head);
}

/**
 * Reads the file with htmlparser2 (linear, no entities beyond HTML's, no scripts): <H3> titles a
 * folder whose items are the next <DL>, <A HREF> is a bookmark, <DD> its description, <HR> a
 * separator. Folders nested deeper than 100 levels, and more than MAX_HTML_ITEMS items, are refused.
 */
export function readNetscape(text: string): NetscapeDocument {
  const doc: NetscapeDocument = { title: '', children: [], bookmarks: [] };
  /** Open lists: the innermost folder each is in (undefined at the top). */
  const lists: { folder?: NetscapeFolder; items: NetscapeItem[] }[] = [];
  let pendingFolder: NetscapeFolder | undefined;
  let text_: string[] | undefined;
  let textTarget: 'title' | 'h1' | 'h3' | 'a' | 'dd' | undefined;
  let current: NetscapeBookmark | undefined;
  let lastBookmark: NetscapeBookmark | undefined;
  const items = () => lists.at(-1)?.items ?? doc.children;
  const openFolder = () => lists.at(-1)?.folder;
  let count = 0;
  const add = (item: NetscapeItem) => {
    if (++count > MAX_HTML_ITEMS)
      throw invalidArgument(
        'TOO_MANY_BOOKMARKS',
        `the file holds more than ${MAX_HTML_ITEMS.toLocaleString('en-US')} bookmarks, folders and separators; ` +
          'split it into smaller files',
      );
    items().push(item);
  };
  const endText = () => {
    const value = (text_ ?? []).join('').replace(/\s+/g, ' ').trim();
    if (textTarget === 'title' || textTarget === 'h1') doc.title ||= value;
    else if (textTarget === 'h3' && pendingFolder) pendingFolder.title = value;
    else if (textTarget === 'a' && current) current.title = value;
    else if (textTarget === 'dd' && lastBookmark) lastBookmark.desc = value;
    text_ = undefined;
    textTarget = undefined;
  };

  const parser: Parser = new Parser(
    {
      onopentag(name, attrs) {
        if (textTarget === 'dd') endText();
        switch (name) {
          case 'title':
          case 'h1':
            textTarget = name;
            text_ = [];
            break;
          case 'h3': {
            pendingFolder = {
              kind: 'folder',
              title: '',
              addDate: attrs.add_date,
              lastModified: attrs.last_modified,
              children: [],
              parent: openFolder(),
            };
            add(pendingFolder);
            textTarget = 'h3';
            text_ = [];
            break;
          }
          case 'dl':
            if (lists.length > MAX_HTML_FOLDER_DEPTH)
              throw invalidArgument(
                'NESTING_TOO_DEEP',
                `folders are nested deeper than ${MAX_HTML_FOLDER_DEPTH} levels; ` +
                  `at most ${MAX_HTML_FOLDER_DEPTH} are supported`,
              );
            lists.push(
              pendingFolder
                ? { folder: pendingFolder, items: pendingFolder.children }
                : { folder: openFolder(), items: items() },
            );
            pendingFolder = undefined;
            break;
          case 'a': {
            if (attrs.href === undefined) break;
            const aStart = parser.startIndex;
            const before = text.slice(Math.max(0, aStart - 16), aStart);
            const dt = /<dt>\s*$/i.exec(before);
            current = {
              kind: 'bookmark',
              href: attrs.href.trim(),
              title: '',
              addDate: attrs.add_date,
              lastVisit: attrs.last_visit,
              lastModified: attrs.last_modified,
              start: dt ? aStart - (before.length - dt.index) : aStart,
              end: parser.endIndex + 1,
              openEnd: parser.endIndex + 1,
              folder: openFolder(),
            };
            add(current);
            doc.bookmarks.push(current);
            textTarget = 'a';
            text_ = [];
            break;
          }
          case 'dd':
            if (lastBookmark) {
              textTarget = 'dd';
              text_ = [];
            }
            break;
          case 'hr':
            add({ kind: 'separator' });
            break;
        }
      },
      ontext(chunk) {
        text_?.push(chunk);
      },
      onclosetag(name) {
        if (name === textTarget) endText();
        if (name === 'a' && current) {
          current.end = Math.max(current.end, parser.endIndex + 1);
          lastBookmark = current;
          current = undefined;
        } else if (name === 'dl') {
          if (textTarget === 'dd') endText();
          lists.pop();
          lastBookmark = undefined;
        } else if (name === 'dt') {
          // A <DT> closed before a <DD> ends the bookmark's lines.
        }
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(text);
  parser.end();
  return doc;
}
