/**
 * The sandbox's fixed replies, one per RPC a credit-spending route (or its job poll) makes, typed as
 * the services' ts-proto replies: the compiler checks them against the protos, and the routes'
 * presenters turn them into the answers, so a sandbox answer has the real shape by construction
 * (docs/decisions/0207-sandbox-keys.md). Written once, for https://example.com/.
 */
import type { ParseBookmarksResponse } from '@webutil/proto/webutil/bookmark/v1/bookmark';
import type {
  BookmarkCheckResult,
  CheckLinksResponse,
  ExtractResult,
  GetBookmarkCheckEditsResponse,
  GetBookmarkCheckResponse,
  GetBrokenLinkCrawlResponse,
  GetLinkExtractCrawlResponse,
  LinkRecord,
  StatusBreakdownRow,
} from '@webutil/proto/webutil/crawl/v1/crawl';
import type { DownCheckResponse, MetaScanResponse } from '@webutil/proto/webutil/metascan/v1/metascan';
import type { ScreenshotResponse, UrlToPdfResponse } from '@webutil/proto/webutil/render/v1/render';
import type { Certificate, SslScanResponse } from '@webutil/proto/webutil/tlsscan/v1/tlsscan';
import { SAMPLE_FILES, SAMPLE_PREFIX } from './files.js';

const URL = 'https://example.com/';
const SCANNED_AT = '2026-01-15T09:30:00.000Z';

/** The sample jobs: a start answers its id, a poll of it the sample's finished job. */
export const SAMPLE_JOBS = {
  brokenLinksCrawl: `${SAMPLE_PREFIX}broken-links-crawl`,
  linkExtractCrawl: `${SAMPLE_PREFIX}link-extract-crawl`,
  bookmarksCheck: `${SAMPLE_PREFIX}bookmarks-check`,
} as const;

export const downCheck: DownCheckResponse = {
  url: URL,
  testedFrom: 'Sandbox (sample result)',
  httpsStatus: 200,
  responseTimeMs: 182,
  ipAddress: '93.184.215.14',
  timings: { dnsMs: 12, connectMs: 31, tlsMs: 48, firstByteMs: 174, totalMs: 182 },
  redirects: [],
  statusMatches: undefined,
  keywordFound: undefined,
  verdict: 'up',
  reason: 'The site answered 200 in 182 ms.',
};

export const metaScan: MetaScanResponse = {
  url: URL,
  finalScore: 82,
  grade: 'B',
  categories: [
    {
      id: 'basic',
      results: [
        { id: 'title', value: 'Example Domain', status: 'pass', message: 'The title has 14 characters.' },
        {
          id: 'description',
          value: undefined,
          status: 'fail',
          message: 'No meta description: search engines write their own snippet.',
        },
      ],
    },
    {
      id: 'technical',
      results: [
        { id: 'robots-txt', value: `${URL}robots.txt`, status: 'pass', message: 'robots.txt allows crawling.' },
        { id: 'sitemap', value: undefined, status: 'warning', message: 'No sitemap was found.' },
      ],
    },
    {
      id: 'social',
      results: [{ id: 'og-title', value: 'Example Domain', status: 'pass', message: 'og:title is set.' }],
    },
    {
      id: 'images',
      results: [{ id: 'favicon', value: `${URL}favicon.ico`, status: 'pass', message: 'A favicon was found.' }],
    },
  ],
  summary: { critical: 1, warnings: 1, passed: 4, total: 6 },
  insights: [
    {
      id: 'indexability',
      results: [{ id: 'indexable', value: 'yes', status: 'pass', message: 'The page may be indexed.' }],
    },
  ],
  insightsSummary: { critical: 0, warnings: 0, passed: 1, total: 1 },
};

const certificate: Certificate = {
  subject: { CN: 'example.com' },
  issuer: { C: 'US', O: 'Sandbox CA', CN: 'Sandbox Sample CA' },
  validFrom: '2026-01-01T00:00:00.000Z',
  validTo: '2026-12-31T23:59:59.000Z',
  fingerprint: '3A:1F:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:01',
  fingerprint256: '5C:2E:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:00:02',
  serialNumber: '0A1B2C3D',
  altNames: ['example.com', 'www.example.com'],
  keySize: 256,
  sigalg: 'ecdsa-with-SHA256',
};

