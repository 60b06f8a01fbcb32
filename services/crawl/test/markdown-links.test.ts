import { expect } from 'chai';
import { LinkCollector } from '../src/page/links.js';
import { MAX_MARKDOWN_CHARS, MarkdownSink } from '../src/page/markdown-links.js';
import { renderMarkdown } from '../src/page/markdown-render.js';

const page = new URL('https://example.com/docs/readme.md');

async function read(markdown: string) {
  const collector = new LinkCollector(page, 5000, true, true);
  const sink = new MarkdownSink(collector);
  for (let i = 0; i < markdown.length; i += 7) sink.write(markdown.slice(i, i + 7));
  await sink.end();
  return collector;
}

describe('Markdown pages', () => {
  it('reads links, images, autolinks, reference links and raw HTML as the page’s links', async () => {
    const md =
      '# Guide\n\nSee [install](install.md#setup "Install") and <https://other.test/x>.\n\n' +
      '![logo](img/logo.png)\n\n[ref]: /ref\n\nA [reference][ref], https://www.example.com/www and ' +
      '<a href="raw.html">raw</a>.\n\n```\n[not a link](code.md)\n```\n';
    const collector = await read(md);
    expect(collector.links.map((l) => [l.url, l.element, l.type, l.text])).to.deep.equal([
      ['https://example.com/docs/install.md', 'a', 'internal', 'install'],
      ['https://other.test/x', 'a', 'external', 'https://other.test/x'],
      ['https://example.com/docs/img/logo.png', 'img', 'internal', 'logo'],
      ['https://example.com/ref', 'a', 'internal', 'reference'],
      ['https://www.example.com/www', 'a', 'internal', 'https://www.example.com/www'],
      ['https://example.com/docs/raw.html', 'a', 'internal', 'raw'],
    ]);
    expect(collector.links[0]?.fragments).to.deep.equal(['setup']);
  });

  it('gives headings GitHub’s anchors, repeats numbered', async () => {
    const collector = await read('# Hello, `World`!\n\n## Install\n\n## Install\n\n### Ünïcode Stuff\n');
    for (const id of ['hello-world', 'install', 'install-1', 'ünïcode-stuff'])
      expect(collector.targets.has(id), id).to.equal(true);
    expect(collector.targets.has('install-2')).to.equal(false);
    expect(renderMarkdown('## A b')).to.equal('<h2 id="a-b">A b</h2>\n');
  });

  it('reads at most MAX_MARKDOWN_CHARS, the rest cut short (links and targets incomplete)', async () => {
    const collector = await read(`${'x'.repeat(MAX_MARKDOWN_CHARS)}\n\n# Late\n\n[late](/late)\n`);
    expect(collector.links).to.deep.equal([]);
    expect(collector.truncated).to.equal(true);
    expect(collector.targets.has('late')).to.equal(undefined);
  });
});
