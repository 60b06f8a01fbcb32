import {
  alias,
  bookmark,
  folder,
  type Imported,
  type Item,
  importNetscapeHtml,
  nestedFolders,
  separator,
  xbelOf,
} from '@webutil/scripts/xbel-fixtures';
import { expect } from 'chai';
import { netscapeHtml, unixSeconds } from '../src/netscape-html.js';
import { readXbel } from '../src/xbel.js';
import { failure } from './service-failure.js';

const limits = { maxFolderDepth: 100 };

async function convert(xbel: string): Promise<string> {
  const doc = await readXbel(Buffer.from(xbel), limits);
  const pieces: Uint8Array[] = [];
  for await (const piece of netscapeHtml(doc, limits)) pieces.push(piece);
  return Buffer.concat(pieces).toString('utf8');
}

/**
 * What the importer should find for an XBEL tree without aliases: the same tree, dates in Unix
 * seconds (by Date.parse, which reads the zoned and date-only forms the trees use).
 */
function expected(items: Item[]): Imported[] {
  return items.map((item): Imported => {
    if (item.kind === 'separator') return item;
    if (item.kind === 'alias') throw new Error('aliases have no expected form of their own');
    const seconds = (iso?: string) => (iso === undefined ? undefined : String(Math.floor(Date.parse(iso) / 1000)));
    const attributes = (pairs: Record<string, string | undefined>) =>
      Object.fromEntries(Object.entries(pairs).filter(([, v]) => v !== undefined)) as Record<string, string>;
    const desc = item.desc === undefined ? {} : { desc: item.desc.replace(/\s+/g, ' ').trim() };
    if (item.kind === 'bookmark')
      return {
        kind: 'bookmark',
        href: item.href,
        title: item.title,
        attributes: attributes({
          add_date: seconds(item.added),
          last_visit: seconds(item.visited),
          last_modified: seconds(item.modified),
        }),
        ...desc,
      };
    return {
      kind: 'folder',
      title: item.title,
      attributes: attributes({ add_date: seconds(item.added), last_modified: seconds(item.modified) }),
      ...desc,
      children: expected(item.children),
    };
  });
}

