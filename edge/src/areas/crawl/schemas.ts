/** Link extraction, link checking and crawl jobs: the spec's "Resources and their fields". */
import * as crawl from '@webutil/proto/webutil/crawl/v1/crawl.fields';
import { z } from 'zod';
import { count, queryFlag, targetUrl, timestamp } from '../../rest/common.js';
import { type FieldEdit, restEnum, restObject } from '../../rest/from-proto.js';

/** An optional boolean option; absent, false. */
const flag = (name: string, description: string) =>
  z
    .boolean({ error: `${name} must be true or false` })
    .optional()
    .meta({ default: false, description: `${description} Default false.` });

/** An optional boolean option that is true unless sent false. */
const onFlag = (name: string, description: string) =>
  z
    .boolean({ error: `${name} must be true or false` })
    .optional()
    .meta({ default: true, description: `${description} Default true.` });

/** The bounds of each link option, declared once in crawl.proto (decision 0313). */
const bounds = crawl.LinkOptions.fields;

/** Glob patterns (docs/decisions/0215-link-check-options.md); the crawl service compiles them. */
const patterns = (
  name: 'include' | 'exclude' | 'skipFragments',
  kind: string,
  meta: { description: string; example: string[] },
) => {
  const { maxItems, maxChars } = bounds[name].bounds;
  return z
    .array(
      z
        .string({ error: `${name} must be an array of strings` })
        .min(1, `${name} must not hold an empty pattern`)
        .max(maxChars, `${name} holds a pattern longer than ${maxChars} characters`),
      { error: `${name} must be an array of ${kind} glob patterns` },
    )
    .max(maxItems, `${name} must have at most ${maxItems} patterns`)
    .optional()
    .meta(meta);
};

const globs = (name: 'include' | 'exclude', description: string) =>
  patterns(name, 'URL', {
    description: `URL globs (at most ${bounds[name].bounds.maxItems}): ${description}`,
    example: ['https://example.com/blog/**', '**/*.pdf'],
  });

const STATUS_RANGE = /^(\d{3})(?:-(\d{3}))?$/;
const STATUS_RULE = 'acceptStatus entries must be status codes (100-599) or ranges of them such as 200-299';
const acceptStatus = z
  .array(
    z
      .union([z.number().int(), z.string()], { error: STATUS_RULE })
      .transform((value) => String(value).trim())
      .refine((value) => {
        const [, min, max = min] = STATUS_RANGE.exec(value) ?? [];
        return min !== undefined && Number(min) >= 100 && Number(max) <= 599 && Number(min) <= Number(max);
      }, STATUS_RULE),
    { error: 'acceptStatus must be an array of status codes or ranges' },
  )
  .max(
    bounds.acceptStatus.bounds.maxItems,
    `acceptStatus must have at most ${bounds.acceptStatus.bounds.maxItems} entries`,
  )
  .optional()
  .meta({
    description: 'Status codes (403) or inclusive ranges ("200-299") graded ok, besides 2xx.',
    example: [403, '200-299'],
  });

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;
const HEADERS = bounds.headers.bounds;
const headers = z
  .record(
    z.string().regex(HEADER_NAME, 'headers must have valid header names'),
    z
      .string({ error: 'headers values must be strings' })
      .max(HEADERS.maxChars, `headers values must be at most ${HEADERS.maxChars} characters`)
      .regex(/^[\t\x20-\x7e\x80-\xff]*$/, 'headers values must not hold line breaks or control characters'),
    {
      error: (issue) =>
        issue.code === 'invalid_key'
          ? 'headers must have valid header names'
          : 'headers must be an object of header names and values',
    },
  )
  .refine(
    (value) => Object.keys(value).length <= HEADERS.maxItems,
    `headers must have at most ${HEADERS.maxItems} entries`,
  )
  .optional()
  .meta({
    maxProperties: HEADERS.maxItems,
    description:
      `Request headers (at most ${HEADERS.maxItems}) sent only to the entry URL’s own origin ` +
      '(scheme, host and port), never to ' +
      'another origin nor after a redirect leaves it: e.g. Authorization for a staging site behind basic auth. ' +
      'Host, User-Agent, Accept-Encoding, Set-Cookie, hop-by-hop and framing headers are refused.',
    example: { Authorization: 'Basic dXNlcjpwYXNz' },
  });

