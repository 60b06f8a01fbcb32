/** Site audits: every page of a site checked for technical and SEO issues (decisions 0441-0443). */
import * as crawl from '@webutil/proto/webutil/crawl/v1/crawl.fields';
import * as audit from '@webutil/proto/webutil/crawl/v1/site_audit.fields';
import { z } from 'zod';
import { count, required, timestamp } from '../../rest/common.js';
import { type FieldEdit, restEnum, restObject } from '../../rest/from-proto.js';
import { checkFields, maxDepth } from '../crawl/schemas.js';

/** Pages an audit may fetch at most, by plan (an anonymous caller's is the Free plan's). */
export const AUDIT_PAGE_CAPS: Readonly<Record<string, number>> = {
  FREE: 100,
  STARTER: 1_000,
  GROWTH: 5_000,
  SCALE: 20_000,
  ENTERPRISE: 100_000,
};

const PAGES = audit.StartSiteAuditRequest.fields.maxPages.bounds;
const pagesRule = `maxPages must be an integer from ${PAGES.min} to ${PAGES.max}`;

export const SiteAuditInput = z.object({
  ...checkFields,
  maxPages: z
    .number({ error: pagesRule })
    .int(pagesRule)
    .min(PAGES.min, pagesRule)
    .max(PAGES.max, pagesRule)
    .optional()
    .meta({
      description:
        'Pages audited at most, up to the plan’s cap (Free and anonymous 100, Starter 1,000, Growth 5,000, Scale ' +
        '20,000, Enterprise 100,000); default the cap. The audit is priced by this figure.',
    }),
  maxDepth,
});

const counted: FieldEdit = { value: count };
const score: FieldEdit = { value: z.number().int().min(0).max(100) };
const priority: FieldEdit = { value: restEnum(audit.AuditPriority) };

const AuditAffected = restObject(audit.AuditAffected, {
  id: 'AuditAffected',
  fields: {
    url: { description: 'The page (or, for a broken link or resource, the link) the issue is on.' },
    detail: { description: 'What the issue is on this URL.' },
    sources: { description: 'For a broken link or resource: the pages it is on (at most 25).' },
  },
});

export const AuditIssue = restObject(audit.AuditIssue, {
  id: 'AuditIssue',
  fields: {
    id: { description: 'A stable issue id, e.g. `title_missing` (docs/api.md lists them all).' },
    category: { value: z.string() },
    priority,
    fix: { description: 'What to do, in one line.' },
    pagesAffected: { value: count, description: 'Audited pages the issue is on (for a broken link: pages with one).' },
    affectedTotal: { value: count, description: 'Affected URLs in all; `affected` lists a page of them.' },
    affected: { value: AuditAffected },
  },
});

const finding = restObject(audit.AuditFinding, { id: 'AuditFinding' });

const countRow = (id: string) => restObject(audit.AuditCount, { id, fields: { pages: counted } });

const unavailable: FieldEdit = { description: 'Why the check is not available (absent when it is).' };

const SiteScreenshot = restObject(audit.SiteScreenshot, {
  id: 'SiteAuditScreenshot',
  fields: {
    available: { description: 'false: the render failed or is not configured (`unavailableReason`).' },
    unavailableReason: unavailable,
    imageUrl: {
      description:
        'The image, under the API’s base URL (`/v1/site-audit-images/{name}`), no credential needed; kept as ' +
        'long as the audit’s job.',
    },
    sizeBytes: counted,
  },
});

const SiteLevelChecks = restObject(audit.SiteLevelChecks, {
  id: 'SiteAuditSiteChecks',
  fields: {
    tls: {
      value: restObject(audit.SiteTls, {
        id: 'SiteAuditTls',
        fields: {
          available: { description: 'false: an http site, or the scan failed (`unavailableReason`).' },
          unavailableReason: unavailable,
          grade: { description: 'The ssl-scan route’s grade (fast scan), A+ to F.' },
          daysUntilExpiry: { description: 'Days until the certificate expires; negative once expired.' },
          problems: { description: 'What is wrong: expired, not trusted, name mismatch, expiring, old protocols.' },
        },
      }),
    },
    downCheck: {
      value: restObject(audit.SiteDownCheck, {
        id: 'SiteAuditDownCheck',
        fields: {
          available: { description: 'false: the down-check failed to run (`unavailableReason`).' },
          unavailableReason: unavailable,
          verdict: { value: z.enum(['up', 'down', 'degraded']) },
          status: { description: 'The start URL’s final HTTP status.' },
          responseTimeMs: { value: count },
          checkedAt: { value: timestamp },
        },
      }),
    },
    screenshots: {
      value: restObject(audit.SiteScreenshots, {
        id: 'SiteAuditScreenshots',
        fields: { desktop: { value: SiteScreenshot }, mobile: { value: SiteScreenshot } },
      }),
    },
  },
});

