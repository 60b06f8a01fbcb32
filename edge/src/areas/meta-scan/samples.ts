/**
 * The sandbox's fixed replies for the down-check and the meta scan, typed as the service's ts-proto
 * replies: the compiler checks them against the protos, and the area's presenters turn them into
 * the answers (docs/decisions/0207-sandbox-keys.md). The sandbox's clients
 * (edge/src/sandbox/clients.ts) serve them.
 */
import type { DownCheckResponse, MetaScanResponse } from '@webutil/proto/webutil/metascan/v1/metascan';
import { SAMPLE_URL as URL } from '../../sandbox/files.js';

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
