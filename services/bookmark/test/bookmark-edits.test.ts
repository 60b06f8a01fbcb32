import { expect } from 'chai';
import { asLatin1, editNetscape, editXbel, fromLatin1 } from '../src/bookmark-edits.js';
import { listNetscape } from '../src/parse-bookmarks.js';

const none = { drop: new Set<number>(), rewrite: new Map<number, string>() };

describe('bookmark edits (cleaned copies)', () => {
  const xbel = [
    '<?xml version="1.0" encoding="ISO-8859-1"?>\r',
    '<xbel version="1.0">\r',
    '<info><metadata owner="x"><bookmark href="http://not-counted/"/></metadata></info>\r',
    '  <bookmark href="http://a/" id="a"/>\r',
    '  <folder><title>F\u00e9</title>\r',
    "    <bookmark href='http://b/?x=1&amp;y=2'><title>B</title></bookmark>\r",
    '    <bookmark href="http://c/"><title>C</title></bookmark><separator/>\r',
    '  </folder>\r',
    '  <alias ref="a"/>\r',
    '</xbel>\r',
  ].join('\n');
  const bytes = Buffer.from(xbel, 'latin1');

  it('leaves every byte as it was when nothing is edited (any encoding, CRLF)', () => {
    expect(fromLatin1(editXbel(asLatin1(bytes), none)).equals(bytes)).to.equal(true);
  });

  it('drops whole lines, the aliases of a dropped bookmark, and rewrites one href only', () => {
    const out = fromLatin1(
      editXbel(asLatin1(bytes), { drop: new Set([0]), rewrite: new Map([[1, 'https://b.example/?q="1"&r']]) }),
    ).toString('latin1');
    expect(out).to.equal(
      xbel
        .replace('  <bookmark href="http://a/" id="a"/>\r\n', '')
        .replace('  <alias ref="a"/>\r\n', '')
        .replace("href='http://b/?x=1&amp;y=2'", 'href="https://b.example/?q=&quot;1&quot;&amp;r"'),
    );
  });

  it('keeps a separator that shares a line with a dropped bookmark', () => {
    const out = editXbel(xbel, { drop: new Set([2]), rewrite: new Map() });
    expect(out).to.include('    <separator/>\r\n');
    expect(out).not.to.include('http://c/');
  });

  it('counts Netscape bookmarks as the listing does and keeps the rest of the file', () => {
    const html = [
      '<DL><p>',
      '  <DT><H3>Top</H3>',
      '  <DL><p>',
      '    <DT><A HREF="http://one/">One</A>',
      '    <DD>about one',
      '    <DT><A HREF=http://two/ ADD_DATE="1">Two</A>',
      '  </DL><p>',
      '</DL>',
    ].join('\n');
    const listed = listNetscape(html);
    expect(listed.bookmarks.map((b) => [b.url, b.folderPath])).to.deep.equal([
      ['http://one/', ['Top']],
      ['http://two/', ['Top']],
    ]);
    expect(editNetscape(html, none)).to.equal(html);
    expect(editNetscape(html, { drop: new Set([0]), rewrite: new Map([[1, 'https://2/']]) })).to.equal(
      html
        .replace('    <DT><A HREF="http://one/">One</A>\n    <DD>about one\n', '')
        .replace('HREF=http://two/', 'HREF="https://2/"'),
    );
  });
});
