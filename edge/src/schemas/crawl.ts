/** Link extraction, link checking and crawl jobs: the spec's "Resources and their fields". */
import { z } from 'zod';
import { count, timestamp } from './common.js';

const severity = z.enum(['ok', 'warning', 'broken', 'info']);
const linkType = z.enum(['internal', 'external', 'mailto', 'tel', 'anchor', 'other']);
/** docs/grading.md: A+ 97-100, A 90-96, B 80-89, C 70-79, D 60-69, F below 60. */
const grade = z.enum(['A+', 'A', 'B', 'C', 'D', 'F']);
const healthScore = z.number().int().min(0).max(100);
const rel = z.string().nullable().meta({ description: 'The rel attribute; null when the anchor has none.' });
/** Crawl results only: where a link was found. */
const sources = {
  sources: z.array(z.string()).meta({ description: 'The first pages (at most 25, crawl order) the link is on.' }),
  sourceCount: count.meta({ description: 'Pages the link is on.' }),
};

const Summary = z
  .strictObject({ ok: count, warnings: count, broken: count, info: count, internal: count, external: count })
  .meta({ id: 'LinkSummary' });
const StatusBreakdownRow = z
  .strictObject({
    code: z.string().meta({ description: 'An HTTP status as text, or a network error code.' }),
    label: z.string(),
    severity,
    count,
  })
  .meta({ id: 'StatusBreakdownRow' });

const linkRecordFields = {
  url: z.string().meta({ description: 'Resolved absolute URL.' }),
  originalHref: z.string(),
  text: z.string(),
  type: linkType,
  rel,
  statusCode: z.number().int().nullable().meta({ description: 'The final status; null when no response came.' }),
  statusText: z.string(),
  severity,
  reason: z.string(),
  category: z.string(),
  redirected: z.boolean(),
  finalUrl: z.string().optional().meta({ description: 'Where the redirects ended; only when redirected.' }),
  responseTimeMs: count.optional().meta({ description: 'Only when a response came.' }),
  errorCode: z.string().optional().meta({ description: 'Low-level network error code, when there is one.' }),
};
const LinkRecord = z.strictObject(linkRecordFields).meta({ id: 'LinkRecord' });
const CrawlLinkRecord = z.strictObject({ ...linkRecordFields, ...sources }).meta({ id: 'CrawlLinkRecord' });

export const BrokenLinksResult = z
  .strictObject({
    url: z.string(),
    scannedAt: timestamp,
    totalLinks: count,
    checkedLinks: count,
    truncated: z.boolean(),
    healthScore,
    grade,
    summary: Summary,
    statusBreakdown: z.array(StatusBreakdownRow),
    links: z.array(LinkRecord),
  })
  .meta({ id: 'BrokenLinksResult' });

const extractedLinkFields = {
  url: z.string().meta({ description: 'Resolved absolute URL, or the raw href for non-HTTP schemes.' }),
  originalHref: z.string(),
  text: z.string(),
  rel,
  type: linkType,
  scheme: z.string().meta({ description: 'URL scheme without the colon.' }),
};
const extractResultFields = {
  url: z.string(),
  scannedAt: timestamp,
  totalLinks: count,
  truncated: z.boolean(),
  counts: z
    .strictObject({ total: count, internal: count, external: count, mailto: count, tel: count })
    .meta({ id: 'LinkCounts' }),
};
export const ExtractResult = z
  .strictObject({
    ...extractResultFields,
    links: z.array(z.strictObject(extractedLinkFields).meta({ id: 'ExtractedLink' })),
  })
  .meta({ id: 'ExtractResult' });
const CrawlExtractResult = z
  .strictObject({
    ...extractResultFields,
    links: z.array(z.strictObject({ ...extractedLinkFields, ...sources }).meta({ id: 'CrawlExtractedLink' })),
  })
  .meta({ id: 'CrawlExtractResult' });

export const JobStarted = z.strictObject({ jobId: z.string() }).meta({ id: 'JobStarted' });

const progressFields = {
  phase: z.enum(['queued', 'sitemap', 'crawling', 'checking', 'done', 'failed']),
  message: z.string(),
  sitemapFound: z.boolean(),
  sitemapUrlCount: count,
};

const BrokenLinkCrawlResult = z
  .strictObject({
    url: z.string(),
    scannedAt: timestamp,
    healthScore,
    grade,
    summary: Summary,
    statusBreakdown: z.array(StatusBreakdownRow),
    pagesCrawled: count,
    pagesDiscovered: count,
    totalUniqueLinks: count,
    truncatedPages: z.boolean(),
    truncatedLinks: z.boolean(),
    links: z.array(CrawlLinkRecord),
    pages: z.array(
      z
        .strictObject({
          url: z.string(),
          statusCode: z.number().int().nullable(),
          statusText: z.string(),
          severity,
          linksOnPage: count,
          depth: count.meta({ description: 'Breadth-first depth from the entry URL.' }),
          fromSitemap: z.boolean(),
        })
        .meta({ id: 'CrawledPage' }),
    ),
  })
  .meta({ id: 'BrokenLinkCrawlResult' });

/** A poll's `data`: `result` once done, `error` once failed, neither while crawling. */
const job = (id: string, progress: z.ZodType, result: z.ZodType) =>
  z
    .strictObject({
      jobId: z.string(),
      status: z.enum(['crawling', 'done', 'failed']),
      progress,
      result: result.optional(),
      error: z.strictObject({ code: z.string(), message: z.string() }).optional(),
    })
    .meta({ id });

export const BrokenLinkCrawlJob = job(
  'BrokenLinkCrawlJob',
  z
    .strictObject({
      ...progressFields,
      pagesCrawled: count,
      pagesDiscovered: count,
      pagesCap: count,
      linksFound: count.meta({
        description:
          'Unique links found so far, of any type (anchors and other schemes too): what the result’s ' +
          'totalUniqueLinks counts; equal to it once done.',
      }),
      linksChecked: count,
      linksTotal: count,
    })
    .meta({ id: 'BrokenLinkCrawlProgress' }),
  BrokenLinkCrawlResult,
);

export const LinkExtractCrawlJob = job(
  'LinkExtractCrawlJob',
  z
    .strictObject({
      ...progressFields,
      pagesScanned: count,
      pagesDiscovered: count,
      pagesCap: count,
      linksFound: count.meta({
        description:
          'Unique links found so far of the counted types (internal, external, mailto, tel; not in-page ' +
          'anchors or other schemes): what the result’s totalLinks and counts.total count; equal to them once ' +
          'done, unless the result was cut at 3,000 links, when it also counts the links past the cap.',
      }),
    })
    .meta({ id: 'LinkExtractCrawlProgress' }),
  CrawlExtractResult,
);
