import { expect } from 'chai';
import { HeadReader, MAX_DEPTH, MAX_ELEMENTS, MAX_JSON_LD_BLOCKS, type PageHead } from '../src/page-head.js';

/** Feeds `html` in chunks as the page reader does; returns the head and how many chunks were fed. */
function read(html: string, chunkSize = 7): { head: PageHead; chunksFed: number } {
  const reader = new HeadReader();
  let chunksFed = 0;
  for (let i = 0; i < html.length && !reader.done; i += chunkSize) {
    reader.write(html.slice(i, i + chunkSize));
    chunksFed++;
  }
  return { head: reader.end(), chunksFed };
}

describe('HeadReader', () => {
  it('reads title, metas, links and base of the head, with tags split across chunks', () => {
    const { head } = read(
      '<!DOCTYPE html><HTML><Head><META CHARSET="utf-8"><title>  A &amp;\n title </title>' +
        '<meta Name="Description" content="Desc &quot;q&quot;"><meta property="OG:Title" content="OG">' +
        '<meta http-equiv="Content-Type" content="text/html; charset=utf-8">' +
        '<link rel="Shortcut Icon" href=" /f.ico "><link rel="canonical" href="https://e.test/">' +
        '<base href="/root/"><base href="/ignored/"></head><body><title>not this</title></body></HTML>',
    );
    expect(head.title).to.equal('A & title');
    expect(head.metas).to.deep.equal([
      { name: undefined, property: undefined, httpEquiv: undefined, charset: 'utf-8', content: undefined },
      { name: 'description', property: undefined, httpEquiv: undefined, charset: undefined, content: 'Desc "q"' },
      { name: undefined, property: 'og:title', httpEquiv: undefined, charset: undefined, content: 'OG' },
      {
        name: undefined,
        property: undefined,
        httpEquiv: 'content-type',
        charset: undefined,
        content: 'text/html; charset=utf-8',
      },
    ]);
    expect(head.links).to.deep.equal([
      { rel: ['shortcut', 'icon'], href: '/f.ico' },
      { rel: ['canonical'], href: 'https://e.test/' },
    ]);
    expect(head.baseHref).to.equal('/root/');
    expect(head.stop).to.equal('head-end');
  });

  it('stops at <body> when the head is not closed, and reads to the end of a page without either', () => {
    const opened = read('<html><head><title>T</title><body><meta name="late" content="x">');
    expect(opened.head.stop).to.equal('head-end');
    expect(opened.head.metas).to.deep.equal([]);
    const bare = read('<title>T</title><meta name="description" content="d"><p>text');
    expect(bare.head.stop).to.equal('input-end');
    expect(bare.head.metas).to.have.length(1);
    expect(read('<html><body>hi</body></html>').head.title).to.equal(undefined);
  });

  it('reads JSON-LD from the body too, and nothing else of it', () => {
    const ld = (n: number) => `<script type="application/ld+json">{"n":${n}}</script>`;
    const { head } = read(
      `<html><head>${ld(1)}<title>T</title></head><body><title>B</title><meta name="late" content="x">` +
        `<div><section>${ld(2)}</section><script>var x = 1;</script>${ld(3)}</div></body></html>`,
    );
    expect(head.jsonLd.map((b) => b.text)).to.deep.equal(['{"n":1}', '{"n":2}', '{"n":3}']);
    expect(head.title).to.equal('T');
    expect(head.metas).to.deep.equal([]);
    expect(head.stop).to.equal('head-end');
  });

  it(`stops reading the body at ${MAX_JSON_LD_BLOCKS} JSON-LD blocks`, () => {
    const block = '<script type="application/ld+json">{}</script>';
    const html = `<head></head><body>${block.repeat(MAX_JSON_LD_BLOCKS)}${'<p>x</p>'.repeat(100_000)}`;
    const { head, chunksFed } = read(html, 4096);
    expect(head.jsonLd).to.have.length(MAX_JSON_LD_BLOCKS);
    expect(chunksFed).to.equal(1);
  });

  it('a body nested past the depth bound ends the reading, and the head stays whole', () => {
    const { head } = read(`<head><title>T</title></head><body>${'<div>'.repeat(10_000)}`, 64 * 1024);
    expect(head.stop).to.equal('head-end');
    expect(head.title).to.equal('T');
  });

  it('tells an empty title from a missing one', () => {
    expect(read('<head><title></title></head>').head.title).to.equal('');
  });

  describe('hostile markup costs work linear in a bounded prefix', () => {
    const chunk = 64 * 1024;

    it(`stops at ${MAX_DEPTH} open elements, in the first chunk of 5 MB of nesting`, () => {
      const nested = `<html><head><title>T</title>${'<b>'.repeat(1_700_000)}`;
      const { head, chunksFed } = read(nested, chunk);
      expect(head.stop).to.equal('depth');
      expect(head.title).to.equal('T');
      expect(chunksFed).to.equal(1);
    });

    it('counts void elements as closed, so a long flat head is not "deep"', () => {
      const flat = `<head>${'<meta name="a" content="b"><link rel="x" href="y">'.repeat(MAX_ELEMENTS / 4)}</head>`;
      const { head } = read(flat, chunk);
      expect(head.stop).to.equal('head-end');
      expect(head.metas).to.have.length(MAX_ELEMENTS / 4);
    });

    it(`stops at ${MAX_ELEMENTS} tags`, () => {
      const { head, chunksFed } = read(`<head>${'<meta name="x" content="y">'.repeat(200_000)}`, chunk);
      expect(head.stop).to.equal('elements');
      expect(head.metas.length + head.links.length).to.equal(MAX_ELEMENTS);
      expect(chunksFed).to.equal(1);
    });

    it('keeps at most 2 KB of an unclosed title', () => {
      const { head } = read(`<head><title>${'x'.repeat(1_000_000)}`, chunk);
      expect(head.title).to.have.length(2048);
    });
  });
});
