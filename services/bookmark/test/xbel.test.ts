import { monitorEventLoopDelay } from 'node:perf_hooks';
import { largeXbel } from '@webutil/scripts/xbel-fixtures';
import { expect } from 'chai';
import { MAX_ELEMENT_DEPTH, readXbel } from '../src/xbel.js';
import { failure } from './service-failure.js';

const limits = { maxFolderDepth: 100 };
const MB10 = 10 * 1024 * 1024;

const failed = (xml: string | Uint8Array) =>
  failure(readXbel(typeof xml === 'string' ? Buffer.from(xml) : xml, limits));

/** Runs `work`, returning its result, the wall time and the heap growth it caused at its peak. */
async function measured<T>(work: () => Promise<T>): Promise<{ result: T; ms: number; heapGrowthMb: number }> {
  const before = process.memoryUsage().heapUsed;
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().heapUsed);
  }, 5);
  const started = performance.now();
  try {
    const result = await work();
    peak = Math.max(peak, process.memoryUsage().heapUsed);
    return { result, ms: performance.now() - started, heapGrowthMb: (peak - before) / 1e6 };
  } finally {
    clearInterval(sampler);
  }
}

describe('XBEL reader', () => {
  it('reads titles, descriptions, dates, ids, separators and aliases in order', async () => {
    const doc = await readXbel(
      Buffer.from(`<?xml version="1.0" encoding="UTF-8"?>
<xbel version="1.0"><title>Root</title>
  <info><metadata owner="x"><bookmark href="https://ignored.example/"/></metadata></info>
  <folder id="f" added="2024-01-01"><title>F &amp; <![CDATA[<raw>]]></title><desc>about F</desc>
    <bookmark href=" https://example.com/ " id="b" visited="2024-01-02"><title>B</title></bookmark>
    <separator/>
    <alias ref="b"/>
  </folder>
</xbel>`),
      limits,
    );
    expect(doc.title).to.equal('Root');
    expect(doc.counts).to.deep.equal({ folder: 1, bookmark: 1, separator: 1, alias: 1 });
    const [f] = doc.children;
    expect(f).to.deep.include({ kind: 'folder', title: 'F & <raw>', desc: 'about F', added: '2024-01-01' });
    expect(f?.kind === 'folder' && f.children).to.deep.equal([
      {
        kind: 'bookmark',
        href: 'https://example.com/',
        title: 'B',
        added: undefined,
        visited: '2024-01-02',
        modified: undefined,
      },
      { kind: 'separator' },
      { kind: 'alias', ref: 'b' },
    ]);
    expect(doc.ids.get('f')).to.equal(f);
  });

  it('accepts the public DOCTYPE Floccus writes without reading it', async () => {
    const doc = await readXbel(
      Buffer.from(
        '<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE xbel PUBLIC "+//IDN python.org//DTD XML Bookmark ' +
          'Exchange Language 1.0//EN//XML" "http://127.0.0.1:9/xbel[1].dtd">\n<xbel version="1.0"><folder/></xbel>',
      ),
      limits,
    );
    expect(doc.counts.folder).to.equal(1);
  });

  it('reads a BOM, a declared legacy encoding, and refuses bytes that are not text in theirs', async () => {
    const utf8 = await readXbel(Buffer.from('\uFEFF<xbel><title>é</title></xbel>'), limits);
    expect(utf8.title).to.equal('é');
    const latin1 = Buffer.concat([
      Buffer.from('<?xml version="1.0" encoding="ISO-8859-1"?><xbel><title>'),
      Buffer.from([0xe9]),
      Buffer.from('</title></xbel>'),
    ]);
    expect((await readXbel(latin1, limits)).title).to.equal('é');
    const broken = Buffer.concat([Buffer.from('<xbel><title>'), Buffer.from([0xe9]), Buffer.from('</title></xbel>')]);
    expect((await failed(broken)).message).to.equal('the file is not valid utf-8 text');
  });

  it('decodes characters whose bytes straddle two of the slices it reads, in UTF-8 and UTF-16', async () => {
    const SLICE = 128 * 1024;
    const title = '€😀 Straße';
    // White space before <title> puts the title's first character across the first slice boundary.
    const file = (boundary: number) =>
      `<xbel>${' '.repeat(boundary - '<xbel><title>'.length)}<title>${title}</title></xbel>`;
    expect((await readXbel(Buffer.from(file(SLICE - 1)), limits)).title).to.equal(title);
    // After the 2-byte BOM, the surrogate pair of 😀 straddles the boundary.
    const utf16 = Buffer.from(`\uFEFF${file(SLICE / 2 - 2)}`, 'utf16le');
    expect((await readXbel(utf16, limits)).title).to.equal(title);
    const truncated = Buffer.from(`<xbel><title>${title}</title></xbel>`).subarray(0, 15);
    expect((await failed(truncated)).message).to.equal('the file is not valid utf-8 text');
  });

  const invalid: [string, string, RegExp][] = [
    ['an empty file', '', /not valid XML: .*root/],
    ['another root element', '<html><body/></html>', /the root element is <html>, not <xbel>/],
    ['mismatched tags', '<xbel><folder></bookmark></xbel>', /not valid XML: .*unexpected close tag/],
    ['an unclosed root', '<xbel><folder>', /not valid XML: .*unclosed tag/],
    ['text after the root', '<xbel/>junk', /not valid XML: .*text data outside of root node/],
    ['JSON', '{"ciphertext":"x","salt":"y"}', /not valid XML/],
    ['an undeclared entity', '<xbel><title>&nbsp;</title></xbel>', /not valid XML: .*undefined entity/],
  ];
  for (const [what, xml, message] of invalid) {
    it(`refuses ${what} as INVALID_XBEL`, async () => {
      const err = await failed(xml);
      expect(err.reason).to.equal('INVALID_XBEL');
      expect(err.message).to.match(message);
    });
  }

  describe('hostile files fail fast, in bounded memory, reading and fetching nothing', () => {
    it('a billion-laughs entity bomb is refused at its DOCTYPE', async () => {
      const lols = Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i};`.repeat(10)}">`).join('');
      const use = '<xbel><title>&lol9;</title></xbel>';
      const bomb = `<?xml version="1.0"?><!DOCTYPE xbel [<!ENTITY lol0 "lol">${lols}]>${use}`;
      const { result: err, heapGrowthMb } = await measured(() => failed(bomb));
      expect(err.reason).to.equal('INVALID_XBEL');
      expect(err.message).to.match(/DTD internal subset/);
      expect(heapGrowthMb).to.be.below(50);
    });

    it('external entities (a local file, a URL) are refused and never read', async () => {
      for (const target of ['file:///etc/passwd', 'http://127.0.0.1:9/secret']) {
        const err = await failed(
          `<?xml version="1.0"?><!DOCTYPE xbel [<!ENTITY ext SYSTEM "${target}">]><xbel><title>&ext;</title></xbel>`,
        );
        expect(err.message).to.match(/DTD internal subset/);
      }
      // Without a declaration the reference is merely undefined.
      const err = await failed('<xbel><title>&ext;</title></xbel>');
      expect(err.message).to.match(/undefined entity/);
    });

    it('10 MB of nested folders stops at level 101', async () => {
      const { result: err, ms } = await measured(() => failed(`<xbel>${'<folder>'.repeat(MB10 / 8)}`));
      expect(err.reason).to.equal('NESTING_TOO_DEEP');
      expect(ms).to.be.below(5_000);
    });

    it(`10 MB of nested non-folder elements stops at ${MAX_ELEMENT_DEPTH} levels`, async () => {
      const { result: err, heapGrowthMb } = await measured(() => failed(`<xbel>${'<b>'.repeat(MB10 / 3)}`));
      expect(err.message).to.equal(`elements are nested deeper than ${MAX_ELEMENT_DEPTH} levels`);
      expect(heapGrowthMb).to.be.below(200);
    });

    it('a 10 MB single line that never closes its attribute fails at the end of the file', async () => {
      const { result: err, heapGrowthMb } = await measured(() => failed(`<xbel><bookmark href="${'a'.repeat(MB10)}`));
      expect(err.reason).to.equal('INVALID_XBEL');
      expect(heapGrowthMb).to.be.below(200);
    });

    it('a 10 MB single line of valid XBEL is read like any other file', async () => {
      const { text, bookmarks } = largeXbel(MB10 - 1024);
      const doc = await readXbel(Buffer.from(text.replace(/\n/g, '')), limits);
      expect(doc.counts.bookmark).to.equal(bookmarks);
    });
  });

  it('gives the event loop a turn while it reads 10 MB', async () => {
    const { text } = largeXbel(MB10);
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    await readXbel(Buffer.from(text), limits);
    delay.disable();
    // One slice takes a few milliseconds; the whole read takes hundreds.
    expect(delay.max / 1e6).to.be.below(250);
  });
});
