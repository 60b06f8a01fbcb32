/**
 * The issue types a site audit reports (docs/decisions/0442-site-audit-issues.md): a stable id,
 * its category, priority, a title and a one-line fix. Priorities follow the catalogues site owners
 * know (Ahrefs, Semrush, Screaming Frog, Sitebulb): an error keeps a page from being found or
 * used, a warning hurts it, a notice is worth a look.
 */

export type Priority = 'error' | 'warning' | 'notice';

export const CATEGORIES = [
  'indexability',
  'content',
  'links',
  'performance',
  'international',
  'structured_data',
  'images',
  'security',
  'sitemap',
] as const;
export type Category = (typeof CATEGORIES)[number];

export interface IssueType {
  category: Category;
  priority: Priority;
  title: string;
  fix: string;
}

/** The figures the checks compare against (stated in the decision and docs/api.md). */
export const THRESHOLDS = {
  titleMaxChars: 60,
  titleMinChars: 10,
  descriptionMaxChars: 160,
  descriptionMinChars: 50,
  /** Decoded HTML characters of one page. */
  heavyPageChars: 2 * 1024 * 1024,
  slowTtfbMs: 1_000,
  /** Clicks from the entry page beyond which a page is deep. */
  maxClickDepth: 3,
} as const;

const T = THRESHOLDS;

