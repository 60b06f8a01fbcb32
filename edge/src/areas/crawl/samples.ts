/**
 * The sandbox's fixed replies for link extraction, link checks and crawls, typed as the service's
 * ts-proto replies: the compiler checks them against the protos, and the area's presenters turn
 * them into the answers (docs/decisions/0207-sandbox-keys.md). The sandbox's clients
 * (edge/src/sandbox/clients.ts) serve them.
 */
import type {
  CheckLinksResponse,
  ExtractResult,
  GetBrokenLinkCrawlResponse,
  GetLinkExtractCrawlResponse,
  LinkRecord,
  StatusBreakdownRow,
} from '@webutil/proto/webutil/crawl/v1/crawl';
import { SAMPLE_JOBS, SAMPLE_SCANNED_AT as SCANNED_AT, SAMPLE_URL as URL } from '../../sandbox/files.js';

const extractResult: ExtractResult = {
  url: URL,
  scannedAt: SCANNED_AT,
  totalLinks: 3,
  truncated: false,
  counts: { total: 3, internal: 1, external: 1, mailto: 1, tel: 0 },
  links: [
    {
      url: `${URL}about`,
      originalHref: '/about',
      text: 'About',
      rel: undefined,
      type: 'internal',
      scheme: 'https',
      sources: [],
      sourceCount: undefined,
      element: 'a',
    },
    {
      url: 'https://www.iana.org/domains/example',
      originalHref: 'https://www.iana.org/domains/example',
      text: 'More information',
      rel: 'noopener',
      type: 'external',
      scheme: 'https',
      sources: [],
      sourceCount: undefined,
      element: 'a',
    },
    {
      url: 'mailto:hello@example.com',
      originalHref: 'mailto:hello@example.com',
      text: 'Write to us',
      rel: undefined,
      type: 'mailto',
      scheme: 'mailto',
      sources: [],
      sourceCount: undefined,
      element: 'a',
    },
  ],
};

export const extractLinks = { result: extractResult };

const okLink: LinkRecord = {
  url: `${URL}about`,
  originalHref: '/about',
  text: 'About',
  type: 'internal',
  rel: undefined,
  statusCode: 200,
  statusText: 'OK',
  severity: 'ok',
  reason: 'The link works.',
  category: 'OK',
  redirected: false,
  finalUrl: undefined,
  responseTimeMs: 41,
  errorCode: undefined,
  sources: [URL],
  sourceCount: 1,
  fragments: [],
  element: 'a',
};
const brokenLink: LinkRecord = {
  ...okLink,
  url: `${URL}old-page`,
  originalHref: '/old-page',
  text: 'Old page',
  statusCode: 404,
  statusText: 'Not Found',
  severity: 'broken',
  reason: 'The page does not exist (404).',
  category: 'Client error',
  responseTimeMs: 37,
};
/** Shared with the bookmark check's sample. */
export const breakdown: StatusBreakdownRow[] = [
  { code: '200', label: 'OK', severity: 'ok', count: 1 },
  { code: '404', label: 'Not Found', severity: 'broken', count: 1 },
];
const linkSummary = { ok: 1, warnings: 0, broken: 1, info: 0, internal: 2, external: 0, resources: 0 };

export const checkLinks: CheckLinksResponse = {
  url: URL,
  scannedAt: SCANNED_AT,
  totalLinks: 2,
  checkedLinks: 2,
  truncated: false,
  healthScore: 50,
  grade: 'D',
  summary: linkSummary,
  statusBreakdown: breakdown,
  links: [brokenLink, okLink],
};

export const brokenLinkCrawl: GetBrokenLinkCrawlResponse = {
  jobId: SAMPLE_JOBS.brokenLinksCrawl,
  status: 'done',
  progress: {
    phase: 'done',
    message: 'Done: 2 pages crawled, 2 links checked.',
    sitemapFound: false,
    sitemapUrlCount: 0,
    pagesCrawled: 2,
    pagesDiscovered: 2,
    pagesCap: 50,
    linksFound: 2,
    linksChecked: 2,
    linksTotal: 2,
  },
  result: {
    url: URL,
    scannedAt: SCANNED_AT,
    healthScore: 50,
    grade: 'D',
    summary: linkSummary,
    statusBreakdown: breakdown,
    pagesCrawled: 2,
    pagesDiscovered: 2,
    totalUniqueLinks: 2,
    truncatedPages: false,
    truncatedLinks: false,
    linksCutBy: [],
    links: [brokenLink, okLink],
    pages: [
      {
        url: URL,
        statusCode: 200,
        statusText: 'OK',
        severity: 'ok',
        linksOnPage: 2,
        depth: 0,
        fromSitemap: false,
        reason: undefined,
      },
      {
        url: `${URL}about`,
        statusCode: 200,
        statusText: 'OK',
        severity: 'ok',
        linksOnPage: 0,
        depth: 1,
        fromSitemap: false,
        reason: undefined,
      },
    ],
  },
  error: undefined,
};

export const linkExtractCrawl: GetLinkExtractCrawlResponse = {
  jobId: SAMPLE_JOBS.linkExtractCrawl,
  status: 'done',
  progress: {
    phase: 'done',
    message: 'Done: 1 page scanned, 3 links found.',
    sitemapFound: false,
    sitemapUrlCount: 0,
    pagesScanned: 1,
    pagesDiscovered: 1,
    pagesCap: 50,
    linksFound: 3,
  },
  // A crawl's links name the pages they are on.
  result: {
    ...extractResult,
    links: extractResult.links.map((link) => ({ ...link, sources: [URL], sourceCount: 1 })),
  },
  error: undefined,
};
