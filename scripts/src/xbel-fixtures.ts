import * as cheerio from 'cheerio';

/**
 * Bookmark fixtures for the bookmark service's tests and benchmark: XBEL files written from a
 * tree, Floccus's encryption written independently of the service (WebCrypto, as the extension
 * itself does), and Netscape bookmark HTML read back the way a browser's parser sees it.
 */

export type Item = Folder | Bookmark | Separator | Alias;

export interface Folder {
  kind: 'folder';
  title: string;
  id?: string;
  desc?: string;
  added?: string;
  modified?: string;
  children: Item[];
}

export interface Bookmark {
  kind: 'bookmark';
  href: string;
  title: string;
  id?: string;
  desc?: string;
  added?: string;
  visited?: string;
  modified?: string;
}

export interface Separator {
  kind: 'separator';
}

export interface Alias {
  kind: 'alias';
  ref: string;
}

export const folder = (title: string, children: Item[], extra: Partial<Folder> = {}): Folder => ({
  kind: 'folder',
  title,
  children,
  ...extra,
});
export const bookmark = (href: string, title: string, extra: Partial<Bookmark> = {}): Bookmark => ({
  kind: 'bookmark',
  href,
  title,
  ...extra,
});
export const separator = (): Separator => ({ kind: 'separator' });
export const alias = (ref: string): Alias => ({ kind: 'alias', ref });

const XML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };
const xml = (value: string) => value.replace(/[&<>"]/g, (ch) => XML_ESCAPES[ch] ?? ch);

function attrs(pairs: Record<string, string | undefined>): string {
  return Object.entries(pairs)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => ` ${name}="${xml(value ?? '')}"`)
    .join('');
}

function itemXml(item: Item, out: string[]): void {
  if (item.kind === 'separator') out.push('<separator/>');
  else if (item.kind === 'alias') out.push(`<alias ref="${xml(item.ref)}"/>`);
  else if (item.kind === 'bookmark') {
    const { href, id, added, visited, modified } = item;
    out.push(`<bookmark${attrs({ href, id, added, visited, modified })}><title>${xml(item.title)}</title>`);
    if (item.desc !== undefined) out.push(`<desc>${xml(item.desc)}</desc>`);
    out.push('</bookmark>');
  } else {
    const { id, added, modified } = item;
    out.push(`<folder${attrs({ id, added, modified })}><title>${xml(item.title)}</title>`);
    if (item.desc !== undefined) out.push(`<desc>${xml(item.desc)}</desc>`);
    for (const child of item.children) itemXml(child, out);
    out.push('</folder>');
  }
}

/** An XBEL file as Floccus writes one: declaration, public DOCTYPE, its id comment, the items. */
export function xbelOf(items: Item[], title?: string): string {
  const out = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<!DOCTYPE xbel PUBLIC "+//IDN python.org//DTD XML Bookmark Exchange Language 1.0//EN//XML" ' +
      '"http://pyxml.sourceforge.net/topics/dtds/xbel.dtd">',
    '<xbel version="1.0">',
    '<!--- highestId :1000: for Floccus bookmark sync browser extension -->',
  ];
  if (title !== undefined) out.push(`<title>${xml(title)}</title>`);
  for (const item of items) itemXml(item, out);
  out.push('</xbel>');
  return out.join('\n');
}

/** `depth` folders, each inside the previous, with a bookmark in the innermost. */
export function nestedFolders(depth: number): Folder {
  let inner: Folder = folder(`level ${depth}`, [bookmark('https://example.com/deepest', 'deepest')]);
  for (let level = depth - 1; level >= 1; level--) inner = folder(`level ${level}`, [inner]);
  return inner;
}

/**
 * A large XBEL file of about `bytes` bytes: folders three deep, each holding bookmarks with
 * dates, descriptions and escaped characters, built as a list of strings and joined once.
 */
