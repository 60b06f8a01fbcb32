/** The meta-scan service's probes. */
import * as metascan from '@webutil/proto/webutil/metascan/v1/metascan.fields';
import { z } from 'zod';
import { count } from './common.js';
import { restObject } from './from-proto.js';

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
    summary: {
      value: restObject(metascan.MetaSummary, {
        id: 'MetaSummary',
        fields: {
          critical: { value: count, description: 'Failed checks.' },
          warnings: { value: count, description: 'Checks passed with a caveat.' },
          passed: { value: count, description: 'Checks passed cleanly.' },
          total: { value: count },
        },
      }),
    },
  },
});