export const ISSUES = {
  http_4xx: {
    category: 'indexability',
    priority: 'error',
    title: 'Page answers 4xx',
    fix: 'Restore the page or redirect it, and update the links to it.',
  },
  http_5xx: {
    category: 'indexability',
    priority: 'error',
    title: 'Page answers 5xx or not at all',
    fix: 'Fix the server error or time-out for this URL.',
  },
  redirect_loop: {
    category: 'indexability',
    priority: 'error',
    title: 'Redirect loop or too many redirects',
    fix: 'Make the redirect end on a page that answers 200.',
  },
  redirect_chain: {
    category: 'indexability',
    priority: 'warning',
    title: 'Redirect chain (2 or more hops)',
    fix: 'Redirect straight to the final URL, and link to it directly.',
  },
  noindex: {
    category: 'indexability',
    priority: 'warning',
    title: 'noindex page linked internally',
    fix: 'Remove noindex if the page should be found, or stop linking to it.',
  },
  blocked_by_robots: {
    category: 'indexability',
    priority: 'warning',
    title: 'Page blocked by robots.txt but linked internally',
    fix: 'Allow the page in robots.txt, or stop linking to it.',
  },
  canonical_missing: {
    category: 'indexability',
    priority: 'notice',
    title: 'No canonical link',
    fix: 'Add <link rel="canonical"> naming the page’s preferred URL.',
  },
  canonicalised: {
    category: 'indexability',
    priority: 'notice',
    title: 'Canonical points to another URL',
    fix: 'Check that the other URL is the version meant to be indexed; link to it instead.',
  },
  canonical_to_non200: {
    category: 'indexability',
    priority: 'error',
    title: 'Canonical points to a URL that does not answer 200',
    fix: 'Point the canonical at a live page that answers 200.',
  },
  canonical_chain: {
    category: 'indexability',
    priority: 'warning',
    title: 'Canonical points to a page whose own canonical points elsewhere',
    fix: 'Point the canonical at the final canonical URL.',
  },
  duplicate_content: {
    category: 'content',
    priority: 'error',
    title: 'Pages with the same content and no canonical between them',
    fix: 'Keep one page, or add a canonical from the copies to it.',
  },
  title_missing: {
    category: 'content',
    priority: 'error',
    title: 'Missing or empty title',
    fix: 'Add a unique, descriptive <title>.',
  },
  title_too_long: {
    category: 'content',
    priority: 'notice',
    title: `Title longer than ${T.titleMaxChars} characters`,
    fix: `Shorten the title to ${T.titleMaxChars} characters or fewer.`,
  },
  title_too_short: {
    category: 'content',
    priority: 'notice',
    title: `Title shorter than ${T.titleMinChars} characters`,
    fix: 'Write a title that says what the page is about.',
  },
  title_duplicate: {
    category: 'content',
    priority: 'warning',
    title: 'Title used by other pages',
    fix: 'Give each indexable page a title of its own.',
  },
  description_missing: {
    category: 'content',
    priority: 'warning',
    title: 'Missing meta description',
    fix: 'Add a <meta name="description"> summarising the page.',
  },
  description_too_long: {
    category: 'content',
    priority: 'notice',
    title: `Meta description longer than ${T.descriptionMaxChars} characters`,
    fix: `Shorten the description to ${T.descriptionMaxChars} characters or fewer.`,
  },
  description_too_short: {
    category: 'content',
    priority: 'notice',
    title: `Meta description shorter than ${T.descriptionMinChars} characters`,
    fix: 'Write a description of a sentence or two.',
  },
  description_duplicate: {
    category: 'content',
    priority: 'warning',
    title: 'Meta description used by other pages',
    fix: 'Give each indexable page a description of its own.',
  },
  h1_missing: {
    category: 'content',
    priority: 'warning',
    title: 'No H1 heading',
    fix: 'Add one <h1> naming the page’s subject.',
  },
  h1_multiple: {
    category: 'content',
    priority: 'notice',
    title: 'More than one H1 heading',
    fix: 'Keep one <h1>; make the others <h2> or lower.',
  },
  broken_link_internal: {
    category: 'links',
    priority: 'error',
    title: 'Broken internal link',
    fix: 'Fix or remove links to pages of the site that are broken.',
  },
  broken_link_external: {
    category: 'links',
    priority: 'warning',
    title: 'Broken external link',
    fix: 'Update or remove links to other sites that are broken.',
  },
  broken_resource: {
    category: 'links',
    priority: 'error',
    title: 'Broken resource (image, script, stylesheet, frame…)',
    fix: 'Fix the resource’s URL or restore the file.',
  },
  missing_fragment: {
    category: 'links',
    priority: 'warning',
    title: 'Link to a missing anchor (#fragment) on a page of the site (checkFragments)',
    fix: 'Point the link at an id the page has, or give the page that id back.',
  },
  deep_page: {
    category: 'links',
    priority: 'notice',
    title: `Page more than ${T.maxClickDepth} clicks from the start page`,
    fix: 'Link to the page from a page closer to the start.',
  },
  orphan_page: {
    category: 'links',
    priority: 'warning',
    title: 'Orphan page (in the sitemap, linked from no page)',
    fix: 'Link to the page from a related page, or drop it from the sitemap.',
  },
  page_too_heavy: {
    category: 'performance',
    priority: 'warning',
    title: `HTML larger than ${T.heavyPageChars / 1024 / 1024} MB`,
    fix: 'Trim the markup: paginate, lazy-load, move inline data out.',
  },
  slow_ttfb: {
    category: 'performance',
    priority: 'warning',
    title: `Time to first byte over ${T.slowTtfbMs} ms`,
    fix: 'Cache the page or speed up the server’s answer.',
  },
  lang_missing: {
    category: 'international',
    priority: 'notice',
    title: 'No lang attribute on <html>',
    fix: 'Add lang="…" with the page’s language to the <html> element.',
  },
  hreflang_invalid_code: {
    category: 'international',
    priority: 'error',
    title: 'hreflang with an invalid language or region code',
    fix: 'Use ISO 639-1 language codes, optionally with an ISO 3166-1 region (en-GB), or x-default.',
  },
  hreflang_no_return: {
    category: 'international',
    priority: 'error',
    title: 'hreflang alternate does not link back',
    fix: 'Add the reciprocal hreflang link on the alternate page.',
  },
  jsonld_invalid: {
    category: 'structured_data',
    priority: 'warning',
    title: 'JSON-LD that does not parse',
    fix: 'Fix the JSON syntax of the application/ld+json block.',
  },
  image_missing_alt: {
    category: 'images',
    priority: 'warning',
    title: 'Image without alt attribute',
    fix: 'Add alt text (alt="" for a decorative image).',
  },
  mixed_content: {
    category: 'security',
    priority: 'error',
    title: 'Mixed content (http: resource on an https page)',
    fix: 'Load every resource over https.',
  },
  robots_txt_unreachable: {
    category: 'indexability',
    priority: 'error',
    title: 'robots.txt answers a server error or nothing',
    fix: 'Serve robots.txt (or a 404): while it fails, search engines stop crawling the site.',
  },
  robots_txt_invalid: {
    category: 'indexability',
    priority: 'warning',
    title: 'robots.txt has lines crawlers cannot read',
    fix: 'Write each line as "field: value" in a user-agent group (RFC 9309); crawlers skip the others.',
  },
  sitemap_invalid: {
    category: 'sitemap',
    priority: 'warning',
    title: 'Sitemap is not a valid sitemap',
    fix: 'Serve each sitemap robots.txt names as a <urlset> or <sitemapindex> of this site, 50,000 URLs at most.',
  },
  sitemap_missing: {
    category: 'sitemap',
    priority: 'notice',
    title: 'No XML sitemap found',
    fix: 'Publish a sitemap and name it in robots.txt.',
  },
  sitemap_non200: {
    category: 'sitemap',
    priority: 'warning',
    title: 'Sitemap lists a URL that does not answer 200',
    fix: 'List only final URLs that answer 200.',
  },
  site_down: {
    category: 'indexability',
    priority: 'error',
    title: 'Start URL is down (the down-check)',
    fix: 'Make the start URL answer: the server, DNS or network refused or timed out the check.',
  },
  tls_certificate_invalid: {
    category: 'security',
    priority: 'error',
    title: 'TLS certificate expired, not trusted or for another name',
    fix: 'Install a certificate from a trusted CA that covers this host name, with its full chain.',
  },
  tls_certificate_expiring: {
    category: 'security',
    priority: 'warning',
    title: 'TLS certificate expires within 30 days',
    fix: 'Renew the certificate (or check that automatic renewal works).',
  },
  tls_weak: {
    category: 'security',
    priority: 'warning',
    title: 'TLS set-up graded C or below, or old protocols accepted',
    fix: 'Turn off TLS 1.0 and 1.1 and weak suites; see the ssl-scan route for the grade’s reasons.',
  },
  sitemap_non_indexable: {
    category: 'sitemap',
    priority: 'warning',
    title: 'Sitemap lists a page that is not indexable',
    fix: 'Drop noindex and canonicalised pages from the sitemap.',
  },
} as const satisfies Record<string, IssueType>;

export type IssueId = keyof typeof ISSUES;

export const ISSUE_IDS = Object.keys(ISSUES) as IssueId[];

const RANK: Record<Priority, number> = { error: 0, warning: 1, notice: 2 };

export function priorityRank(priority: Priority): number {
  return RANK[priority];
}
