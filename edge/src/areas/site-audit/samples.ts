/**
 * The sandbox's fixed replies for a site audit, typed as the service's ts-proto replies (docs/
 * decisions/0207-sandbox-keys.md); the sandbox's clients (edge/src/sandbox/clients.ts) serve them.
 */
import type {
  AuditIssue,
  GetSiteAuditIssueResponse,
  GetSiteAuditResponse,
} from '@webutil/proto/webutil/crawl/v1/site_audit';
import { SAMPLE_JOBS, SAMPLE_SCANNED_AT as SCANNED_AT, SAMPLE_URL as URL } from '../../sandbox/files.js';

const missingDescription: AuditIssue = {
  id: 'description_missing',
  category: 'content',
  priority: 'warning',
  title: 'Missing meta description',
  fix: 'Add a <meta name="description"> summarising the page.',
  pagesAffected: 1,
  affectedTotal: 1,
  affected: [{ url: `${URL}about`, detail: 'no meta description', sources: [] }],
};

const brokenLink: AuditIssue = {
  id: 'broken_link_internal',
  category: 'links',
  priority: 'error',
  title: 'Broken internal link',
  fix: 'Fix or remove links to pages of the site that are broken.',
  pagesAffected: 1,
  affectedTotal: 1,
  affected: [{ url: `${URL}old-page`, detail: 'answered 404', sources: [URL] }],
};

const categories = ['indexability', 'content', 'links', 'performance', 'international', 'structured_data', 'images']
  .concat(['security', 'sitemap'])
  .map((id) => ({
    id,
    score: id === 'content' ? 50 : id === 'links' ? 50 : 100,
    errors: id === 'links' ? 1 : 0,
    warnings: id === 'content' ? 1 : 0,
    notices: 0,
  }));

export const siteAudit: GetSiteAuditResponse = {
  jobId: SAMPLE_JOBS.siteAudit,
  status: 'done',
  progress: {
    phase: 'done',
    message: 'Done: audited 2 pages',
    sitemapFound: false,
    sitemapUrlCount: 0,
    pagesAudited: 2,
    pagesDiscovered: 3,
    pagesCap: 100,
    linksFound: 3,
    linksChecked: 3,
  },
  result: {
    url: URL,
    scannedAt: SCANNED_AT,
    pagesAudited: 2,
    pagesDiscovered: 3,
    pagesCap: 100,
    truncatedPages: false,
    healthScore: 50,
    categories,
    issues: [brokenLink, missingDescription],
    statusCodes: [{ key: '200', pages: 2 }],
    depths: [
      { key: '0', pages: 1 },
      { key: '1', pages: 1 },
    ],
    totalUniqueLinks: 3,
    brokenLinks: 1,
    cutBy: [],
    sitemapFound: false,
    sitemapUrlCount: 0,
    comparison: undefined,
    site: {
      tls: {
        available: true,
        grade: 'A',
        daysUntilExpiry: 74,
        valid: true,
        problems: [],
        protocol: 'TLSv1.3',
      },
      downCheck: {
        available: true,
        up: true,
        verdict: 'up',
        status: 200,
        responseTimeMs: 142,
        reason: 'HTTP 200',
        checkedAt: SCANNED_AT,
      },
      screenshots: {
        desktop: { available: false, unavailableReason: 'the sandbox renders nothing' },
        mobile: { available: false, unavailableReason: 'the sandbox renders nothing' },
      },
    },
  },
  error: undefined,
};

export const siteAuditIssue: GetSiteAuditIssueResponse = {
  jobId: SAMPLE_JOBS.siteAudit,
  issue: brokenLink,
  offset: 0,
};
