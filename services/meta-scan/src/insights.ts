/**
 * The insights: what the page tells crawlers and platforms beyond its tags, in four groups
 * (indexability, international, structured data, social images). Each result has the shape of a
 * category check; the insights have their own summary and do not count in the spec's score
 * (docs/grading.md, "Meta scan insights"; this file is the only place that applies it).
 */
import type { SafeResponse } from '@webutil/kit';
import type { MetaCategory, MetaCheck, MetaSummary } from '@webutil/proto/webutil/metascan/v1/metascan';
import { metaContent } from './checks.js';
import type { ImageProbe, StatusProbe } from './insight-probes.js';
import type { PageHead } from './page-head.js';
import type { RobotsProbe } from './site-files.js';
import { readStructuredData } from './structured-data.js';

export const INSIGHT_ORDER = ['indexability', 'international', 'structured-data', 'social-image'] as const;

/** The crawlers whose robots.txt rules are read for the page: search first, then link previews. */
export const SEARCH_CRAWLERS = ['Googlebot', 'Bingbot'];
export const PREVIEW_CRAWLERS = ['facebookexternalhit', 'Twitterbot', 'LinkedInBot', 'Slackbot'];

/** The user agents a caller may scan as (`userAgent`), each as the platform sends it. */
export const USER_AGENTS: Readonly<Record<string, string>> = {
  facebookexternalhit: 'facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)',
  Twitterbot: 'Twitterbot/1.0',
  LinkedInBot: 'LinkedInBot/1.0 (compatible; Mozilla/5.0; Apache-HttpClient +http://www.linkedin.com)',
  Slackbot: 'Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)',
  Googlebot: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
};

/**
 * The platforms' published image sizes: Facebook's minimum is 200×200 and its recommendation
 * 1200×630, up to 8 MB; X's summary_large_image wants at least 300×157 and at most 5 MB.
 */
export const IMAGE_RULES = {
  og: { min: [200, 200], recommended: [1200, 630], maxBytes: 8 * 1024 * 1024, platform: 'Facebook' },
  twitter: { min: [300, 157], recommended: [1200, 600], maxBytes: 5 * 1024 * 1024, platform: 'X' },
} as const;

export interface InsightInput {
  url: URL;
  status: number;
  redirects: SafeResponse['redirects'];
  headers: SafeResponse['headers'];
  head: PageHead;
  robots: RobotsProbe;
  /** The canonical URL (resolved) and what it answered, when the page names one elsewhere. */
  canonical: { url: string; probe: StatusProbe | undefined } | undefined;
  ogImage: ImageProbe | undefined;
  twitterImage: ImageProbe | undefined;
  /** The crawler the page was fetched as (a USER_AGENTS key), if the caller chose one. */
  userAgent: string | undefined;
}

type Result = Omit<MetaCheck, 'id'>;
const pass = (value: string | undefined, message: string): Result => ({ value, status: 'pass', message });
const warn = (value: string | undefined, message: string): Result => ({ value, status: 'warning', message });
const fail = (value: string | undefined, message: string): Result => ({ value, status: 'fail', message });

export function insights(input: InsightInput): { insights: MetaCategory[]; insightsSummary: MetaSummary } {
  const groups: Record<(typeof INSIGHT_ORDER)[number], Record<string, Result>> = {
    indexability: {
      robots_directives: robotsDirectives(input),
      robots_txt_crawlers: robotsTxtCrawlers(input),
      canonical_target: canonicalTarget(input),
      page_status: pageStatus(input),
    },
    international: { html_lang: htmlLang(input.head), hreflang: hreflang(input) },
    'structured-data': structuredData(input.head),
    'social-image': {
      og_image_file: imageCheck('og:image', input.ogImage, IMAGE_RULES.og),
      twitter_image_file: input.twitterImage
        ? imageCheck('twitter:image', input.twitterImage, IMAGE_RULES.twitter)
        : input.ogImage
          ? imageCheck('og:image (X uses it without twitter:image)', input.ogImage, IMAGE_RULES.twitter)
          : fail(undefined, 'No twitter:image or og:image: X shows no picture'),
    },
  };
  const categories = INSIGHT_ORDER.map((id) => ({
    id,
    results: Object.entries(groups[id]).map(([checkId, result]) => ({ id: checkId, ...result })),
  }));
  const all = categories.flatMap((c) => c.results);
  const count = (status: string) => all.filter((r) => r.status === status).length;
  return {
    insights: categories,
    insightsSummary: { critical: count('fail'), warnings: count('warning'), passed: count('pass'), total: all.length },
  };
}