export function largeXbel(bytes: number): { text: string; bookmarks: number; folders: number } {
  const parts = [xbelOf([]).replace('</xbel>', '')];
  let size = parts[0]?.length ?? 0;
  let bookmarks = 0;
  let folders = 0;
  const push = (part: string) => {
    parts.push(part);
    size += Buffer.byteLength(part);
  };
  const fill = (depth: number) => {
    folders++;
    push(`<folder id="f${folders}" added="2023-05-06T07:08:09Z"><title>Folder ${folders} &amp; friends</title>\n`);
    for (let i = 0; i < 25 && size < bytes; i++) {
      bookmarks++;
      push(
        `<bookmark href="https://example.com/articles/${bookmarks}?ref=xbel&amp;page=${i}" id="b${bookmarks}" ` +
          `added="2023-05-06T07:08:09Z" visited="2024-01-02T03:04:05.678+02:00" modified="2024-02-03T04:05:06Z">` +
          `<title>Article ${bookmarks}: “quotes” &lt;and&gt; ünïcödé</title>` +
          `<desc>Saved for later, item ${bookmarks}</desc>` +
          '</bookmark>\n',
      );
    }
    if (depth < 3) for (let j = 0; j < 4 && size < bytes; j++) fill(depth + 1);
    push('</folder>\n');
  };
  while (size < bytes) fill(1);
  parts.push('</xbel>\n');
  return { text: parts.join(''), bookmarks, folders };
}

/** Lowercase hex of `n` random bytes: Floccus's salt is 64 of them. */
const randomHex = (n: number) => Buffer.from(crypto.getRandomValues(new Uint8Array(n))).toString('hex');

/**
 * Encrypts as the Floccus extension does (its src/lib/Crypto.ts, with WebCrypto): PBKDF2-SHA-256,
 * 250,000 iterations, salt = the salt string's UTF-8 bytes -> AES-256-GCM with a 16-byte IV;
 * the file is JSON `{ciphertext: base64(IV | ciphertext | tag), salt}`.
 */
export async function floccusEncrypt(plaintext: string, passphrase: string, salt = randomHex(64)): Promise<string> {
  const enc = new TextEncoder();
  const material = await crypto.subtle.importKey('raw', enc.encode(passphrase), 'PBKDF2', false, ['deriveKey']);
  const key = await crypto.subtle.deriveKey(
    { name: 'PBKDF2', hash: 'SHA-256', salt: enc.encode(salt), iterations: 250_000 },
    material,
    { name: 'AES-GCM', length: 256 },
    false,
    ['encrypt'],
  );
  const iv = crypto.getRandomValues(new Uint8Array(16));
  const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, key, enc.encode(plaintext)));
  const ciphertext = Buffer.concat([iv, sealed]).toString('base64');
  return JSON.stringify({ ciphertext, salt });
}

/** What a browser's importer finds in Netscape bookmark HTML. */
export type Imported = ImportedFolder | ImportedBookmark | { kind: 'separator' };

export interface ImportedFolder {
  kind: 'folder';
  title: string;
  attributes: Record<string, string>;
  desc?: string;
  children: Imported[];
}

export interface ImportedBookmark {
  kind: 'bookmark';
  href: string;
  title: string;
  attributes: Record<string, string>;
  desc?: string;
}

/**
 * Reads Netscape bookmark HTML as a browser does: an HTML5 parser (parse5, through cheerio)
 * builds the DOM, and a walk in document order, like Firefox's importer, turns `<H3>` into a
 * folder whose items are the next `<DL>`, `<A>` into a bookmark, `<HR>` into a separator and
 * `<DD>` into the description of the item before it. (The parser nests these unevenly: an
 * `<HR>` lands inside the preceding `<DT>`, a folder's `<DL>` inside its `<DD>`.)
 */
export function importNetscapeHtml(html: string): { title: string; items: Imported[] } {
  const $ = cheerio.load(html);
  const root: ImportedFolder = { kind: 'folder', title: '', attributes: {}, children: [] };
  const open: ImportedFolder[] = [];
  let pending: ImportedFolder | undefined;
  let last: ImportedFolder | ImportedBookmark | undefined;
  const current = () => open.at(-1) ?? root;

  const body = $('body');
  const walk = (el: typeof body) => {
    const node = el.get(0);
    if (!node) return;
    const children = () => el.children().each((_, child) => walk($(child)));
    switch (node.name) {
      case 'h3':
        pending = { kind: 'folder', title: el.text(), attributes: { ...node.attribs }, children: [] };
        current().children.push(pending);
        last = pending;
        return;
      case 'a': {
        const { href = '', ...attributes } = node.attribs;
        last = { kind: 'bookmark', href, title: el.text(), attributes };
        current().children.push(last);
        return;
      }
      case 'hr':
        current().children.push({ kind: 'separator' });
        last = undefined;
        return;
      case 'dd':
        if (last)
          last.desc = el
            .contents()
            .filter((_, child) => child.type === 'text')
            .text()
            .trim();
        break;
      case 'dl':
        open.push(pending ?? current());
        pending = undefined;
        children();
        open.pop();
        return;
    }
    children();
  };
  walk(body);
  // The first <DL> is the root list itself.
  return { title: $('title').text(), items: root.children };
}
