/** The meta-scan service's routes: the down-check and the meta-tag audit. */
import { type RouteSpec, route } from '../../route-spec.js';
import { DownCheckInput, DownCheckResult, MetaScanInput, MetaScanResult } from './schemas.js';

export const metaScanRoutes: RouteSpec[] = [
  route({
    method: 'GET',
    path: '/down-check',
    operation: 'down-check',
    summary:
      'Is the site up? One request from our vantage point, following up to 5 redirects: ' +
      'where the time went, the hops, and a verdict with its reason.',
    credits: 1,
    input: DownCheckInput,
    output: DownCheckResult,
    errors: { target_blocked: 400 },
    timeoutMs: 30_000,
    call: (c, input, options) =>
      c.metaScan.downCheck(
        { url: input.url, expectStatus: input.expectStatus, keyword: input.keyword, method: input.method },
        options,
      ),
  }),
  route({
    method: 'GET',
    path: '/meta-scan',
    operation: 'meta-scan',
    summary:
      'Audits a page’s meta tags, robots.txt, sitemap and favicon: 26 checks, a score and a grade; ' +
      'insights on indexability, languages, structured data and share images.',
    credits: 1,
    input: MetaScanInput,
    output: MetaScanResult,
    // The spec: a target that cannot be fetched or parsed is a 500 here (400 on the other routes).
    errors: { target_blocked: 400, target_unreachable: 500, target_http_error: 500, not_html: 500 },
    timeoutMs: 45_000,
    call: (c, input, options) => c.metaScan.metaScan({ url: input.url, userAgent: input.userAgent }, options),
  }),
];