/** Directives of meta robots, the chosen crawler's own meta tag, and X-Robots-Tag. */
function robotsDirectives({ head, headers, userAgent }: InsightInput): Result {
  const sources: [string, string][] = [];
  const robots = metaContent(head, 'robots');
  if (robots !== undefined) sources.push(['meta robots', robots]);
  for (const bot of ['googlebot', 'bingbot', ...(userAgent ? [userAgent.toLowerCase()] : [])]) {
    const own = metaContent(head, bot);
    if (own !== undefined && !sources.some(([s]) => s === `meta ${bot}`)) sources.push([`meta ${bot}`, own]);
  }
  const xRobots = headers['x-robots-tag'];
  for (const value of Array.isArray(xRobots) ? xRobots : xRobots ? [xRobots] : []) {
    sources.push(['X-Robots-Tag', value]);
  }
  const value = sources.length ? sources.map(([s, v]) => `${s}: ${v}`).join('; ') : undefined;
  const saying = (word: string) =>
    sources.filter(([, v]) => {
      const tokens = v.toLowerCase().split(/[\s,:]+/);
      return tokens.includes(word) || tokens.includes('none');
    });
  const noindex = saying('noindex');
  if (noindex.length) {
    return fail(value, `${noindex.map(([s]) => s).join(' and ')} say noindex: search engines drop this page`);
  }
  const nofollow = saying('nofollow');
  if (nofollow.length) {
    return warn(value, `${nofollow.map(([s]) => s).join(' and ')} say nofollow: crawlers ignore this page's links`);
  }
  return pass(value, value ? 'The directives allow indexing and following links' : 'No directive limits indexing');
}

/** Which common crawlers robots.txt keeps away from this URL. */
function robotsTxtCrawlers({ robots, url }: InsightInput): Result {
  const allows = robots.allows;
  if (!allows) return pass(undefined, 'No usable robots.txt: every crawler may fetch the page');
  const blocked = [...SEARCH_CRAWLERS, ...PREVIEW_CRAWLERS].filter((crawler) => !allows(url.href, crawler));
  const value = blocked.length ? blocked.join(', ') : undefined;
  const search = blocked.filter((c) => SEARCH_CRAWLERS.includes(c));
  if (search.length)
    return fail(value, `robots.txt disallows this URL for ${search.join(' and ')}: it cannot be indexed`);
  if (blocked.length) {
    return warn(value, `robots.txt disallows this URL for ${blocked.join(', ')}: their link previews stay empty`);
  }
  return pass(value, `robots.txt allows this URL for ${[...SEARCH_CRAWLERS, ...PREVIEW_CRAWLERS].join(', ')}`);
}

function canonicalTarget({ canonical, url }: InsightInput): Result {
  if (!canonical) return pass(undefined, 'The page names no other URL as canonical');
  const { probe } = canonical;
  if (!probe) return pass(canonical.url, 'The canonical URL is this page');
  if ('error' in probe) return fail(canonical.url, `The canonical URL could not be fetched: ${probe.error}`);
  if (probe.status >= 300 && probe.status < 400) {
    return fail(canonical.url, `The canonical URL redirects (${probe.status}): name the final URL instead`);
  }
  if (probe.status !== 200) {
    return fail(canonical.url, `The canonical URL answers ${probe.status}: search engines may ignore it`);
  }
  return warn(canonical.url, `The canonical URL is another page: ${url.href} is indexed as a copy of it`);
}

function pageStatus({ status, redirects, url }: InsightInput): Result {
  const chain = [...redirects.map((hop) => `${hop.status} ${hop.url}`), `${status} ${url.href}`].join(' → ');
  if (redirects.length === 0) return pass(chain, `The page answers ${status} directly`);
  const permanent = redirects.every((hop) => hop.status === 301 || hop.status === 308);
  if (redirects.length > 1 || !permanent) {
    return warn(chain, `${redirects.length} redirect(s) before the page; link to ${url.href} directly`);
  }
  return pass(chain, 'One permanent redirect before the page');
}

/** A BCP 47 tag in its canonical form, or undefined when it is not one. */
function canonicalLocale(tag: string): string | undefined {
  try {
    return Intl.getCanonicalLocales(tag)[0];
  } catch {
    return undefined;
  }
}

function htmlLang(head: PageHead): Result {
  const lang = head.lang;
  if (lang === undefined || lang === '') {
    return warn(lang, 'No <html lang>: screen readers and translation tools must guess the language');
  }
  const canonical = canonicalLocale(lang);
  if (!canonical) return fail(lang, `"${lang}" is not a valid BCP 47 language tag (e.g. en, en-GB)`);
  return pass(lang, `The page's language is ${canonical}`);
}

