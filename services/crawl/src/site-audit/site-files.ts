/**
 * The site-level files, checked once per audit (decision 0478): robots.txt (answered, and each
 * line one RFC 9309 allows) and the sitemaps it names or /sitemap.xml (answered, a urlset or a
 * sitemap index, within the protocol's 50,000 URLs, URLs of the site only). robots-parser, which
 * reads the crawl's rules, passes over what it cannot read, so the lines are judged here; the
 * sitemaps are read with the crawl's own streaming parser.
 */
import { type CheckerDeps, LinkChecker } from '../checking/checker.js';
import { MAX_ROBOTS_BYTES, readText } from '../site-crawl/robots.js';
import { parseSitemap, robotsSitemaps } from '../site-crawl/sitemap.js';
import type { Finding } from './page-checks.js';

/** Problems listed per file at most. */
const LISTED_PROBLEMS = 5;
/** Sitemap files checked at most (the ones robots.txt names first). */
const SITEMAPS_CHECKED = 5;
/** The sitemap protocol's most URLs in one file. */
const MAX_SITEMAP_URLS = 50_000;
const SITEMAP_BYTES = 50 * 1024 * 1024;
/** How long the checks of the files may take in all. */
const FILES_BUDGET_MS = 60_000;

/** RFC 9309's fields, and the widely read extensions (Crawl-delay, Host, Clean-param). */
const FIELDS = new Set(['user-agent', 'allow', 'disallow', 'sitemap', 'crawl-delay', 'host', 'clean-param']);

/** What is wrong with a robots.txt's lines, each with its line number. */
export function robotsProblems(text: string): string[] {
  const problems: string[] = [];
  let inGroup = false;
  for (const [index, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.replace(/#.*/, '').trim();
    if (!line) continue;
    const at = `line ${index + 1}`;
    const field = /^([A-Za-z-]+)\s*:\s*(.*)$/.exec(line);
    if (!field) {
      problems.push(`${at}: not a "field: value" line`);
      continue;
    }
    const name = (field[1] as string).toLowerCase();
    const value = (field[2] as string).trim();
    if (!FIELDS.has(name)) problems.push(`${at}: unknown field "${field[1]}"`);
    else if (name === 'user-agent') {
      if (value) inGroup = true;
      else problems.push(`${at}: empty user-agent`);
    } else if (name === 'allow' || name === 'disallow') {
      if (!inGroup) problems.push(`${at}: ${field[1]} before any user-agent line`);
      else if (value && !value.startsWith('/') && !value.startsWith('*'))
        problems.push(`${at}: ${field[1]} path does not start with /`);
    } else if (name === 'sitemap' && !/^https?:\/\//i.test(value))
      problems.push(`${at}: the sitemap URL is not absolute`);
    else if (name === 'crawl-delay' && !/^\d+(\.\d+)?$/.test(value))
      problems.push(`${at}: crawl-delay is not a number of seconds`);
  }
  return problems;
}

const detail = (problems: string[]) =>
  problems.slice(0, LISTED_PROBLEMS).join('; ') +
  (problems.length > LISTED_PROBLEMS ? `; and ${problems.length - LISTED_PROBLEMS} more` : '');

const hostOf = (url: string, base: string) => (URL.canParse(url, base) ? new URL(url, base).host : undefined);

/** The site's robots.txt and sitemaps, fetched (a few requests, through the crawl's throttle) and judged. */
export async function checkSiteFiles(entry: URL, deps: CheckerDeps, signal: AbortSignal): Promise<Finding[]> {
  const checker = new LinkChecker(deps, signal, Date.now() + FILES_BUDGET_MS, { soft404: false });
  const findings: Finding[] = [];
  const robotsUrl = new URL('/robots.txt', entry).href;
  const robots = await checker.fetchFile(robotsUrl, (body) => readText(body, MAX_ROBOTS_BYTES));
  let named: string[] = [];
  if (robots.status === undefined || robots.status === 429 || robots.status >= 500)
    findings.push({
      id: 'robots_txt_unreachable',
      url: robotsUrl,
      detail: robots.status === undefined ? (robots.error?.message ?? 'no answer') : `answered ${robots.status}`,
    });
  else if (robots.value !== undefined) {
    const problems = robotsProblems(robots.value);
    if (problems.length > 0) findings.push({ id: 'robots_txt_invalid', url: robotsUrl, detail: detail(problems) });
    named = robotsSitemaps(robots.value, robotsUrl);
  }
  const conventional = new URL('/sitemap.xml', entry).href;
  const files = [...new Set([...named, conventional])].slice(0, SITEMAPS_CHECKED);
  for (const url of files) {
    const got = await checker.fetchFile(url, (body) =>
      parseSitemap(body, { maxBytes: SITEMAP_BYTES, maxLocs: MAX_SITEMAP_URLS + 1 }),
    );
    const isNamed = named.includes(url);
    const problems: string[] = [];
    if (!got.value) {
      // /sitemap.xml by convention only: its absence is the missing-sitemap notice, not this.
      if (isNamed) problems.push(got.status === undefined ? 'no answer' : `answered ${got.status}`);
    } else if (got.value.kind === 'other') {
      if (isNamed) problems.push('not a sitemap: no <urlset> or <sitemapindex>');
    } else {
      if (got.value.locs.length > MAX_SITEMAP_URLS) problems.push(`over ${MAX_SITEMAP_URLS} URLs in one file`);
      const foreign = got.value.locs.filter((loc) => hostOf(loc, url) !== entry.host);
      if (got.value.kind === 'urlset' && foreign.length > 0)
        problems.push(`${foreign.length} URL(s) of another host, e.g. ${foreign[0]}`);
    }
    if (problems.length > 0) findings.push({ id: 'sitemap_invalid', url, detail: detail(problems) });
  }
  return findings;
}
