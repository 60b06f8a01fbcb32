/** The meta-scan service's probes. */
import * as metascan from '@webutil/proto/webutil/metascan/v1/metascan.fields';
import { z } from 'zod';
import { count, targetUrl } from '../../rest/common.js';
import { restObject } from '../../rest/from-proto.js';

/** A status code or an inclusive range; the service checks the same (down-check.ts parseExpectStatus). */
const STATUS_RANGE = /^(\d{3})(?:-(\d{3}))?$/;

export const DownCheckInput = z
  .object({
    url: targetUrl,
    expectStatus: z
      .string()
      .trim()
      .refine(
        (value) => {
          const [, min, max = min] = STATUS_RANGE.exec(value) ?? [];
          return min !== undefined && Number(min) >= 100 && Number(max) <= 599 && Number(min) <= Number(max);
        },
        { error: 'expectStatus must be a status code (100-599) or a range of them such as 200-299' },
      )
      .optional()
      .meta({
        description: 'A status code or an inclusive range that counts as up; the answer adds statusMatches.',
        example: '200-299',
      }),
    keyword: z
      .string()
      .min(1, 'keyword must not be empty')
      .max(200, 'keyword must be at most 200 characters')
      .optional()
      .meta({
        description:
          'Text looked for (case-sensitive) in the first 1 MB of the body; the answer adds keywordFound. Needs GET.',
      }),
    method: z
      .enum(['GET', 'HEAD'], { error: 'method must be one of GET, HEAD' })
      .optional()
      .meta({ default: 'GET', description: 'Default GET.' }),
  })
  .refine((input) => input.keyword === undefined || input.method !== 'HEAD', {
    path: ['keyword'],
    error: 'keyword needs method GET: a HEAD answer has no body',
  });

const ms = (description: string) => ({ nullable: true as const, value: count, description });

export const DownCheckResult = restObject(metascan.DownCheckResponse, {
  id: 'DownCheckResult',
  fields: {
    url: { description: 'The normalized URL tested.' },
    testedFrom: { example: 'India (Mumbai)' },
    httpsStatus: {
      nullable: true,
      description: 'Any HTTP status counts as reachable; null when the request could not complete.',
    },
    responseTimeMs: {
      nullable: true,
      description: 'Time to the final response (or the failure); null only when the host never resolved.',
    },
    ipAddress: { nullable: true, description: 'The resolved address (IPv4 preferred); null when DNS failed.' },
    timings: {
      value: restObject(metascan.DownCheckTimings, {
        id: 'DownCheckTimings',
        description: 'Where the time went, in milliseconds, on a connection opened for this check.',
        fields: {
          dnsMs: ms('Name lookup; null for an IP literal or when it failed.'),
          connectMs: ms('TCP connect; null when it did not complete.'),
          tlsMs: ms('TLS handshake; null for http or when it did not complete.'),
          firstByteMs: ms('To the final response’s headers, redirects included; null when none came.'),
          totalMs: { value: count, description: 'To the end of the check (body read as far as needed, or failure).' },
        },
      }),
    },
    redirects: {
      value: restObject(metascan.DownCheckRedirect, {
        id: 'DownCheckRedirect',
        fields: {
          url: { description: 'The URL that answered with a redirect.' },
          status: { value: z.number().int().min(300).max(399) },
        },
      }),
      description: 'The redirects followed, in order (at most 5).',
    },
    statusMatches: {
      nullable: true,
      description: 'Whether httpsStatus is within expectStatus; null when none was asked for or no answer came.',
    },
    keywordFound: {
      nullable: true,
      description: 'Whether the keyword is in the first 1 MB of the body; null when none was asked for or unread.',
    },
    verdict: { value: z.enum(['up', 'down', 'degraded']) },
    reason: {
      description: 'Why, in a few words.',
      example: 'connection refused',
    },
  },
});

const MetaCheck = restObject(metascan.MetaCheck, {
  id: 'MetaCheck',
  fields: {
    id: { description: 'Check identifier, e.g. meta_title, og_image, file_robots_txt.' },
    value: { nullable: true, description: 'What the page has; null when the tag or file is missing.' },
    status: { value: z.enum(['pass', 'warning', 'fail']) },
    message: { description: 'What was found and what to do about it.' },
  },
});

/** The crawlers a meta scan may fetch the page as; the service maps each to its User-Agent. */
export const META_SCAN_USER_AGENTS = [
  'facebookexternalhit',
  'Twitterbot',
  'LinkedInBot',
  'Slackbot',
  'Googlebot',
] as const;

export const MetaScanInput = z.object({
  url: targetUrl,
  userAgent: z
    .enum(META_SCAN_USER_AGENTS, { error: `userAgent must be one of ${META_SCAN_USER_AGENTS.join(', ')}` })
    .optional()
    .meta({ description: 'Fetch the page as this crawler (sites serve bots different tags); default: our own.' }),
});

const summaryOf = (id: string, description: string) =>
  restObject(metascan.MetaSummary, {
    id,
    description,
    fields: {
      critical: { value: count, description: 'Failed checks.' },
      warnings: { value: count, description: 'Checks passed with a caveat.' },
      passed: { value: count, description: 'Checks passed cleanly.' },
      total: { value: count },
    },
  });

export const MetaScanResult = restObject(metascan.MetaScanResponse, {
  id: 'MetaScanResult',
  fields: {
    url: { description: 'The page audited, after redirects.' },
    finalScore: { value: z.number().int().min(0).max(100) },
    grade: {
      value: z.enum(['A+', 'A', 'B', 'C', 'D', 'F']),
      description: 'The link grades’ letters (docs/grading.md).',
    },
    categories: {
      value: restObject(metascan.MetaCategory, {
        id: 'MetaCategory',
        fields: {
          id: { value: z.enum(['basic', 'technical', 'social', 'images']) },
          results: { value: MetaCheck },
        },
      }),
    },
    summary: { value: summaryOf('MetaSummary', 'The categories’ checks counted by status.') },
    insights: {
      value: restObject(metascan.MetaCategory, {
        id: 'MetaInsightGroup',
        fields: {
          id: { value: z.enum(['indexability', 'international', 'structured-data', 'social-image']) },
          results: { value: MetaCheck },
        },
      }),
      description: 'What the page tells crawlers and platforms beyond its tags; not part of finalScore.',
    },
    insightsSummary: { value: summaryOf('MetaInsightsSummary', 'The insights counted by status.') },
  },
});