function hreflang({ head, url }: InsightInput): Result {
  const alternates = head.links.filter((l) => l.rel.includes('alternate') && l.hreflang !== undefined);
  if (alternates.length === 0) return pass(undefined, 'No hreflang alternates: fine for a page in one language');
  const value = alternates.map((l) => l.hreflang).join(', ');
  const invalid = alternates.filter(
    (l) => l.hreflang?.toLowerCase() !== 'x-default' && !canonicalLocale(l.hreflang ?? ''),
  );
  if (invalid.length) {
    return fail(value, `Not valid language codes: ${invalid.map((l) => `"${l.hreflang}"`).join(', ')}`);
  }
  const problems: string[] = [];
  if (!alternates.some((l) => l.hreflang?.toLowerCase() === 'x-default')) problems.push('no x-default alternate');
  const base = head.baseHref && URL.canParse(head.baseHref, url.href) ? new URL(head.baseHref, url) : url;
  const self = alternates.some((l) => URL.canParse(l.href, base.href) && new URL(l.href, base).href === url.href);
  if (!self) problems.push('the page does not list itself among its alternates');
  if (problems.length) return warn(value, `hreflang: ${problems.join('; ')}`);
  return pass(value, `${alternates.length} alternates, with x-default and the page itself`);
}

function structuredData(head: PageHead): Record<string, Result> {
  const data = readStructuredData(head.jsonLd);
  if (data.blocks === 0) {
    const none = 'No JSON-LD on the page: rich results need structured data';
    return {
      json_ld_syntax: warn(undefined, none),
      json_ld_types: warn(undefined, none),
      json_ld_required: warn(undefined, none),
    };
  }
  const types = data.types.length ? data.types.join(', ') : undefined;
  return {
    json_ld_syntax: data.syntaxErrors.length
      ? fail(
          data.syntaxErrors.join('; '),
          `${data.syntaxErrors.length} of ${data.blocks} JSON-LD blocks cannot be read`,
        )
      : pass(`${data.blocks}`, `${data.blocks} JSON-LD block(s), all valid JSON`),
    json_ld_types: types ? pass(types, `Types found: ${types}`) : warn(undefined, 'The JSON-LD names no @type'),
    json_ld_required: data.missing.length
      ? fail(data.missing.join('; '), `Missing required properties: ${data.missing.join('; ')}`)
      : pass(types, types ? 'Every checked type has its required properties' : 'No type to check'),
  };
}

type ImageRule = (typeof IMAGE_RULES)[keyof typeof IMAGE_RULES];

function imageCheck(tag: string, probe: ImageProbe | undefined, rule: ImageRule): Result {
  if (!probe) return fail(undefined, `No ${tag}: shares show no picture`);
  if ('error' in probe) return fail(probe.url, `${tag} could not be fetched: ${probe.error}`);
  const facts = describe(probe);
  if (probe.status !== 200) return fail(facts, `${tag} answers ${probe.status}`);
  if (!probe.contentType?.startsWith('image/')) {
    return fail(facts, `${tag} is ${probe.contentType ?? 'of no content type'}, not an image`);
  }
  if (probe.tooLarge || probe.bytes > rule.maxBytes) {
    return fail(facts, `${tag} is over ${rule.platform}'s ${rule.maxBytes / 1024 / 1024} MB limit`);
  }
  if (probe.width === undefined || probe.height === undefined) {
    return warn(facts, `${tag}: its pixel size could not be read`);
  }
  const [minW, minH] = rule.min;
  const [recW, recH] = rule.recommended;
  if (probe.width < minW || probe.height < minH) {
    return fail(facts, `${tag} is ${probe.width}×${probe.height}; ${rule.platform} needs at least ${minW}×${minH}`);
  }
  if (probe.width < recW || probe.height < recH) {
    return warn(facts, `${tag} is ${probe.width}×${probe.height}; ${rule.platform} recommends ${recW}×${recH}`);
  }
  return pass(facts, `${tag} is ${probe.width}×${probe.height}, ${probe.bytes} bytes: fit for ${rule.platform}`);
}

/** "https://…/share.png: 200 image/png, 12345 bytes, 1200×630". */
function describe(probe: Extract<ImageProbe, { status: number }>): string {
  const size = probe.width !== undefined ? `, ${probe.width}×${probe.height}` : '';
  const bytes = probe.tooLarge ? `over ${probe.bytes} bytes` : `${probe.bytes} bytes`;
  return `${probe.url}: ${probe.status} ${probe.contentType ?? '(no type)'}, ${bytes}${size}`;
}
