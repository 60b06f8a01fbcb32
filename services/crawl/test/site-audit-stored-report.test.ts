import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { SiteAuditResult } from '@webutil/proto/webutil/crawl/v1/site_audit';
import { expect } from 'chai';
import { SqliteAuditPages } from '../src/jobs/audit-pages-sqlite.js';
import type { BrokenLinkCrawlResult } from '../src/model.js';
import { findingsOf } from '../src/site-audit/compare-audits.js';
import { type AuditedPage, checkPage, type Finding } from '../src/site-audit/page-checks.js';
import type { PageFacts } from '../src/site-audit/page-facts.js';
import { forPoll, issuePage, issuesOf, scores, tallies } from '../src/site-audit/report.js';
import { type AuditLink, checkSite } from '../src/site-audit/site-checks.js';
import { reportFromStore } from '../src/site-audit/stored-report.js';

const SITE = 'https://s.test/';
const url = (i: number) => (i === 0 ? SITE : `${SITE}p/${i}`);

/** A small deterministic generator, so the planted site is the same every run. */
function random(seed: number) {
  let state = seed;
  return (n: number) => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state % n;
  };
}

/**
 * A site of `n` pages in a chain and a tree (deep pages), with issues planted at random: errors,
 * redirects, refused pages, duplicate titles, descriptions and bodies, canonicals elsewhere,
 * hreflang without return, sitemap entries, orphans, noindex.
 */
function plantedSite(n: number, seed: number): { pages: AuditedPage[]; links: AuditLink[]; sitemap: string[] } {
  const pick = random(seed);
  const pages: AuditedPage[] = [];
  for (let i = 0; i < n; i++) {
    const links = new Set<string>();
    if (i > 0 && pick(10) > 0) links.add(url(Math.floor((i - 1) / 2)));
    for (const c of [2 * i + 1, 2 * i + 2]) if (c < n && pick(8) > 0) links.add(url(c));
    if (pick(5) === 0) links.add(url(pick(n)));
    links.delete(url(i));
    const facts: PageFacts = {
      title: pick(6) === 0 ? 'Shared title of several pages' : pick(20) === 0 ? undefined : `Title of page ${i} here`,
      description: pick(6) === 0 ? 'A description that several pages share, long enough to pass' : undefined,
      h1Count: pick(4),
      canonical: pick(8) === 0 ? url(pick(n)) : pick(3) === 0 ? undefined : url(i),
      noindex: pick(15) === 0,
      lang: pick(10) === 0 ? undefined : 'en',
      hreflang: pick(6) === 0 ? [{ lang: pick(2) ? 'de' : 'en-UK', url: url(pick(n)) }] : [],
      jsonLdInvalid: pick(20) === 0 ? 1 : 0,
      imagesWithoutAlt: pick(10) === 0 ? 2 : 0,
      imagesWithoutAltSrc: ['/i.png'],
      mixedContent: pick(25) === 0 ? ['http://x.test/a.js'] : [],
      htmlChars: 5_000,
      bodyHash: pick(7) === 0 ? 'same-body' : `body-${i}`,
      ttfbMs: pick(30) === 0 ? 1_500 : 20,
    };
    const status = pick(25) === 0 ? 404 : pick(40) === 0 ? 503 : 200;
    const redirects = pick(20) === 0 ? 1 + pick(3) : 0;
    const refused = i > 0 && pick(30) === 0;
    pages.push({
      url: url(i),
      depth: i === 0 ? 0 : Math.floor(Math.log2(i + 1)),
      fromSitemap: pick(3) === 0,
      status: pick(60) === 0 ? undefined : status,
      error: 'timed out',
      redirects,
      redirectTrouble: redirects > 2 ? 'loop' : undefined,
      finalUrl: redirects ? url(pick(n)) : undefined,
      refused,
      facts: refused || pick(30) === 0 ? undefined : facts,
      links: [...links],
    });
  }
  const links: AuditLink[] = Array.from({ length: 30 }, (_, k) => ({
    url: k % 3 === 0 ? `https://other.test/${k}` : `${SITE}gone/${k}`,
    type: k % 3 === 0 ? 'external' : 'internal',
    element: k % 5 === 0 ? 'img' : 'a',
    severity: k % 4 === 0 ? 'ok' : 'broken',
    statusCode: k % 7 === 0 ? undefined : 404,
    reason: 'not found',
    sources: [url(pick(n)), url(pick(n))].filter((s, j, all) => all.indexOf(s) === j),
    sourceCount: 2,
  }));
  const sitemap = [...pages.filter((p) => p.fromSitemap).map((p) => p.url), url(n + 5), url(3)];
  return { pages, links, sitemap };
}

