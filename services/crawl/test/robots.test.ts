import { expect } from 'chai';
import { type FetchFile, MAX_CRAWL_DELAY_MS, readRobots, rulesOf } from '../src/site-crawl/robots.js';

const origin = 'https://site.test';

/** A robots.txt server of one answer. */
const answering =
  (status: number | undefined, text = ''): FetchFile =>
  async (_url, read) => ({
    status,
    value:
      status !== undefined && status < 300
        ? await read(
            (async function* () {
              yield Buffer.from(text);
            })(),
          )
        : undefined,
  });

describe('robots.txt rules', () => {
  it('apply the longest matching rule, Allow winning over a shorter Disallow', () => {
    const rules = rulesOf(
      `${origin}/robots.txt`,
      'User-agent: *\nDisallow: /private/\nAllow: /private/open.html\nDisallow: /*.pdf$\n',
    );
    expect(rules.allows(`${origin}/`)).to.equal(true);
    expect(rules.allows(`${origin}/private/secret.html`)).to.equal(false);
    expect(rules.allows(`${origin}/private/open.html`)).to.equal(true);
    expect(rules.allows(`${origin}/files/a.pdf`)).to.equal(false);
  });

  it('follow the group naming our agent over the * group', () => {
    const rules = rulesOf(
      `${origin}/robots.txt`,
      'User-agent: *\nDisallow: /\n\nUser-agent: WebUtilBot\nDisallow: /x\n',
    );
    expect(rules.allows(`${origin}/page`)).to.equal(true);
    expect(rules.allows(`${origin}/x/1`)).to.equal(false);
  });

  it('honour a Crawl-delay up to the cap, and list sitemaps resolved', () => {
    const text = 'User-agent: *\nCrawl-delay: 2\nSitemap: /sm.xml\n';
    expect(rulesOf(`${origin}/robots.txt`, text)).to.include({ crawlDelayMs: 2000 });
    expect(rulesOf(`${origin}/robots.txt`, text).sitemaps).to.deep.equal([`${origin}/sm.xml`]);
    expect(rulesOf(`${origin}/robots.txt`, 'User-agent: *\nCrawl-delay: 3600\n').crawlDelayMs).to.equal(
      MAX_CRAWL_DELAY_MS,
    );
  });

  it('allow everything without a file (4xx), and nothing when the site cannot say (5xx, 429, no answer)', async () => {
    expect((await readRobots(origin, answering(404))).allows(`${origin}/a`)).to.equal(true);
    for (const status of [500, 503, 429, undefined])
      expect((await readRobots(origin, answering(status))).allows(`${origin}/a`), String(status)).to.equal(false);
    expect((await readRobots(origin, answering(200, 'User-agent: *\nDisallow: /a\n'))).allows(`${origin}/a`)).to.equal(
      false,
    );
  });
});