export const sslScan: SslScanResponse = {
  domain: 'example.com',
  port: 443,
  protocol: 'https',
  certificate,
  chain: [certificate, { ...certificate, subject: certificate.issuer, altNames: [], serialNumber: '01' }],
  isValid: true,
  daysUntilExpiry: 120,
  isExpired: false,
  certValidations: {
    selfSigned: false,
    chainComplete: true,
    trustedCert: true,
    commonNameValid: true,
    sanValid: true,
    chainIssueDescription: undefined,
  },
  tlsVersion: 'TLSv1.3',
  cipherSuite: 'TLS_AES_256_GCM_SHA384',
  securityGrade: 'A',
  score: 92,
  protocols: [
    { version: 'TLSv1', supported: false },
    { version: 'TLSv1.1', supported: false },
    { version: 'TLSv1.2', supported: true },
    { version: 'TLSv1.3', supported: true },
  ],
  gradeReasons: [{ code: 'NO_HSTS_PRELOAD', message: 'HSTS is not preloaded.', effect: 'none' }],
  hsts: { maxAge: '31536000', includeSubDomains: true, preload: false },
  ocspStapling: true,
  keyExchange: { type: 'ECDH', name: 'X25519', size: 253 },
  caa: { domain: 'example.com', records: [{ critical: false, tag: 'issue', value: 'sandbox-ca.example' }] },
  ipAddress: '93.184.215.14',
  alpn: ['h2', 'http/1.1'],
  scoreAreas: { certificate: 100, protocolSupport: 95, keyExchange: 90, cipherStrength: 90 },
  hstsStatus: 'honoured',
  cipherSuites: [
    {
      protocol: 'TLSv1.3',
      supported: true,
      serverPreference: true,
      suites: [
        {
          name: 'TLS_AES_256_GCM_SHA384',
          code: '0x1302',
          keyExchange: 'any',
          forwardSecrecy: true,
          aead: true,
          bits: 256,
          strength: 'strong',
        },
      ],
    },
  ],
  namedGroups: ['x25519', 'secp256r1'],
  signatureAlgorithms: ['ecdsa_secp256r1_sha256'],
  cipherNotes: [],
  vulnerabilities: [
    {
      id: 'heartbleed',
      name: 'Heartbleed',
      verdict: 'not_vulnerable',
      why: 'the server does not offer the heartbeat extension',
      cve: ['CVE-2014-0160'],
    },
  ],
  timings: {
    totalMs: 420,
    resolveMs: 2,
    handshakeMs: 40,
    probesMs: 45,
    chainMs: 3,
    homePageMs: 60,
    caaMs: 20,
    cipherSuitesMs: 250,
    vulnerabilitiesMs: 90,
    revocationMs: 80,
  },
  fast: false,
  certificateTransparency: { embedded: 2, stapled: 0, tlsExtension: 0 },
  revocation: { status: 'good', responder: 'http://ocsp.sandbox-ca.example' },
};

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

export const screenshot: ScreenshotResponse = {
  filename: SAMPLE_FILES.screenshot.name,
  sizeBytes: String(SAMPLE_FILES.screenshot.bytes.length),
  format: 'png',
  fileExtension: 'png',
  clipped: false,
  durationMs: 0,
  cacheHit: false,
  timings: [{ stage: 'total', durationMs: 0 }],
};

export const urlToPdf: UrlToPdfResponse = {
  filename: SAMPLE_FILES.pdf.name,
  sizeBytes: String(SAMPLE_FILES.pdf.bytes.length),
  durationMs: 0,
  cacheHit: false,
  timings: [{ stage: 'total', durationMs: 0 }],
};

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
const breakdown: StatusBreakdownRow[] = [
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

/** The sample bookmark file as the bookmark service reads it. */
export const parsedBookmarks: ParseBookmarksResponse = {
  fileId: `${SAMPLE_PREFIX}bookmarks`,
  sourceFormat: 'xbel',
  totalBookmarks: 2,
  bookmarks: [
    { title: 'Example', url: URL, folderPath: ['Sandbox sample'], addedAt: undefined },
    { title: 'Docs', url: 'https://example.org/docs', folderPath: ['Sandbox sample'], addedAt: undefined },
  ],
};

const bookmarkCounts = { ok: 1, redirected: 0, broken: 1, warnings: 0, unchecked: 0, duplicates: 0 };

const bookmarkResult: BookmarkCheckResult = {
  scannedAt: SCANNED_AT,
  sourceFormat: 'xbel',
  totalBookmarks: 2,
  checkedBookmarks: 2,
  uniqueUrls: 2,
  truncated: false,
  healthScore: 50,
  grade: 'D',
  // Both bookmarks are in the one folder: its counts are the whole file's.
  summary: { ...bookmarkCounts, byFolder: [{ folderPath: ['Sandbox sample'], total: 2, ...bookmarkCounts }] },
  statusBreakdown: breakdown,
  bookmarks: [
    {
      index: 0,
      title: 'Example',
      url: URL,
      folderPath: ['Sandbox sample'],
      addedAt: undefined,
      statusCode: 200,
      statusText: 'OK',
      severity: 'ok',
      reason: 'The link works.',
      finalUrl: undefined,
      permanentRedirect: false,
      duplicateOf: undefined,
    },
    {
      index: 1,
      title: 'Docs',
      url: 'https://example.org/docs',
      folderPath: ['Sandbox sample'],
      addedAt: undefined,
      statusCode: 404,
      statusText: 'Not Found',
      severity: 'broken',
      reason: 'The page does not exist (404).',
      finalUrl: undefined,
      permanentRedirect: false,
      duplicateOf: undefined,
    },
  ],
};

export const bookmarkCheck: GetBookmarkCheckResponse = {
  jobId: SAMPLE_JOBS.bookmarksCheck,
  status: 'done',
  progress: {
    phase: 'done',
    message: 'Done: 2 bookmarks checked.',
    bookmarksTotal: 2,
    urlsTotal: 2,
    urlsChecked: 2,
  },
  result: bookmarkResult,
  error: undefined,
};

/** A cleaned copy of the sample file is the sample file itself: its edits change nothing. */
export const bookmarkCheckEdits: GetBookmarkCheckEditsResponse = {
  fileId: parsedBookmarks.fileId,
  sourceFormat: 'xbel',
  drop: [],
  rewrites: [],
};

/** A bookmark conversion's reply: the sample file of its output format. */
export const converted = (file: { name: string }, message: string) => ({
  storedName: file.name,
  fileName: file.name,
  message,
});