function crawled(links: AuditLink[]): BrokenLinkCrawlResult {
  return {
    url: SITE,
    scannedAt: '2026-11-29T12:00:00.000Z',
    pagesDiscovered: 999,
    truncatedPages: false,
    totalUniqueLinks: 1234,
    summary: { broken: 22 },
    truncatedLinks: false,
    linksCutBy: [],
    links,
  } as unknown as BrokenLinkCrawlResult;
}

/** The report as made before decision 0472: every record in one array, the pure checks over it. */
function reportInMemory(
  pages: AuditedPage[],
  links: AuditLink[],
  sitemap: string[],
  siteFiles: Finding[],
): SiteAuditResult {
  const ordered = [...pages].sort((a, b) => a.depth - b.depth || (a.url < b.url ? -1 : a.url > b.url ? 1 : 0));
  const entry = ordered.find((p) => p.depth === 0)?.url ?? SITE;
  const site = checkSite({ entry, pages: ordered, links, sitemapFound: sitemap.length > 0, sitemap });
  const findings = [...ordered.flatMap(checkPage), ...site.findings, ...siteFiles];
  const issues = issuesOf(findings);
  const audited = new Set(ordered.flatMap((p) => (p.refused ? [] : [p.url])));
  const c = crawled(links);
  return {
    url: c.url,
    scannedAt: c.scannedAt,
    pagesAudited: audited.size,
    pagesDiscovered: c.pagesDiscovered,
    pagesCap: 5_000,
    truncatedPages: false,
    ...scores(findings, audited, issues),
    issues,
    ...tallies(ordered, site.depths),
    totalUniqueLinks: c.totalUniqueLinks,
    brokenLinks: 22,
    cutBy: [],
    sitemapFound: sitemap.length > 0,
    sitemapUrlCount: sitemap.length,
    comparison: undefined,
  };
}

describe('site audit report made from the store in passes', function () {
  this.timeout(60_000);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'stored-report-'));
  const store = new SqliteAuditPages(path.join(dir, 'jobs.sqlite'));
  after(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const expiresAt = new Date(Date.now() + 600_000);
  const siteFiles: Finding[] = [{ id: 'robots_txt_unreachable', url: `${SITE}robots.txt`, detail: 'answered 503' }];

  for (const [n, seed, sitemapOff] of [
    [1_300, 7, false],
    [700, 42, false],
    [60, 3, true],
  ] as const)
    it(
      `finds what the report over every record finds: ${n} planted pages` + (sitemapOff ? ', no sitemap' : ''),
      async () => {
        const jobId = `job-${n}-${seed}`;
        const { pages, links, sitemap: listed } = plantedSite(n, seed);
        const sitemap = sitemapOff ? [] : listed;
        // Stored in another order than read, in batches as the observer writes them.
        const shuffled = [...pages].reverse();
        for (let i = 0; i < shuffled.length; i += 100) await store.add(jobId, shuffled.slice(i, i + 100), expiresAt);
        const expected = reportInMemory(pages, links, sitemap, siteFiles);
        const { result, findings } = await reportFromStore(
          new URL(SITE),
          5_000,
          crawled(links),
          { store, jobId, expiresAt },
          sitemap,
          siteFiles,
        );
        expect(result).to.deep.equal(forPoll(expected));
        expect([...findings].sort()).to.deep.equal(findingsOf(expected));
        expect(expected.issues.length).to.be.greaterThan(n > 500 ? 20 : 10);
        if (n > 500) expect(expected.issues.some((i) => i.affectedTotal > 100)).to.equal(true);
        // Every affected URL through the issue route's reader, pages of 37, as the in-memory report lists them.
        for (const issue of expected.issues) {
          const read = [];
          for (let offset = 0; offset < issue.affectedTotal; offset += 37) {
            const page = await issuePage(result, issue.id, offset, 37, { store, jobId });
            read.push(...(page?.affected ?? []));
          }
          expect(read, issue.id).to.deep.equal(issue.affected);
        }
        expect(await issuePage(result, 'not_an_issue', 0, 10, { store, jobId })).to.equal(undefined);
      },
    );
});