const include = globs(
  'include',
  'when given, only links and pages whose URL matches one are checked and followed. ' +
    '`*` stays within a path segment, `**` crosses them; `?`, `[abc]` and `{a,b}` as in shells.',
);
const exclude = globs(
  'exclude',
  'links and pages whose URL matches one are left out (not checked, followed or reported).',
);
/** An integer option from the proto's min to its max. */
const integer = (name: 'maxPages' | 'maxDepth') => {
  const { min, max } = bounds[name].bounds;
  const rule = `${name} must be an integer from ${min} to ${max}`;
  return z.number({ error: rule }).int(rule).min(min, rule).max(max, rule).optional();
};
const maxPages = integer('maxPages').meta({
  default: bounds.maxPages.bounds.max,
  description: `Pages fetched at most. Default ${bounds.maxPages.bounds.max}.`,
});
export const maxDepth = integer('maxDepth').meta({
  description: 'Deepest breadth-first depth fetched (0: the entry page only). Default no limit.',
});

const skipFragments = patterns('skipFragments', 'fragment', {
  description:
    `Fragment globs (at most ${bounds.skipFragments.bounds.maxItems}, without the #) that checkFragments ` +
    'leaves unverified: single-page-app routes such as `/**` (#/route) and `!/**` (#!/route). ' +
    '`*` stays within a /-segment, `**` crosses them.',
  example: ['/**', '!/**'],
});

export const checkFields = {
  url: targetUrl,
  skipFragments,
  githubAnchors: flag(
    'githubAnchors',
    'With checkFragments, #name also matches an element whose id is user-content-name (GitHub’s rendered ' +
      'Markdown prefixes heading and footnote ids so). The HTML standard alone applies otherwise.',
  ),
  checkFragments: flag(
    'checkFragments',
    'Verify each distinct #fragment of a link to a page of the site against that page’s id and name ' +
      'attributes (HTML pages only); a missing one is a warning naming it, and each link lists its fragments.',
  ),
  checkResources: onFlag(
    'checkResources',
    'Check the page’s resources too: images (src and srcset candidates), scripts, stylesheets, icons, preloads, ' +
      'manifests, frames, video (and posters), audio, tracks, embeds, objects, image inputs, SVG images; head ' +
      'and metadata links (canonical, alternate, amphtml, next/prev, og:url, og:image, twitter:image, meta ' +
      'refresh targets, URLs in JSON-LD); CSS url()s and @imports of style attributes, <style> blocks and the ' +
      'site’s stylesheets (each read once); checked, never followed.',
  ),
  include,
  exclude,
  checkExternal: onFlag('checkExternal', 'Check links to other sites; false leaves them out.'),
  acceptStatus,
  headers,
};

/** POST /v1/broken-links. */
export const BrokenLinksInput = z.object(checkFields);
/** The broken-link crawl start. */
export const BrokenLinksCrawlInput = z.object({ ...checkFields, maxPages, maxDepth });

const includeResources = (description: string) => ({
  includeResources: flag(
    'includeResources',
    `${description} List the page’s resources too (images, srcset candidates, scripts, stylesheets, icons, ` +
      'frames, media, objects, head and metadata links, JSON-LD URLs, CSS url()s and @imports), each naming ' +
      'its `element`, and count them.',
  ),
});

/** GET /v1/link-extract: a query parameter, so the flag is the text true or false. */
export const LinkExtractInput = z.object({
  url: targetUrl,
  includeResources: queryFlag('includeResources', {
    default: false,
    description:
      'true: list the page’s resources too (images, srcset candidates, scripts, stylesheets, icons, frames, ' +
      'media, objects, head and metadata links, JSON-LD URLs, CSS url()s and @imports), each naming its ' +
      '`element`, and count them. ' +
      'Default false.',
  }),
});
/** The link-extract crawl start. */
export const LinkExtractCrawlInput = z.object({
  url: targetUrl,
  ...includeResources('Anchors only by default, as the spec counts.'),
  include,
  exclude,
  maxPages,
  maxDepth,
  headers,
});

/** The crawl service's LinkOptions of a request's option fields. */
export function linkOptions(input: {
  checkResources?: boolean;
  includeResources?: boolean;
  include?: string[];
  exclude?: string[];
  checkExternal?: boolean;
  acceptStatus?: string[];
  maxPages?: number;
  maxDepth?: number;
  headers?: Record<string, string>;
  skipFragments?: string[];
  githubAnchors?: boolean;
}) {
  return {
    skipFragments: input.skipFragments ?? [],
    githubAnchors: input.githubAnchors,
    resources: input.checkResources ?? input.includeResources,
    include: input.include ?? [],
    exclude: input.exclude ?? [],
    checkExternal: input.checkExternal,
    acceptStatus: input.acceptStatus ?? [],
    maxPages: input.maxPages,
    maxDepth: input.maxDepth,
    headers: input.headers ?? {},
  };
}

