import { gzipSync } from 'node:zlib';
import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { freePort } from '@webutil/scripts/local-stack';
import { completeHead, metaPage } from '@webutil/scripts/meta-fixtures';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { creditsHeader, expectFailure, json } from './billing-helpers.js';

const CHECK_IDS = {
  basic: ['meta_title', 'meta_description', 'meta_keywords', 'meta_author'],
  technical: ['meta_viewport', 'meta_charset', 'meta_robots', 'link_canonical', 'file_robots_txt', 'file_sitemap_xml'],
  social: [
    'og_title',
    'og_description',
    'og_image',
    'og_image_alt',
    'og_url',
    'og_type',
    'og_site_name',
    'og_locale',
    'twitter_card',
    'twitter_title',
    'twitter_description',
    'twitter_image',
    'twitter_site',
    'twitter_creator',
    'twitter_image_alt',
  ],
  images: ['asset_favicon'],
};

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
  'base64',
);
const URLSET =
  '<?xml version="1.0" encoding="UTF-8"?>\n' +
  '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>/</loc></url></urlset>';

/** What the fixture site serves besides the page; each test sets what it needs. */
interface SiteFiles {
  page: string;
  pageType: string;
  pageHeaders: Record<string, string>;
  robots: { status: number; type: string; body: string } | undefined;
  files: Record<string, { status: number; type: string; body: Buffer | string }>;
}

const baseline = (origin: string): SiteFiles => ({
  page: metaPage(completeHead(origin)),
  pageType: 'text/html; charset=utf-8',
  pageHeaders: {},
  robots: { status: 200, type: 'text/plain', body: 'User-agent: *\nAllow: /\nSitemap: /sitemaps/main.xml\n' },
  files: {
    '/sitemaps/main.xml': { status: 200, type: 'application/xml', body: URLSET },
    '/icons/icon.png': { status: 200, type: 'image/png', body: PNG },
  },
});

type Check = { id: string; value: string | null; status: string; message: string };

