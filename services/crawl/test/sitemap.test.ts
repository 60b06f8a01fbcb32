import zlib from 'node:zlib';
import { expect } from 'chai';
import { discoverSitemaps, parseSitemap, type ReadFile, robotsSitemaps } from '../src/site-crawl/sitemap.js';

/** A body as it streams in, in chunks of `size` bytes. */
async function* chunks(data: string | Buffer, size = 1024): AsyncGenerator<Buffer> {
  const bytes = Buffer.from(data);
  for (let at = 0; at < bytes.length; at += size) yield bytes.subarray(at, at + size);
}

const parse = (data: string | Buffer, maxBytes = 1024 * 1024) =>
  parseSitemap(chunks(data), { maxBytes, maxLocs: 1000 });

const urlset = (urls: string[]) =>
  '<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">' +
  `${urls.map((u) => `<url><loc>${u}</loc></url>`).join('')}</urlset>`;
const index = (urls: string[]) =>
  '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">' +
  `${urls.map((u) => `<sitemap><loc>${u}</loc></sitemap>`).join('')}</sitemapindex>`;

/** A site of files: path -> body; anything else answers 404. Records what was asked for. */
function site(files: Record<string, string | Buffer>) {
  const asked: string[] = [];
  const fetchFile: ReadFile = async (url, read) => {
    const path = new URL(url).pathname;
    asked.push(path);
    const body = files[path];
    return body === undefined ? undefined : read(chunks(body));
  };
  return { asked, fetchFile };
}

const limits = { maxFiles: 50, maxUrls: 1000, maxBytes: 1024 * 1024 };

describe('sitemaps', () => {
  it('reads Sitemap: lines of robots.txt, any case, relative ones resolved', () => {
    const robots =
      'User-agent: *\nDisallow: /private\nsitemap: https://a.test/s1.xml\r\nSITEMAP:/s2.xml\n# Sitemap: ignored\n';
    expect(robotsSitemaps(robots, 'https://a.test/robots.txt')).to.deep.equal([
      'https://a.test/s1.xml',
      'https://a.test/s2.xml',
    ]);
  });

  it('parses url sets and indexes, namespace prefixes and entities included', async () => {
    expect(await parse(urlset(['https://a.test/?a=1&amp;b=2']))).to.deep.equal({
      kind: 'urlset',
      locs: ['https://a.test/?a=1&b=2'],
    });
    expect((await parse(index(['https://a.test/s.xml']))).kind).to.equal('sitemapindex');
    expect(
      (await parse('<sm:urlset xmlns:sm="x"><sm:url><sm:loc> https://a.test/p </sm:loc></sm:url></sm:urlset>')).locs,
    ).to.deep.equal(['https://a.test/p']);
    expect((await parse('<html><body>not a sitemap</body></html>')).kind).to.equal('other');
  });

  it('inflates gzip by its magic bytes as it streams, whatever the file is called', async () => {
    const urls = Array.from({ length: 1_000 }, (_, i) => `https://a.test/${i}`);
    expect((await parse(zlib.gzipSync(urlset(urls)), 10 * 1024 * 1024)).locs).to.deep.equal(urls);
    expect((await parse(urlset(urls), 10 * 1024 * 1024)).locs).to.deep.equal(urls);
    // Past maxBytes of XML the rest is not read: the locs of the first 10 kB only.
    const cut = await parse(zlib.gzipSync(urlset(urls)), 10_000);
    expect(cut.locs.length).to.be.within(1, 300);
  });

  it('stops a gzip bomb of unclosed tags at once, reading a few chunks of it', async () => {
    const bomb = zlib.gzipSync(`<urlset>${'<a>'.repeat(12_000_000)}`, { level: 9 });
    expect(bomb.length).to.be.below(50_000);
    let read = 0;
    async function* counted(): AsyncGenerator<Buffer> {
      for await (const chunk of chunks(bomb, 64)) {
        read += chunk.length;
        yield chunk;
      }
    }
    const started = performance.now();
    const parsed = await parseSitemap(counted(), { maxBytes: 20 * 1024 * 1024, maxLocs: 1000 });
    expect(parsed).to.deep.equal({ kind: 'urlset', locs: [] });
    expect(read).to.be.below(bomb.length / 2); // stopped early, not inflated to its 36 MB
    expect(performance.now() - started).to.be.below(2_000); // liveness bound; the old parse took seconds
  });

  it('follows robots.txt to an index with a plain and a gzipped child', async () => {
    const { fetchFile } = site({
      '/robots.txt': 'Sitemap: https://a.test/index.xml',
      '/index.xml': index(['https://a.test/pages.xml', 'https://a.test/more.xml.gz']),
      '/pages.xml': urlset(['https://a.test/1', 'https://a.test/2']),
      '/more.xml.gz': zlib.gzipSync(urlset(['https://a.test/3', 'https://a.test/1'])),
    });
    const found = await discoverSitemaps('https://a.test', fetchFile, limits);
    expect(found).to.deep.equal({ found: true, urls: ['https://a.test/1', 'https://a.test/2', 'https://a.test/3'] });
  });

  it('falls back to /sitemap.xml without a robots.txt', async () => {
    const { fetchFile } = site({ '/sitemap.xml': urlset(['https://a.test/x']) });
    expect(await discoverSitemaps('https://a.test', fetchFile, limits)).to.deep.equal({
      found: true,
      urls: ['https://a.test/x'],
    });
  });

  it('reports none found when nothing parses, and never fails on broken files', async () => {
    const { fetchFile } = site({
      '/robots.txt': 'Sitemap: https://a.test/broken.xml.gz',
      '/broken.xml.gz': Buffer.from([0x1f, 0x8b, 1, 2, 3]),
      '/sitemap.xml': '<html>oops</html>',
    });
    expect(await discoverSitemaps('https://a.test', fetchFile, limits)).to.deep.equal({ found: false, urls: [] });
  });

  it('stops at the file and URL limits, and does not loop on indexes naming themselves', async () => {
    const { asked, fetchFile } = site({
      '/sitemap.xml': index(['https://a.test/sitemap.xml', 'https://a.test/a.xml', 'https://a.test/b.xml']),
      '/a.xml': urlset(['https://a.test/1', 'https://a.test/2', 'https://a.test/3']),
      '/b.xml': urlset(['https://a.test/4']),
    });
    const found = await discoverSitemaps('https://a.test', fetchFile, { ...limits, maxUrls: 2 });
    expect(found.urls).to.deep.equal(['https://a.test/1', 'https://a.test/2']);
    expect(asked.filter((p) => p === '/sitemap.xml')).to.have.length(1);
    const few = await discoverSitemaps(
      'https://a.test',
      site({ '/sitemap.xml': index(['https://a.test/a.xml']), '/a.xml': urlset(['https://a.test/1']) }).fetchFile,
      { ...limits, maxFiles: 1 },
    );
    expect(few).to.deep.equal({ found: true, urls: [] });
  });
});