const severity: FieldEdit = { value: restEnum(crawl.Severity) };
const linkType: FieldEdit = { value: restEnum(crawl.LinkType) };
/** docs/grading.md: A+ 97-100, A 90-96, B 80-89, C 70-79, D 60-69, F below 60. */
const grade: FieldEdit = { value: z.enum(['A+', 'A', 'B', 'C', 'D', 'F']) };
const healthScore: FieldEdit = { value: z.number().int().min(0).max(100) };
const counted: FieldEdit = { value: count };
const scannedAt: FieldEdit = { value: timestamp };
const rel: FieldEdit = {
  nullable: true,
  description:
    'The rel attribute; null when the element has none. For meta and json-ld links, the property or key ' +
    'naming the URL; for style and css links, the CSS property or @import.',
};
/** Crawl results only: where a link was found. */
const sources = {
  sources: { description: 'The first pages (at most 25, crawl order) the link is on.' },
  sourceCount: { value: count, required: true, description: 'Pages the link is on.' },
} as const satisfies Record<string, FieldEdit>;
/** Outside a crawl result, a link is on the one page scanned. */
const onePage = { sources: 'crawl results only', sourceCount: 'crawl results only' };

const Summary = restObject(crawl.LinkSummary, {
  id: 'LinkSummary',
  fields: {
    ok: counted,
    warnings: counted,
    broken: counted,
    info: counted,
    internal: counted,
    external: counted,
    resources: { value: count, description: 'Of the links, the resources (an element other than a or area).' },
  },
});
const StatusBreakdownRow = restObject(crawl.StatusBreakdownRow, {
  id: 'StatusBreakdownRow',
  fields: {
    code: { description: 'An HTTP status as text, or a network error code.' },
    severity,
    count: counted,
  },
});

const ELEMENTS = [
  'a',
  'area',
  'img',
  'source',
  'script',
  'link',
  'iframe',
  'video',
  'audio',
  'track',
  'embed',
  'object',
  'input',
  'image',
  'use',
  'meta',
  'json-ld',
  'style',
  'css',
] as const;
const element: FieldEdit = {
  value: z.enum(ELEMENTS),
  description:
    'The element the URL was first found on: a or area for links, the others for resources (checked, never ' +
    'followed as pages). link: its rel says which (stylesheet, icon, canonical, alternate, amphtml, next, ' +
    'prev, manifest, apple-touch-icon, modulepreload...); meta: rel is og:image, og:url, twitter:image... or ' +
    'refresh (a meta refresh target); video: rel poster for its poster image; input is type=image; image and ' +
    'use are SVG; json-ld: a URL inside a JSON-LD block, rel its key (url, image, logo, sameAs...); ' +
    'style: a url() or @import in a style attribute or <style> block, css: one in a stylesheet of the ' +
    'site (its URL is the text), rel the property naming it (background, src...) or @import.',
};

const linkRecordFields = {
  url: { description: 'Resolved absolute URL.' },
  element,
  type: linkType,
  rel,
  statusCode: { nullable: true, description: 'The final status; null when no response came.' },
  severity,
  finalUrl: { description: 'Where the redirects ended; only when redirected.' },
  responseTimeMs: { value: count, description: 'Only when a response came.' },
  errorCode: { description: 'Low-level network error code, when there is one.' },
  originalHref: { description: 'The first href as authored that named this URL (fragments aside).' },
  fragments: {
    value: restObject(crawl.LinkFragment, {
      id: 'LinkFragment',
      fields: {
        fragment: { description: 'The fragment, decoded, without the #.' },
        found: { description: 'Whether the page has an element with this id, or an <a> with this name.' },
      },
    }),
    description:
      'With checkFragments, the distinct fragments this URL was linked with (at most 25) and whether its page ' +
      'has each (one its page could not settle is left out); empty without checkFragments.',
  },
} satisfies Record<string, FieldEdit>;
const LinkRecord = restObject(crawl.LinkRecord, { id: 'LinkRecord', fields: linkRecordFields, omit: onePage });
const CrawlLinkRecord = restObject(crawl.LinkRecord, {
  id: 'CrawlLinkRecord',
  fields: { ...linkRecordFields, ...sources },
});

export const BrokenLinksResult = restObject(crawl.CheckLinksResponse, {
  id: 'BrokenLinksResult',
  fields: {
    scannedAt,
    totalLinks: counted,
    checkedLinks: counted,
    healthScore,
    grade,
    summary: { value: Summary },
    statusBreakdown: { value: StatusBreakdownRow },
    links: { value: LinkRecord },
  },
});