describe('Netscape bookmark HTML from XBEL', () => {
  const tree: Item[] = [
    folder(
      'Work & <Projects>',
      [
        bookmark('https://example.com/a?x=1&y="2"', 'Tom & Jerry <script>alert(1)</script>', {
          added: '2024-01-02T03:04:05Z',
          visited: '2024-01-03T00:00:00.999+02:00',
          modified: '2024-01-04',
          desc: 'first line\nsecond line',
        }),
        separator(),
        folder('Nested', [bookmark('https://example.com/b', 'Ünïcödé 名前 🚀')], { added: '2020-02-29T12:00:00Z' }),
      ],
      { added: '2023-12-31T23:59:59-01:00', modified: '2024-06-01T00:00:00Z', desc: 'folder notes' },
    ),
    separator(),
    bookmark('https://example.org/', 'top level'),
    folder('Empty', []),
  ];

  it('is re-read by an HTML5 parser as the input tree: folders, separators, descriptions, dates, text', async () => {
    const html = await convert(xbelOf(tree, 'My bookmarks'));
    const imported = importNetscapeHtml(html);
    expect(imported.title).to.equal('My bookmarks');
    expect(imported.items).to.deep.equal(expected(tree));
    expect(html).to.include('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).not.to.include('<script>');
  });

  it('writes the importers’ line format: standard header, one item per line, uppercase, double quotes', async () => {
    const html = await convert(xbelOf(tree));
    const lines = html.split('\n');
    expect(lines.slice(0, 8)).to.deep.equal([
      '<!DOCTYPE NETSCAPE-Bookmark-file-1>',
      '<!-- This is an automatically generated file.',
      '     It will be read and overwritten.',
      '     DO NOT EDIT! -->',
      '<META HTTP-EQUIV="Content-Type" CONTENT="text/html; charset=UTF-8">',
      '<TITLE>Bookmarks</TITLE>',
      '<H1>Bookmarks</H1>',
      '<DL><p>',
    ]);
    const shapes = [
      /^ *<DT><H3( [A-Z_]+="\d+")*>[^<>\n]*<\/H3>$/,
      /^ *<DT><A HREF="[^"<>\n]*"( [A-Z_]+="\d+")*>[^<>\n]*<\/A>$/,
      /^ *<DD>[^<>\n]*$/,
      /^ *<DL><p>$/,
      /^ *<\/DL><p>$/,
      /^ *<HR>$/,
      /^$/,
    ];
    for (const line of lines.slice(8))
      expect(
        shapes.some((shape) => shape.test(line)),
        line,
      ).to.equal(true);
    expect(lines.filter((line) => line.includes('<DT>'))).to.have.length(6);
    expect(html).to.include(
      '<DT><A HREF="https://example.com/a?x=1&amp;y=&quot;2&quot;" ADD_DATE="1704164645" ' +
        'LAST_VISIT="1704232800" LAST_MODIFIED="1704326400">',
    );
  });

  it('replaces aliases by the bookmark or folder they reference, in place and in order', async () => {
    const html = await convert(
      xbelOf([
        folder('Source', [bookmark('https://example.com/1', 'one')], { id: 'src' }),
        bookmark('https://example.com/2', 'two', { id: 'b2' }),
        folder('Links', [alias('b2'), alias('src'), alias('missing'), bookmark('https://example.com/3', 'three')]),
      ]),
    );
    const source: Imported = {
      kind: 'folder',
      title: 'Source',
      attributes: {},
      children: [{ kind: 'bookmark', href: 'https://example.com/1', title: 'one', attributes: {} }],
    };
    const two: Imported = { kind: 'bookmark', href: 'https://example.com/2', title: 'two', attributes: {} };
    expect(importNetscapeHtml(html).items).to.deep.equal([
      source,
      two,
      {
        kind: 'folder',
        title: 'Links',
        attributes: {},
        children: [two, source, { kind: 'bookmark', href: 'https://example.com/3', title: 'three', attributes: {} }],
      },
    ]);
  });

  it('ends alias loops: an alias that would re-enter a folder it sits in is left out', async () => {
    const html = await convert(
      xbelOf([
        folder('A', [bookmark('https://example.com/a', 'a'), alias('b'), alias('a')], { id: 'a' }),
        folder('B', [bookmark('https://example.com/b', 'b'), alias('a')], { id: 'b' }),
      ]),
    );
    const a = (children: Imported[]): Imported => ({
      kind: 'folder',
      title: 'A',
      attributes: {},
      children: [{ kind: 'bookmark', href: 'https://example.com/a', title: 'a', attributes: {} }, ...children],
    });
    const b = (children: Imported[]): Imported => ({
      kind: 'folder',
      title: 'B',
      attributes: {},
      children: [{ kind: 'bookmark', href: 'https://example.com/b', title: 'b', attributes: {} }, ...children],
    });
    // A holds a copy of B, whose alias back to A is dropped; A's alias to itself is dropped.
    expect(importNetscapeHtml(html).items).to.deep.equal([a([b([])]), b([a([])])]);
  });

  it('refuses aliases that multiply the output beyond the file’s own size', async () => {
    // Each level aliases the previous one 10 times: 10^6 copies from a 60-line file.
    const levels: Item[] = [folder('L0', [bookmark('https://example.com/', 'x')], { id: 'l0' })];
    for (let i = 1; i <= 6; i++)
      levels.push(
        folder(
          `L${i}`,
          Array.from({ length: 10 }, () => alias(`l${i - 1}`)),
          { id: `l${i}` },
        ),
      );
    const err = await failure(convert(xbelOf(levels)));
    expect(err.reason).to.equal('ALIAS_EXPANSION_TOO_LARGE');
    expect(err.message).to.match(/aliases copy more than 10000 items/);
  });

  it('accepts 100 nested folder levels and refuses 101 with a clear error', async () => {
    const html = await convert(xbelOf([nestedFolders(100)]));
    let depth = 0;
    let items = importNetscapeHtml(html).items;
    while (items[0]?.kind === 'folder') {
      depth++;
      items = items[0].children;
    }
    expect(depth).to.equal(100);
    expect(items).to.deep.equal([
      { kind: 'bookmark', href: 'https://example.com/deepest', title: 'deepest', attributes: {} },
    ]);

    const err = await failure(convert(xbelOf([nestedFolders(101)])));
    expect(err.reason).to.equal('NESTING_TOO_DEEP');
    expect(err.message).to.equal('folders are nested deeper than 100 levels; at most 100 are supported');
  });

  it('refuses an alias whose copy would nest folders deeper than 100 levels', async () => {
    const deep = nestedFolders(100);
    const err = await failure(convert(xbelOf([folder('holder', [alias('x')]), { ...deep, id: 'x' }])));
    expect(err.reason).to.equal('NESTING_TOO_DEEP');
  });
});

describe('ISO 8601 dates to Unix seconds', () => {
  const cases: [string, number | undefined][] = [
    ['1970-01-01T00:00:00Z', 0],
    ['2024-01-02T03:04:05Z', 1704164645],
    ['2024-01-02T03:04:05.999Z', 1704164645],
    ['2024-01-02T05:04:05+02:00', 1704164645],
    ['2024-01-02T01:04:05-0200', 1704164645],
    ['2024-01-02T03:04:05', 1704164645],
    ['2024-01-02', 1704153600],
    ['2024-02-29T00:00:00Z', 1709164800],
    ['2000-02-29T12:00:00Z', 951825600],
    ['1969-12-31T23:59:59Z', -1],
    ['1600-03-01', -11670912000],
    ['2100-02-28', 4107456000],
    ['2100-02-29', undefined],
    ['2023-02-29T00:00:00Z', undefined],
    ['2024-13-01T00:00:00Z', undefined],
    ['2024-01-01T24:00:00Z', undefined],
    ['yesterday', undefined],
    ['1704164645', undefined],
    ['', undefined],
  ];
  for (const [iso, seconds] of cases) {
    it(`${JSON.stringify(iso)} -> ${seconds}`, () => expect(unixSeconds(iso)).to.equal(seconds));
  }
});