const SiteAuditResult = restObject(audit.SiteAuditResult, {
  id: 'SiteAuditResult',
  fields: {
    scannedAt: { value: timestamp },
    pagesAudited: { value: count, description: 'Pages fetched (or refused by robots.txt) and audited.' },
    pagesDiscovered: counted,
    pagesCap: counted,
    truncatedPages: { description: 'Pages were left unaudited: the page cap or the time budget was reached.' },
    healthScore: { ...score, description: 'Share of audited pages with no error-priority issue, 0-100.' },
    categories: {
      value: restObject(audit.AuditCategory, {
        id: 'AuditCategory',
        fields: {
          score: { ...score, description: 'Share of audited pages with no error or warning of the category.' },
          errors: { value: count, description: 'Issue types of error priority found in the category.' },
          warnings: counted,
          notices: counted,
        },
      }),
    },
    issues: { value: AuditIssue, description: 'Errors first, then by pages affected; each with its first 20 URLs.' },
    statusCodes: { value: countRow('AuditStatusCount'), description: 'Pages by final status (`error`, `robots`).' },
    depths: { value: countRow('AuditDepthCount'), description: 'Pages by clicks from the start page (`unlinked`).' },
    totalUniqueLinks: counted,
    brokenLinks: counted,
    cutBy: {
      value: z.enum(['check_cap', 'anchor_cap', 'memory', 'url_length', 'time_budget']),
      description: 'Caps other than the page cap that left links unchecked; empty when none did.',
    },
    sitemapUrlCount: counted,
    comparison: {
      value: restObject(audit.AuditComparison, {
        id: 'AuditComparison',
        fields: {
          previousScannedAt: { value: timestamp },
          newIssues: { description: 'Issue types found now and not by the previous audit.' },
          fixedIssues: { description: 'Issue types the previous audit found and this one did not.' },
          newFindings: { value: finding, description: 'Issue types on URLs new since then (the first 1,000).' },
          fixedFindings: { value: finding, description: 'Issue types on URLs gone since then (the first 1,000).' },
          newFindingsTotal: counted,
          fixedFindingsTotal: counted,
        },
      }),
      description:
        'The previous audit of the same start URL by the same account, and what changed ' +
        'since: new and fixed issues by issue type and URL. Absent for the first audit and anonymous callers.',
    },
    site: {
      value: SiteLevelChecks,
      description:
        'Checked once per audit by the other services: the TLS scan of the host (https), a down-check of the ' +
        'start URL, and screenshots of the start page (desktop, mobile). A check that could not run is ' +
        '`available: false` with why; it never fails the audit.',
    },
  },
});

export const SiteAuditJob = restObject(audit.GetSiteAuditResponse, {
  id: 'SiteAuditJob',
  fields: {
    status: { value: restEnum(crawl.JobStatus) },
    error: { value: restObject(crawl.JobError, { id: 'SiteAuditError' }) },
    progress: {
      value: restObject(audit.SiteAuditProgress, {
        id: 'SiteAuditProgress',
        fields: {
          phase: { value: restEnum(crawl.CrawlPhase) },
          sitemapUrlCount: counted,
          pagesAudited: counted,
          pagesDiscovered: counted,
          pagesCap: counted,
          linksFound: counted,
          linksChecked: counted,
        },
      }),
    },
    result: { value: SiteAuditResult },
  },
});

export const issueInput = z.object({
  job_id: required('job_id').meta({ description: 'The jobId of the audit.' }),
  issue_id: required('issue_id').meta({ description: 'The issue’s id, as the audit lists it.' }),
  offset: z.coerce
    .number({ error: 'offset must be an integer of 0 or more' })
    .int('offset must be an integer of 0 or more')
    .min(0, 'offset must be an integer of 0 or more')
    .max(10_000_000, 'offset is too large')
    .optional()
    .meta({ description: 'The first affected URL to list, 0-based. Default 0.' }),
  limit: z.coerce
    .number({ error: 'limit must be an integer from 1 to 1000' })
    .int('limit must be an integer from 1 to 1000')
    .min(1, 'limit must be an integer from 1 to 1000')
    .max(1000, 'limit must be an integer from 1 to 1000')
    .optional()
    .meta({ description: 'Affected URLs listed, 1-1000. Default 100.' }),
});

export const SiteAuditIssuePage = restObject(audit.GetSiteAuditIssueResponse, {
  id: 'SiteAuditIssuePage',
  fields: { issue: { value: AuditIssue }, offset: counted },
});
