/** The meta-scan service's probes. */
import { z } from 'zod';
import { count } from './common.js';

export const DownCheckResult = z
  .strictObject({
    url: z.string().meta({ description: 'The normalized URL tested.' }),
    testedFrom: z.string().meta({ example: 'India (Mumbai)' }),
    httpsStatus: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'Any HTTP status counts as reachable; null when the request could not complete.' }),
    responseTimeMs: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'Time to the final response (or the failure); null only when the host never resolved.' }),
    ipAddress: z
      .string()
      .nullable()
      .meta({ description: 'The resolved address (IPv4 preferred); null when DNS failed.' }),
  })
  .meta({ id: 'DownCheckResult' });

const MetaCheck = z
  .strictObject({
    id: z.string().meta({ description: 'Check identifier, e.g. meta_title, og_image, file_robots_txt.' }),
    value: z.string().nullable().meta({ description: 'What the page has; null when the tag or file is missing.' }),
    status: z.enum(['pass', 'warning', 'fail']),
    message: z.string().meta({ description: 'What was found and what to do about it.' }),
  })
  .meta({ id: 'MetaCheck' });

export const MetaScanResult = z
  .strictObject({
    url: z.string().meta({ description: 'The page audited, after redirects.' }),
    finalScore: z.number().int().min(0).max(100),
    grade: z.enum(['A+', 'A', 'B', 'C', 'D', 'F']).meta({ description: 'The link grades’ letters (docs/grading.md).' }),
    categories: z.array(
      z
        .strictObject({ id: z.enum(['basic', 'technical', 'social', 'images']), results: z.array(MetaCheck) })
        .meta({ id: 'MetaCategory' }),
    ),
    summary: z
      .strictObject({
        critical: count.meta({ description: 'Failed checks.' }),
        warnings: count.meta({ description: 'Checks passed with a caveat.' }),
        passed: count.meta({ description: 'Checks passed cleanly.' }),
        total: count,
      })
      .meta({ id: 'MetaSummary' }),
  })
  .meta({ id: 'MetaScanResult' });