describe('GET /v1/meta-scan, through the REST edge', function () {
  this.timeout(90_000);
  let site: FixtureSite;
  let files: SiteFiles;
  let stack: TestStack;

  before(async () => {
    site = await startFixtureSite();
    site.route('/page', (_req, res) => {
      res.writeHead(200, { 'content-type': files.pageType, ...files.pageHeaders });
      res.end(files.page);
    });
    site.route('/robots.txt', (_req, res) => {
      const robots = files.robots;
      if (!robots) return void res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>404</h1>');
      res.writeHead(robots.status, { 'content-type': robots.type }).end(robots.body);
    });
    for (const path of ['/sitemap.xml', '/sitemaps/main.xml', '/sitemap.xml.gz', '/icons/icon.png', '/favicon.ico']) {
      site.route(path, (_req, res) => {
        const file = files.files[path];
        if (!file) return void res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>404</h1>');
        res.writeHead(file.status, { 'content-type': file.type }).end(file.body);
      });
    }
    stack = await startTestStack({
      allowTargets: '127.0.0.0/8',
      envFor: { 'meta-scan': { META_PAGE_TIMEOUT_MS: '2000', META_FILE_TIMEOUT_MS: '2000' } },
    });
  });
  beforeEach(() => {
    files = baseline(site.origin);
  });
  after(async () => {
    await stack?.stop();
    await site?.close();
  });

  const scanUrl = (url: string) => stack.api(`/v1/meta-scan?url=${encodeURIComponent(url)}`);

  async function scan(): Promise<{ data: any; checks: Record<string, Check> }> {
    const res = await scanUrl(site.url('/page'));
    const body = await json(res);
    expect(res.status, JSON.stringify(body)).to.equal(200);
    const checks: Record<string, Check> = {};
    for (const category of body.data.categories) for (const check of category.results) checks[check.id] = check;
    return { data: body.data, checks };
  }

  /** Scans a page whose head is the complete one with `changes` ({origin} is the site's), and returns one check. */
  async function check(id: string, changes: Record<string, string | null>): Promise<Check> {
    const tags = Object.entries(changes).map(([key, value]) => [key, value?.replace('{origin}', site.origin) ?? null]);
    files.page = metaPage(completeHead(site.origin, Object.fromEntries(tags)));
    return (await scan()).checks[id] as Check;
  }

  describe('whole pages', () => {
    it('gives a complete page 100 and A+, with every check of the spec in its category', async () => {
      const { data, checks } = await scan();
      expect(data).to.have.all.keys(
        'url',
        'finalScore',
        'grade',
        'categories',
        'summary',
        'insights',
        'insightsSummary',
      );
      expect(data.url).to.equal(site.url('/page'));
      expect(data.categories.map((c: any) => c.id)).to.deep.equal(['basic', 'technical', 'social', 'images']);
      for (const category of data.categories) {
        expect(category.results.map((r: Check) => r.id)).to.deep.equal(
          CHECK_IDS[category.id as keyof typeof CHECK_IDS],
        );
        for (const result of category.results) {
          expect(result).to.have.all.keys('id', 'value', 'status', 'message');
          expect(result.status, `${result.id}: ${result.message}`).to.equal('pass');
          expect(result.message).to.be.a('string').and.not.be.empty;
        }
      }
      expect(data.finalScore).to.equal(100);
      expect(data.grade).to.equal('A+');
      expect(data.summary).to.deep.equal({ critical: 0, warnings: 0, passed: 26, total: 26 });
      expect(checks.meta_title?.value).to.equal('Fixture Page: a Complete Head for the Meta Audit');
      expect(checks.file_robots_txt?.value).to.equal(site.url('/robots.txt'));
      expect(checks.file_sitemap_xml?.value).to.equal(site.url('/sitemaps/main.xml'));
      expect(checks.asset_favicon?.value).to.equal(site.url('/icons/icon.png'));
      expect(checks.meta_charset?.value).to.equal('utf-8');
    });

    it('gives a bare page a failing grade, with null values and a message per failure', async () => {
      files = {
        ...baseline(site.origin),
        page: '<html><body><p>hello</p></body></html>',
        robots: undefined,
        files: {},
      };
      const { data, checks } = await scan();
      expect(data.finalScore).to.be.below(40);
      expect(data.grade).to.equal('F');
      const { critical, warnings, passed, total } = data.summary;
      expect(critical + warnings + passed).to.equal(total);
      expect(total).to.equal(26);
      expect(critical).to.be.at.least(10);
      for (const id of ['meta_title', 'meta_description', 'meta_viewport', 'og_title', 'og_image', 'twitter_card']) {
        expect(checks[id]).to.include({ value: null, status: 'fail' });
      }
      expect(checks.meta_title?.message).to.match(/No title: add <title>/);
      expect(checks.asset_favicon).to.include({ value: null, status: 'fail' });
      expect(checks.file_robots_txt).to.include({ value: null, status: 'warning' });
    });

    it('grades in between with the letters of the link grades', async () => {
      files.page = metaPage(completeHead(site.origin, { author: null, 'og:locale': null, 'twitter:creator': null }));
      const { data } = await scan();
      expect(data.finalScore).to.equal(98); // three warnings of weight 2, 1 and 1: 100 - (1 + 0.5 + 0.5)
      expect(data.grade).to.equal('A+');
      files.page = metaPage(completeHead(site.origin, { description: null, 'og:image': null }));
      const worse = (await scan()).data;
      expect(worse.finalScore).to.equal(83); // minus 12 and 5
      expect(worse.grade).to.equal('B');
    });
  });

  describe('each check at its boundaries', () => {
    const cases: [string, Record<string, string | null>, string, RegExp?][] = [
      ['meta_title', { title: null }, 'fail', /No title/],
      ['meta_title', { title: '' }, 'fail', /empty/],
      ['meta_title', { title: 'x'.repeat(29) }, 'warning', /29 characters; use 30–60/],
      ['meta_title', { title: 'x'.repeat(30) }, 'pass'],
      ['meta_title', { title: 'x'.repeat(60) }, 'pass'],
      ['meta_title', { title: 'x'.repeat(61) }, 'warning', /61 characters; keep it to 60/],
      ['meta_description', { description: null }, 'fail'],
      ['meta_description', { description: 'd'.repeat(69) }, 'warning', /69 characters/],
      ['meta_description', { description: 'd'.repeat(70) }, 'pass'],
      ['meta_description', { description: 'd'.repeat(160) }, 'pass'],
      ['meta_description', { description: 'd'.repeat(161) }, 'warning', /161 characters/],
      ['meta_keywords', { keywords: null }, 'pass', /ignore/],
      ['meta_keywords', { keywords: 'a,b,c,d,e,f,g,h,i,j' }, 'pass'],
      ['meta_keywords', { keywords: 'a,b,c,d,e,f,g,h,i,j,k' }, 'warning', /11 meta keywords/],
      ['meta_author', { author: null }, 'warning'],
      ['meta_viewport', { viewport: null }, 'fail', /width=device-width/],
      ['meta_viewport', { viewport: 'width=1024' }, 'warning'],
      ['meta_viewport', { viewport: 'width=device-width, user-scalable=no' }, 'warning', /zoom/],
      ['meta_viewport', { viewport: 'width=device-width, maximum-scale=1' }, 'warning', /zoom/],
      ['meta_viewport', { viewport: 'width=device-width, maximum-scale=2' }, 'pass'],
      ['meta_charset', { charset: 'iso-8859-1' }, 'warning', /UTF-8 is recommended/],
      ['meta_charset', { charset: null }, 'warning', /only the Content-Type header/],
      ['meta_robots', { robots: null }, 'pass'],
      ['meta_robots', { robots: 'noindex, follow' }, 'fail', /noindex/],
      ['meta_robots', { robots: 'index, nofollow' }, 'warning', /nofollow/],
      ['link_canonical', { canonical: null }, 'warning'],
      ['link_canonical', { canonical: '/page' }, 'warning', /relative/],
      ['link_canonical', { canonical: '{origin}/page' }, 'pass', /names this page/],
      ['link_canonical', { canonical: '{origin}/other/path' }, 'pass', /this page counts as a copy of it/],
      ['link_canonical', { canonical: 'https://elsewhere.example/page' }, 'warning', /another site/],
      ['link_canonical', { canonical: 'http://[' }, 'fail', /not a valid URL/],
      ['link_canonical', { canonical: 'mailto:me@example.com' }, 'fail'],
      ['og_title', { 'og:title': null }, 'fail'],
      ['og_title', { 'og:title': 't'.repeat(91) }, 'warning'],
      ['og_title', { 'og:title': 't'.repeat(90) }, 'pass'],
      ['og_description', { 'og:description': null }, 'fail'],
      ['og_description', { 'og:description': 'd'.repeat(200) }, 'pass'],
      ['og_description', { 'og:description': 'd'.repeat(201) }, 'warning', /201 characters; keep it under 200/],
      ['og_image', { 'og:image': null }, 'fail'],
      ['og_image', { 'og:image': '/share.png' }, 'warning', /absolute/],
      ['og_image_alt', { 'og:image:alt': null }, 'warning'],
      ['og_url', { 'og:url': null }, 'warning'],
      ['og_url', { 'og:url': '/page' }, 'warning', /absolute/],
      ['og_type', { 'og:type': null }, 'warning'],
      ['og_site_name', { 'og:site_name': null }, 'warning'],
      ['og_locale', { 'og:locale': null }, 'warning'],
      ['og_locale', { 'og:locale': 'en-us' }, 'warning', /language_TERRITORY/],
      ['twitter_card', { 'twitter:card': null }, 'fail'],
      ['twitter_card', { 'twitter:card': 'big' }, 'fail', /not a card type/],
      ['twitter_title', { 'twitter:title': null }, 'pass', /uses og:title/],
      ['twitter_title', { 'twitter:title': null, 'og:title': null }, 'fail'],
      ['twitter_description', { 'twitter:description': null }, 'pass', /uses og:description/],
      ['twitter_description', { 'twitter:description': null, 'og:description': null }, 'fail'],
      ['twitter_image', { 'twitter:image': null }, 'pass', /uses og:image/],
      ['twitter_image', { 'twitter:image': null, 'og:image': null }, 'fail'],
      ['twitter_site', { 'twitter:site': null }, 'warning'],
      ['twitter_site', { 'twitter:site': 'fixture' }, 'warning', /@handle/],
      ['twitter_site', { 'twitter:site': '@fixture' }, 'pass'],
      ['twitter_creator', { 'twitter:creator': null }, 'warning'],
      ['twitter_image_alt', { 'twitter:image:alt': null }, 'warning'],
    ];
    for (const [id, changes, status, message] of cases) {
      it(`${id}: ${JSON.stringify(changes)} -> ${status}`, async () => {
        const result = await check(id, changes);
        expect(result.status, result.message).to.equal(status);
        const [key, value] = Object.entries(changes)[0] as [string, string | null];
        if (value === null && status !== 'pass' && key !== 'charset') expect(result.value).to.equal(null);
        if (message) expect(result.message).to.match(message);
      });
    }

    it('meta_charset fails when neither the page nor the header names an encoding', async () => {
      files.pageType = 'text/html';
      const result = (await check('meta_charset', { charset: null })) as Check;
      expect(result).to.include({ value: null, status: 'fail' });
    });

    it('meta_robots reads the X-Robots-Tag header too', async () => {
      files.pageHeaders = { 'x-robots-tag': 'noindex' };
      const result = await check('meta_robots', { robots: null });
      expect(result.status).to.equal('fail');
      expect(result.message).to.match(/X-Robots-Tag header says noindex/);
    });
  });

  describe('robots.txt and the sitemap', () => {
    const files_ = async () => {
      const { checks } = await scan();
      return { robots: checks.file_robots_txt as Check, sitemap: checks.file_sitemap_xml as Check };
    };

    it('finds /sitemap.xml when robots.txt names none', async () => {
      files.robots = { status: 200, type: 'text/plain', body: 'User-agent: *\nDisallow: /private\n' };
      files.files['/sitemap.xml'] = { status: 200, type: 'text/xml', body: URLSET };
      const { robots, sitemap } = await files_();
      expect(robots).to.include({ status: 'pass', value: site.url('/robots.txt') });
      expect(sitemap).to.include({ status: 'pass', value: site.url('/sitemap.xml') });
    });

    it('reads a gzip sitemap named in robots.txt', async () => {
      files.robots = { status: 200, type: 'text/plain', body: `Sitemap: ${site.url('/sitemap.xml.gz')}\n` };
      files.files['/sitemap.xml.gz'] = { status: 200, type: 'application/gzip', body: gzipSync(URLSET) };
      expect((await files_()).sitemap).to.include({ status: 'pass', value: site.url('/sitemap.xml.gz') });
    });

    it('warns when both are missing', async () => {
      files.robots = undefined;
      files.files = { '/icons/icon.png': { status: 200, type: 'image/png', body: PNG } };
      const { robots, sitemap } = await files_();
      expect(robots).to.include({ status: 'warning', value: null });
      expect(robots.message).to.match(/No robots.txt \(answered 404 Not Found\)/);
      expect(sitemap).to.include({ status: 'warning', value: null });
    });

    it('fails a sitemap that robots.txt names but that is missing', async () => {
      delete files.files['/sitemaps/main.xml'];
      const { sitemap } = await files_();
      expect(sitemap).to.include({ status: 'fail', value: null });
      expect(sitemap.message).to.match(/robots.txt names the sitemap .*main.xml, which answered 404/);
    });

    it('fails a sitemap that is not one', async () => {
      files.files['/sitemaps/main.xml'] = {
        status: 200,
        type: 'text/html',
        body: '<!DOCTYPE html><html><body>hi</body></html>',
      };
      const { sitemap } = await files_();
      expect(sitemap.status).to.equal('fail');
      expect(sitemap.message).to.match(/root element is <html>/);
    });

    it('fails a robots.txt that is an HTML page, one that answers 503, and one shutting all crawlers out', async () => {
      files.robots = { status: 200, type: 'text/html', body: '<html><body>app shell</body></html>' };
      expect((await files_()).robots).to.include({ status: 'fail', value: null });
      files.robots = { status: 503, type: 'text/plain', body: 'busy' };
      const unavailable = (await files_()).robots;
      expect(unavailable.status).to.equal('fail');
      expect(unavailable.message).to.match(/503/);
      files.robots = { status: 200, type: 'text/plain', body: 'User-agent: *\nDisallow: /\n' };
      const blocking = (await files_()).robots;
      expect(blocking.status).to.equal('fail');
      expect(blocking.message).to.match(/disallows the whole site/);
    });
  });

  describe('favicon', () => {
    const favicon = async (head: Record<string, string | null>) => check('asset_favicon', head);

    it('passes /favicon.ico when the page declares no icon', async () => {
      files.files['/favicon.ico'] = { status: 200, type: 'image/x-icon', body: Buffer.from([0, 0, 1, 0, 1, 0]) };
      const result = await favicon({ icon: null });
      expect(result).to.include({ status: 'pass', value: site.url('/favicon.ico') });
    });

    it('warns when the declared icon 404s but /favicon.ico works', async () => {
      files.files['/favicon.ico'] = { status: 200, type: 'application/octet-stream', body: PNG };
      const result = await favicon({ icon: '/icons/missing.png' });
      expect(result.status).to.equal('warning');
      expect(result.message).to.match(/missing.png answered 404/);
    });

    it('fails an icon that is not an image, and no icon at all', async () => {
      files.files['/icons/icon.png'] = { status: 200, type: 'text/html', body: '<html>nope</html>' };
      const notImage = await favicon({});
      expect(notImage).to.include({ status: 'fail', value: site.url('/icons/icon.png') });
      expect(notImage.message).to.match(/answers with text\/html, not an image/);
      expect(await favicon({ icon: null })).to.include({ status: 'fail', value: null });
    });
  });

  describe('hostile pages cost bounded work', () => {
    it('audits 5 MB of nested tags from its first part, while another scan on the service completes', async () => {
      const nested = `<html><head><title>${'Deep '.repeat(8)}</title>${'<b>'.repeat(1_700_000)}`;
      site.route('/nested', (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' }).end(nested);
      });
      const [hostile, normal] = await Promise.all([scanUrl(site.url('/nested')), scanUrl(site.url('/page'))]);
      const hostileBody = await json(hostile);
      expect(hostile.status, JSON.stringify(hostileBody)).to.equal(200);
      const title = hostileBody.data.categories[0].results[0];
      expect(title).to.include({ id: 'meta_title', value: 'Deep Deep Deep Deep Deep Deep Deep Deep' });
      const normalBody = await json(normal);
      expect(normal.status).to.equal(200);
      expect(normalBody.data.finalScore).to.equal(100);
    });

    it('audits a page that never ends from its head, reading its body for JSON-LD a bounded time', async () => {
      const res = await scanUrl(site.url('/never-ends'));
      const body = await json(res);
      expect(res.status, JSON.stringify(body)).to.equal(200);
      expect(body.data.grade).to.equal('F');
    });
  });

  describe('insights', () => {
    /** A PNG whose header says w×h (image-size reads the IHDR chunk), padded to `bytes`. */
    const png = (w: number, h: number, bytes = 0) => {
      const ihdr = Buffer.alloc(25);
      ihdr.writeUInt32BE(13, 0);
      ihdr.write('IHDR', 4, 'latin1');
      ihdr.writeUInt32BE(w, 8);
      ihdr.writeUInt32BE(h, 12);
      ihdr.set([8, 6, 0, 0, 0], 16);
      const head = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), ihdr]);
      return Buffer.concat([head, Buffer.alloc(Math.max(0, bytes - head.length))]);
    };
    /** The complete head with `changes`, plus raw HTML added to the head, and `lang` on <html>. */
    const page = (changes: Record<string, string | null>, extraHead = '', lang: string | null = 'en') => {
      const tags = Object.fromEntries(
        Object.entries(changes).map(([k, v]) => [k, v?.replaceAll('{origin}', site.origin) ?? null]),
      );
      const html = metaPage(completeHead(site.origin, tags)).replace(
        '</head>',
        `${extraHead.replaceAll('{origin}', site.origin)}\n</head>`,
      );
      return lang === null ? html.replace(' lang="en"', '') : html.replace('lang="en"', `lang="${lang}"`);
    };
    const images = { 'og:image': '{origin}/share/large.png', 'twitter:image': '{origin}/share/large.png' };
    const insight = async (id: string, path = '/page', query = '') => {
      const res = await stack.api(`/v1/meta-scan?url=${encodeURIComponent(site.url(path))}${query}`);
      const body = await json(res);
      expect(res.status, JSON.stringify(body)).to.equal(200);
      const found = body.data.insights.flatMap((g: { results: Check[] }) => g.results).find((r: Check) => r.id === id);
      return { check: found as Check, data: body.data };
    };

    before(() => {
      for (const [path, image] of [
        ['/share/large.png', png(1200, 630)],
        ['/share/small.png', png(100, 80)],
        ['/share/huge.png', png(1200, 630, 9 * 1024 * 1024)],
      ] as const) {
        site.route(path, (_req, res) => void res.writeHead(200, { 'content-type': 'image/png' }).end(image));
      }
      // A page that shows each crawler its own tags.
      site.route('/bots', (req, res) => {
        const ua = req.headers['user-agent'] ?? '';
        const title = ua.includes('Twitterbot') ? 'Shown to Twitterbot' : 'Shown to everyone else';
        const extra = ua.includes('Googlebot') ? '<meta name="googlebot" content="noindex">' : '';
        res.writeHead(200, { 'content-type': 'text/html' }).end(page({ 'og:title': title, ...images }, extra));
      });
    });

    it('has four groups with their own summary, and leaves the score alone', async () => {
      files.page = page(images, '<script type="application/ld+json">{"@type":"WebSite","name":"F","url":"/"}</script>');
      const { data } = await insight('robots_directives');
      expect(data.insights.map((g: { id: string }) => g.id)).to.deep.equal([
        'indexability',
        'international',
        'structured-data',
        'social-image',
      ]);
      const results = data.insights.flatMap((g: { results: Check[] }) => g.results);
      for (const result of results) expect(result.status, `${result.id}: ${result.message}`).to.equal('pass');
      expect(data.insightsSummary).to.deep.equal({ critical: 0, warnings: 0, passed: results.length, total: 11 });
      expect(data.finalScore).to.equal(100);
    });

    it('indexability: noindex in meta robots, X-Robots-Tag, or a crawler’s own tag', async () => {
      files.page = page({ robots: 'noindex, follow', ...images });
      expect((await insight('robots_directives')).check).to.include({ status: 'fail' });
      files.page = page(images);
      files.pageHeaders = { 'x-robots-tag': 'nofollow' };
      const header = (await insight('robots_directives')).check;
      expect(header).to.include({ status: 'warning', value: 'meta robots: index, follow; X-Robots-Tag: nofollow' });
      const asGoogle = (await insight('robots_directives', '/bots', '&userAgent=Googlebot')).check;
      expect(asGoogle.status).to.equal('fail');
      expect(asGoogle.message).to.match(/meta googlebot say noindex/);
    });

    it('indexability: robots.txt disallowing this URL for search and preview crawlers', async () => {
      files.page = page(images);
      files.robots = { status: 200, type: 'text/plain', body: 'User-agent: Googlebot\nDisallow: /page\n' };
      const google = (await insight('robots_txt_crawlers')).check;
      expect(google).to.include({ status: 'fail', value: 'Googlebot' });
      files.robots = {
        status: 200,
        type: 'text/plain',
        body: 'User-agent: Twitterbot\nUser-agent: Slackbot\nDisallow: /\n',
      };
      expect((await insight('robots_txt_crawlers')).check).to.include({
        status: 'warning',
        value: 'Twitterbot, Slackbot',
      });
    });

    it('indexability: a canonical URL elsewhere, or one that answers 404 or redirects', async () => {
      files.page = page({ canonical: '{origin}/ok', ...images });
      expect((await insight('canonical_target')).check).to.include({ status: 'warning', value: site.url('/ok') });
      files.page = page({ canonical: '{origin}/status/404', ...images });
      const missing = (await insight('canonical_target')).check;
      expect(missing.status).to.equal('fail');
      expect(missing.message).to.match(/answers 404/);
      files.page = page({ canonical: '{origin}/redirect/1', ...images });
      expect((await insight('canonical_target')).check.message).to.match(/redirects \(302\)/);
    });

    it('indexability: the status and redirect chain of the page', async () => {
      files.page = page(images);
      const to = encodeURIComponent(site.url('/page'));
      const { check: chain } = await insight('page_status', `/redirect-to?url=${to}&status=302`);
      expect(chain.status).to.equal('warning');
      expect(chain.value).to.equal(`302 ${site.url(`/redirect-to?url=${to}&status=302`)} → 200 ${site.url('/page')}`);
    });

    it('international: html[lang] and hreflang alternates', async () => {
      files.page = page(images, '', null);
      expect((await insight('html_lang')).check).to.include({ status: 'warning', value: null });
      files.page = page(images, '', 'en_US');
      expect((await insight('html_lang')).check).to.include({ status: 'fail', value: 'en_US' });
      const alternates = (langs: string[]) =>
        langs.map((l) => `<link rel="alternate" hreflang="${l}" href="{origin}/${l === 'en' ? 'page' : l}">`).join('');
      files.page = page(images, alternates(['en', 'de', 'x-default']));
      expect((await insight('hreflang')).check).to.include({ status: 'pass', value: 'en, de, x-default' });
      files.page = page(images, alternates(['en', 'de']));
      expect((await insight('hreflang')).check.message).to.match(/no x-default/);
      files.page = page(images, alternates(['de', 'x-default']));
      expect((await insight('hreflang')).check.message).to.match(/does not list itself/);
      files.page = page(images, alternates(['en', 'deutsch_DE', 'x-default']));
      expect((await insight('hreflang')).check).to.include({ status: 'fail' });
    });

    it('structured data: valid and broken JSON-LD in head and body, types, and required properties', async () => {
      const ld = (json: string) => `<script type="application/ld+json">${json}</script>`;
      const article = JSON.stringify({
        '@context': 'https://schema.org',
        '@graph': [
          { '@type': 'Article', headline: 'H', author: { name: 'A' }, datePublished: '2026-01-01', image: '/i.png' },
          { '@type': 'Product', name: 'P' },
        ],
      });
      // The second block sits in the body, where CMS plugins put theirs.
      const broken = ld('{\n  "@type": "Organization",\n  "name": "X"\n  "url": "/"\n}');
      files.page = page(images, ld(article)).replace('</body>', `${broken}</body>`);
      expect(files.page).to.match(/<body>[\s\S]*Organization[\s\S]*<\/body>/);
      const { data } = await insight('json_ld_syntax');
      const group = data.insights.find((g: { id: string }) => g.id === 'structured-data').results;
      const [syntax, types, required] = group as Check[];
      expect(syntax?.status).to.equal('fail');
      expect(syntax?.value).to.equal("block 2: Expected ',' or '}' after property value at line 4, column 3");
      expect(types).to.include({ status: 'pass', value: 'Article, Product' });
      expect(required).to.include({ status: 'fail', value: 'Product lacks offers or review or aggregateRating' });
    });

    it('social images: fetched and measured against the platforms’ sizes', async () => {
      files.page = page({ 'og:image': '{origin}/share/small.png', 'twitter:image': '{origin}/share/large.png' });
      const { data } = await insight('og_image_file');
      const [og, twitter] = data.insights.find((g: { id: string }) => g.id === 'social-image').results as Check[];
      expect(og?.status).to.equal('fail');
      expect(og?.value).to.equal(`${site.url('/share/small.png')}: 200 image/png, 33 bytes, 100×80`);
      expect(og?.message).to.match(/needs at least 200×200/);
      expect(twitter?.status).to.equal('pass');
      files.page = page({ 'og:image': '{origin}/share/huge.png', 'twitter:image': '{origin}/status/404' });
      const again = (await insight('og_image_file')).data.insights.find((g: { id: string }) => g.id === 'social-image');
      expect(again.results[0].message).to.match(/over Facebook's 8 MB limit/);
      expect(again.results[1].message).to.match(/answers 404/);
    });

    it('scans as the crawler asked for, which may be served other tags', async () => {
      const asTwitter = await insight('robots_directives', '/bots', '&userAgent=Twitterbot');
      const title = (data: any) => data.categories[2].results.find((r: Check) => r.id === 'og_title').value;
      expect(title(asTwitter.data)).to.equal('Shown to Twitterbot');
      expect(title((await insight('robots_directives', '/bots')).data)).to.equal('Shown to everyone else');
      const before = creditsHeader(await stack.api('/v1/quota'));
      const bad = await stack.api(`/v1/meta-scan?url=${encodeURIComponent(site.url('/bots'))}&userAgent=curl`);
      const body = await expectFailure(bad, 400, 'invalid_request');
      expect(body.error?.message).to.match(/^userAgent must be one of facebookexternalhit, Twitterbot/);
      expect(creditsHeader(bad)).to.equal(before);
    });
  });

  describe('failures', () => {
    it('requires url (400) and refuses non-web URLs and garbage (400), spending nothing', async () => {
      const before = creditsHeader(await stack.api('/v1/quota'));
      const missing = await expectFailure(await stack.api('/v1/meta-scan'), 400, 'invalid_request');
      expect(missing.error?.message).to.equal('url is required');
      await expectFailure(await scanUrl('ftp://example.com/'), 400, 'invalid_url');
      // Not a host name: refused before any credit is held, like on every URL-taking route.
      const garbage = await scanUrl('ht!tp://%%%');
      const body = await expectFailure(garbage, 400, 'invalid_url');
      expect(body.error?.message).to.match(/^not a valid (host name|URL): /);
      expect(creditsHeader(garbage)).to.equal(before);
    });

    it('answers 500 with the reason when the page cannot be fetched, and spends nothing', async () => {
      const before = creditsHeader(await stack.api('/v1/quota'));
      const closed = await scanUrl(`http://127.0.0.1:${await freePort()}/`);
      const refused = await expectFailure(closed, 500, 'target_unreachable');
      expect(refused.error?.message).to.match(/the connection was refused \(ECONNREFUSED\)$/);
      const notFound = await expectFailure(await scanUrl(site.url('/status/404')), 500, 'target_http_error');
      expect(notFound.error?.message).to.match(/answered 404 Not Found/);
      const image = await expectFailure(await scanUrl(site.url('/image.png')), 500, 'not_html');
      expect(image.error?.message).to.match(/image\/png, not HTML/);
      const hung = await expectFailure(await scanUrl(site.url('/hang')), 500, 'target_unreachable');
      expect(hung.error?.message).to.match(/no answer in time \(ETIMEDOUT\)$/);
      const unresolvable = await expectFailure(
        await scanUrl('http://no-such-host.invalid/'),
        500,
        'target_unreachable',
      );
      expect(unresolvable.error?.message).to.match(/the host name does not resolve \(ENOTFOUND\)$/);
      expect(creditsHeader(closed)).to.equal(before);
      const ok = await scanUrl(site.url('/page'));
      await ok.arrayBuffer();
      expect(creditsHeader(ok)).to.equal(before - 1);
    });

    it('refuses a page that redirects to a private address (400, as every route does)', async () => {
      const to = encodeURIComponent('http://10.0.0.1/');
      const body = await expectFailure(await scanUrl(site.url(`/redirect-to?url=${to}`)), 400, 'target_blocked');
      expect(body.error?.message).to.equal(
        '10.0.0.1 is a private or reserved address, which is not fetched (ETARGETBLOCKED)',
      );
    });
  });
});
