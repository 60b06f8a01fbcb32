import zlib from 'node:zlib';
import { expect } from 'chai';
import { discoverSitemaps, parseSitemap, robotsSitemaps, sitemapText, type FetchedFile } from '../src/sitemap.js';

const urlset = (urls: string[]) => `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${urls.map((u) => `<url><loc>${u}</loc></url>`).join('')}</urlset>`;
const index = (urls: string[]) => `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${urls.map((u) => `<sitemap><loc>${u}</loc></sitemap>`).join('')}</sitemapindex>`;

/** A site of files: path -> body; anything else answers 404. Records what was asked for. */
function site(files: Record<string, string | Buffer>) {
  const asked: string[] = [];
  const fetchFile = async (url: string): Promise<FetchedFile> => {
    const path = new URL(url).pathname;
    asked.push(path);
    const body = files[path];
    return body === undefined ? { status: 404, body: Buffer.from('not found') } : { status: 200, body: Buffer.from(body) };
  };
  return { asked, fetchFile };
}

const limits = { maxFiles: 50, maxUrls: 1000, maxBytes: 1024 * 1024 };

describe('sitemaps', () => {
  it('reads Sitemap: lines of robots.txt, any case, relative ones resolved', () => {
    const robots = 'User-agent: *\nDisallow: /private\nsitemap: https://a.test/s1.xml\r\nSITEMAP:/s2.xml\n# Sitemap: ignored\n';
    expect(robotsSitemaps(robots, 'https://a.test/robots.txt')).to.deep.equal(['https://a.test/s1.xml', 'https://a.test/s2.xml']);
  });

  it('parses url sets and indexes, namespace prefixes and entities included', () => {
    expect(parseSitemap(urlset(['https://a.test/?a=1&amp;b=2']))).to.deep.equal({ kind: 'urlset', locs: ['https://a.test/?a=1&b=2'] });
    expect(parseSitemap(index(['https://a.test/s.xml'])).kind).to.equal('sitemapindex');
    expect(parseSitemap('<sm:urlset xmlns:sm="x"><sm:url><sm:loc> https://a.test/p </sm:loc></sm:url></sm:urlset>').locs).to.deep.equal(['https://a.test/p']);
    expect(parseSitemap('<html><body>not a sitemap</body></html>').kind).to.equal('other');
  });

  it('inflates gzip by its magic bytes, whatever the file is called', () => {
    expect(sitemapText(zlib.gzipSync('<urlset/>'), 1024)).to.equal('<urlset/>');
    expect(sitemapText(Buffer.from('<urlset/>'), 1024)).to.equal('<urlset/>');
    expect(() => sitemapText(zlib.gzipSync('x'.repeat(10_000)), 100)).to.throw();
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
    expect(await discoverSitemaps('https://a.test', fetchFile, limits)).to.deep.equal({ found: true, urls: ['https://a.test/x'] });
  });

  it('reports none found when nothing parses, and never fails on broken files', async () => {
    const { fetchFile } = site({ '/robots.txt': 'Sitemap: https://a.test/broken.xml.gz', '/broken.xml.gz': Buffer.from([0x1f, 0x8b, 1, 2, 3]), '/sitemap.xml': '<html>oops</html>' });
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
    const few = await discoverSitemaps('https://a.test', site({ '/sitemap.xml': index(['https://a.test/a.xml']), '/a.xml': urlset(['https://a.test/1']) }).fetchFile, { ...limits, maxFiles: 1 });
    expect(few).to.deep.equal({ found: true, urls: [] });
  });
});
