import { expect } from 'chai';
import { charsetOf } from '../src/page.js';
import { rootElement } from '../src/site-files.js';

describe('rootElement', () => {
  const cases: [string, string | undefined][] = [
    ['<?xml version="1.0"?>\n<!-- generated --><urlset xmlns="x"><url/></urlset>', 'urlset'],
    ['\uFEFF<sitemapindex><sitemap/></sitemapindex>', 'sitemapindex'],
    ['<sm:urlset xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9"/>', 'urlset'],
    ['<!DOCTYPE html><html><body>not found</body></html>', 'html'],
    ['plain text, no markup', undefined],
    ['', undefined],
  ];
  for (const [xml, root] of cases) {
    it(`${JSON.stringify(xml.slice(0, 30))} -> ${root}`, () => expect(rootElement(xml)).to.equal(root));
  }

  it('reads only to the first element of a long document', () => {
    expect(rootElement(`<urlset>${'<url><loc>/x</loc></url>'.repeat(100_000)}`)).to.equal('urlset');
  });
});

describe('charsetOf', () => {
  const body = (html: string) => Buffer.from(html, 'latin1');
  it('takes the Content-Type charset first', () => {
    expect(charsetOf('text/html; charset=ISO-8859-1', body('<meta charset="utf-8">'))).to.equal('windows-1252');
  });
  it('else a <meta charset> or http-equiv in the first 1,024 bytes', () => {
    expect(charsetOf('text/html', body('<head><meta charset="shift_jis">'))).to.equal('shift_jis');
    expect(charsetOf(undefined, body('<meta http-equiv="Content-Type" content="text/html; charset=koi8-r">'))).to.equal(
      'koi8-r',
    );
    expect(charsetOf(undefined, body(`${' '.repeat(1100)}<meta charset="shift_jis">`))).to.equal('utf-8');
  });
  it('else UTF-8, also for labels TextDecoder does not know', () => {
    expect(charsetOf('text/html', body('<p>'))).to.equal('utf-8');
    expect(charsetOf('text/html; charset=x-unknown', body(''))).to.equal('utf-8');
  });
});