const extractedLinkFields = {
  url: { description: 'Resolved absolute URL, or the raw href for non-HTTP schemes.' },
  element: { ...element, description: `Only with includeResources. ${element.description}` },
  rel,
  type: linkType,
  scheme: { description: 'URL scheme without the colon.' },
} satisfies Record<string, FieldEdit>;
const LinkCounts = restObject(crawl.LinkCounts, {
  id: 'LinkCounts',
  fields: { total: counted, internal: counted, external: counted, mailto: counted, tel: counted },
});
const extractResultFields = { scannedAt, totalLinks: counted, counts: { value: LinkCounts } };
export const ExtractResult = restObject(crawl.ExtractResult, {
  id: 'ExtractResult',
  fields: {
    ...extractResultFields,
    links: {
      value: restObject(crawl.ExtractedLink, { id: 'ExtractedLink', fields: extractedLinkFields, omit: onePage }),
    },
  },
});
const CrawlExtractResult = restObject(crawl.ExtractResult, {
  id: 'CrawlExtractResult',
  fields: {
    ...extractResultFields,
    links: {
      value: restObject(crawl.ExtractedLink, {
        id: 'CrawlExtractedLink',
        fields: { ...extractedLinkFields, ...sources },
      }),
    },
  },
});

export const JobStarted = restObject(crawl.StartBrokenLinkCrawlResponse, { id: 'JobStarted' });

const progressFields = {
  phase: { value: restEnum(crawl.CrawlPhase) },
  sitemapUrlCount: counted,
  pagesDiscovered: counted,
  pagesCap: counted,
} satisfies Record<string, FieldEdit>;

const BrokenLinkCrawlResult = restObject(crawl.BrokenLinkCrawlResult, {
  id: 'BrokenLinkCrawlResult',
  fields: {
    scannedAt,
    healthScore,
    grade,
    summary: { value: Summary },
    statusBreakdown: { value: StatusBreakdownRow },
    pagesCrawled: counted,
    pagesDiscovered: counted,
    totalUniqueLinks: counted,
    truncatedLinks: { description: 'True when the 1,500-link check cap was reached (only then).' },
    linksCutBy: {
      value: z.enum(['anchor_cap', 'memory', 'url_length', 'time_budget']),
      description:
        'Each other cap that left links out of the result: `anchor_cap` (in-page anchors reached their own ' +
        'cap), `memory` (the job’s memory budget for links ran out), `url_length` (URLs past the length ' +
        'bound), `time_budget` (links found but not checked within the time budget). Empty when none did.',
    },
    links: { value: CrawlLinkRecord },
    pages: {
      value: restObject(crawl.CrawledPage, {
        id: 'CrawledPage',
        fields: {
          statusCode: { nullable: true },
          severity,
          linksOnPage: counted,
          depth: { value: count, description: 'Breadth-first depth from the entry URL.' },
          reason: {
            description: 'Why the page was not fetched (an `info` row): "disallowed by robots.txt".',
          },
        },
      }),
    },
  },
});

/** A poll's `data`: `result` once done, `error` once failed, neither while crawling. */
const jobFields = {
  status: { value: restEnum(crawl.JobStatus) },
  error: { value: restObject(crawl.JobError) },
} satisfies Record<string, FieldEdit>;

export const BrokenLinkCrawlJob = restObject(crawl.GetBrokenLinkCrawlResponse, {
  id: 'BrokenLinkCrawlJob',
  fields: {
    ...jobFields,
    progress: {
      value: restObject(crawl.BrokenLinkCrawlProgress, {
        id: 'BrokenLinkCrawlProgress',
        fields: {
          ...progressFields,
          pagesCrawled: counted,
          linksFound: {
            value: count,
            description:
              'Unique links found so far, of any type (anchors and other schemes too): what the result’s ' +
              'totalUniqueLinks counts; equal to it once done.',
          },
          linksChecked: counted,
          linksTotal: counted,
        },
      }),
    },
    result: { value: BrokenLinkCrawlResult },
  },
});

export const LinkExtractCrawlJob = restObject(crawl.GetLinkExtractCrawlResponse, {
  id: 'LinkExtractCrawlJob',
  fields: {
    ...jobFields,
    progress: {
      value: restObject(crawl.LinkExtractCrawlProgress, {
        id: 'LinkExtractCrawlProgress',
        fields: {
          ...progressFields,
          pagesScanned: counted,
          linksFound: {
            value: count,
            description:
              'Unique links found so far of the counted types (internal, external, mailto, tel; not in-page ' +
              'anchors or other schemes): what the result’s totalLinks and counts.total count; equal to them once ' +
              'done, unless the result was cut at 3,000 links, when it also counts the links past the cap.',
          },
        },
      }),
    },
    result: { value: CrawlExtractResult },
  },
});
