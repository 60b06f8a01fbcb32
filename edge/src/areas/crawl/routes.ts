/**
 * The crawl service's link routes: one page's links extracted or checked, and site crawls, whose
 * start answers 202 with the job id at once; polls are free and read the job store. A job that
 * ended in failure is a 200 with status `failed`.
 */
import type { Clients } from '../../clients.js';
import { noStore } from '../../envelope.js';
import { NEVER_CANCELLED } from '../../grpc-clients.js';
import { jobInput } from '../../rest/common.js';
import { type Caller, type RouteSpec, route } from '../../route-spec.js';
import { withWebhook } from '../webhooks/start.js';
import { brokenLinksExport, crawlExport, presentExtract } from './presenters.js';
import {
  BrokenLinkCrawlJob,
  BrokenLinksCrawlInput,
  BrokenLinksInput,
  BrokenLinksResult,
  ExtractResult,
  JobStarted,
  LinkExtractCrawlInput,
  LinkExtractCrawlJob,
  LinkExtractInput,
  linkOptions,
} from './schemas.js';

/** Failures of a service that fetches the caller's page. */
const FETCH_ERRORS = { target_blocked: 400, target_unreachable: 400, target_http_error: 400, not_html: 400 };
/** A crawl start whose client left: the crawl service drops the job if it is not queued yet. */
export const withdrawCrawlStart = (c: Clients, requestId: string) =>
  c.crawl.withdrawStart({ requestId }, { requestId, timeoutMs: 5_000, signal: NEVER_CANCELLED });
/** Who starts a crawl: the crawl service bounds each caller's crawls queued or running, by plan. */
export const crawlCaller = (caller: Caller) => ({ key: caller.subject, plan: caller.quota.plan });
/**
 * A crawl start resolves the entry host at once; a caller with its plan's bound of crawls queued
 * or running is refused (429, with Retry-After).
 */
export const CRAWL_START_ERRORS = {
  target_blocked: 400,
  target_unreachable: 400,
  too_many_crawls: 429,
  queue_unavailable: 503,
  // An option the crawl service refuses (a glob that does not compile, a refused header).
  invalid_option: 400,
};
export const JOB_ERRORS = { job_not_found: 404 };

/** One page's links, listed with the other one-page scans (the OpenAPI document's order). */
export const linkExtractRoutes: RouteSpec[] = [
  route({
    method: 'GET',
    path: '/link-extract',
    operation: 'link-extract',
    summary: 'The links of one page, typed and counted (with includeResources, its resources too); none is checked.',
    credits: 1,
    input: LinkExtractInput,
    output: ExtractResult,
    errors: FETCH_ERRORS,
    timeoutMs: 45_000,
    call: (c, input, options) =>
      c.crawl.extractLinks({ url: input.url, includeResources: input.includeResources === 'true' }, options),
    present: presentExtract,
  }),
];

export const crawlRoutes: RouteSpec[] = [
  route({
    method: 'POST',
    path: '/broken-links',
    operation: 'broken-links',
    summary:
      'Checks the links and resources (images, scripts, stylesheets, frames…) of one page (the first 500) and ' +
      'grades them; with `format`, as a CSV, Markdown, JUnit XML or SARIF file.',
    credits: 2,
    input: BrokenLinksInput,
    output: BrokenLinksResult,
    errors: { ...FETCH_ERRORS, invalid_option: 400 },
    timeoutMs: 90_000,
    call: (c, input, options) =>
      c.crawl.checkLinks(
        { url: input.url, checkFragments: input.checkFragments ?? false, options: linkOptions(input) },
        options,
      ),
    exports: brokenLinksExport,
  }),
  withWebhook(
    route({
      method: 'POST',
      path: '/broken-links/crawl',
      operation: 'broken-links-crawl',
      summary: 'Starts a site-wide broken-link crawl; poll its job.',
      credits: 2,
      input: BrokenLinksCrawlInput,
      output: JobStarted,
      status: 202,
      errors: CRAWL_START_ERRORS,
      timeoutMs: 15_000,
      call: (c, input, options, caller) =>
        c.crawl.startBrokenLinkCrawl(
          {
            url: input.url,
            checkFragments: input.checkFragments ?? false,
            caller: crawlCaller(caller),
            options: linkOptions(input),
          },
          options,
        ),
      withdraw: withdrawCrawlStart,
    }),
    'broken-links-crawl-status',
  ),
  route({
    method: 'GET',
    path: '/broken-links/crawl/:job_id',
    operation: 'broken-links-crawl-status',
    freeRead: 'job-poll',
    summary:
      'A broken-link crawl’s progress, and its result once done; with `format`, the result as a CSV, ' +
      'Markdown, JUnit XML or SARIF file.',
    credits: 0,
    input: jobInput,
    output: BrokenLinkCrawlJob,
    errors: JOB_ERRORS,
    timeoutMs: 15_000,
    call: (c, input, options) => c.crawl.getBrokenLinkCrawl({ jobId: input.job_id }, options),
    headers: noStore,
    exports: crawlExport,
  }),
  withWebhook(
    route({
      method: 'POST',
      path: '/link-extract/crawl',
      operation: 'link-extract-crawl',
      summary: 'Starts a site-wide link extraction; poll its job.',
      credits: 1,
      input: LinkExtractCrawlInput,
      output: JobStarted,
      status: 202,
      errors: CRAWL_START_ERRORS,
      timeoutMs: 15_000,
      call: (c, input, options, caller) =>
        c.crawl.startLinkExtractCrawl(
          { url: input.url, caller: crawlCaller(caller), options: linkOptions(input) },
          options,
        ),
      withdraw: withdrawCrawlStart,
    }),
    'link-extract-crawl-status',
  ),
  route({
    method: 'GET',
    path: '/link-extract/crawl/:job_id',
    operation: 'link-extract-crawl-status',
    freeRead: 'job-poll',
    summary: 'A link-extract crawl’s progress, and its result once done.',
    credits: 0,
    input: jobInput,
    output: LinkExtractCrawlJob,
    errors: JOB_ERRORS,
    timeoutMs: 15_000,
    call: (c, input, options) => c.crawl.getLinkExtractCrawl({ jobId: input.job_id }, options),
    headers: noStore,
  }),
];
