/** Link extraction, link checking and crawl jobs: the spec's "Resources and their fields". */
import * as crawl from '@webutil/proto/webutil/crawl/v1/crawl.fields';
import { z } from 'zod';
import { count, targetUrl, timestamp } from './common.js';
import { type FieldEdit, restObject } from './from-proto.js';

/** An optional boolean option; absent, false. */
const flag = (name: string, description: string) =>
  z
    .boolean({ error: `${name} must be true or false` })
    .optional()
    .meta({ default: false, description: `${description} Default false.` });

/** POST /v1/broken-links and the broken-link crawl start. */
export const BrokenLinksInput = z.object({
  url: targetUrl,
  checkFragments: flag(
    'checkFragments',
    'Verify each distinct #fragment of a link to a page of the site against that page’s id and name ' +
      'attributes (HTML pages only); a missing one is a warning naming it, and each link lists its fragments.',
  ),
});

const severity: FieldEdit = { value: z.enum(['ok', 'warning', 'broken', 'info']) };
const linkType: FieldEdit = { value: z.enum(['internal', 'external', 'mailto', 'tel', 'anchor', 'other']) };
/** docs/grading.md: A+ 97-100, A 90-96, B 80-89, C 70-79, D 60-69, F below 60. */
const grade: FieldEdit = { value: z.enum(['A+', 'A', 'B', 'C', 'D', 'F']) };
const healthScore: FieldEdit = { value: z.number().int().min(0).max(100) };
const counted: FieldEdit = { value: count };
const scannedAt: FieldEdit = { value: timestamp };
const rel: FieldEdit = { nullable: true, description: 'The rel attribute; null when the anchor has none.' };
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

const linkRecordFields = {
  url: { description: 'Resolved absolute URL.' },
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
  phase: { value: z.enum(['queued', 'sitemap', 'crawling', 'checking', 'done', 'failed']) },
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
  status: { value: z.enum(['crawling', 'done', 'failed']) },
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
