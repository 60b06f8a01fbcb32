/**
 * Every public route, in one place: method, path, operation, credits, input schema, the one RPC
 * it calls, how the reply is presented, and the per-route reason -> HTTP status exceptions.
 * Each route is served under both /v1 and /api/v1.
 */
import type { BrokenLinkCrawlResult, ExtractedLink, ExtractResult, JobError, LinkRecord } from '@webutil/proto/webutil/crawl/v1/crawl';
import { z } from 'zod';
import { NO_STORE, presentChallenge, presentKey, presentQuota, presentSession } from './billing-presenters.js';
import { CLEARANCE_COOKIE, cookie, SESSION_COOKIE } from './caller.js';
import { refusal } from './credits.js';
import { dataEnvelope } from './envelope.js';
import { route, type RouteSpec } from './pipeline.js';

/** A required string parameter with the spec's wording for a missing one. */
const required = (name: string) =>
  z
    .string({ error: (issue) => (issue.input === undefined ? `${name} is required` : `${name} must be a string`) })
    .trim()
    .min(1, `${name} is required`)
    .max(4096, `${name} is too long`);

const urlInput = z.object({ url: required('url') });
const jobInput = z.object({ job_id: required('job_id') });

const noInput = z.object({});
/** Passwords are taken as typed: no trimming. */
const password = z.string({ error: (issue) => (issue.input === undefined ? 'password is required' : 'password must be a string') }).min(1, 'password is required');
const credentialsInput = z.object({ email: required('email'), password });
const solutionInput = z
  .object({ payload: z.string().max(8192).optional(), turnstileToken: z.string().max(4096).optional() })
  .refine((v) => v.payload || v.turnstileToken, 'payload (the solved ALTCHA challenge) or turnstileToken is required');
/** Billing's own calls are quick. */
const BILLING_TIMEOUT_MS = 10_000;

export const routes: RouteSpec[] = [
  route({
    method: 'GET',
    path: '/down-check',
    operation: 'down-check',
    credits: 1,
    input: urlInput,
    timeoutMs: 30_000,
    call: (c, input, options) => c.metaScan.downCheck({ url: input.url }, options),
    present: (r) =>
      ({
        body: dataEnvelope({
          url: r.url,
          testedFrom: r.testedFrom,
          httpsStatus: r.httpsStatus ?? null,
          responseTimeMs: r.responseTimeMs ?? null,
          ipAddress: r.ipAddress ?? null,
        }),
      }),
  }),
  route({
    method: 'GET',
    path: '/link-extract',
    operation: 'link-extract',
    credits: 1,
    input: urlInput,
    timeoutMs: 45_000,
    call: (c, input, options) => c.crawl.extractLinks({ url: input.url }, options),
    present: (r) => ({ body: dataEnvelope(presentExtractResult(r.result, false)) }),
  }),

  // Link checking and site crawls: a crawl start answers 202 with the job id at once; polls are
  // free and read the job store. A job that ended in failure is a 200 with status `failed`.
  route({
    method: 'POST',
    path: '/broken-links',
    operation: 'broken-links',
    credits: 2,
    input: urlInput,
    timeoutMs: 90_000,
    call: (c, input, options) => c.crawl.checkLinks({ url: input.url }, options),
    present: (r) =>
      ({
        body: dataEnvelope({
          url: r.url,
          scannedAt: r.scannedAt,
          totalLinks: r.totalLinks,
          checkedLinks: r.checkedLinks,
          truncated: r.truncated,
          healthScore: r.healthScore,
          grade: r.grade,
          summary: r.summary,
          statusBreakdown: r.statusBreakdown,
          links: r.links.map((link) => presentLinkRecord(link, false)),
        }),
      }),
  }),
  route({
    method: 'POST',
    path: '/broken-links/crawl',
    operation: 'broken-links-crawl',
    credits: 2,
    input: urlInput,
    timeoutMs: 15_000,
    call: (c, input, options) => c.crawl.startBrokenLinkCrawl({ url: input.url }, options),
    present: (r) => ({ status: 202, body: dataEnvelope({ jobId: r.jobId }) }),
  }),
  route({
    method: 'GET',
    path: '/broken-links/crawl/:job_id',
    operation: 'broken-links-crawl-status',
    credits: 0,
    input: jobInput,
    timeoutMs: 15_000,
    call: (c, input, options) => c.crawl.getBrokenLinkCrawl({ jobId: input.job_id }, options),
    present: (r) => ({ body: dataEnvelope(presentJob(r, r.result && presentBrokenLinkCrawl(r.result))), headers: NO_STORE }),
  }),
  route({
    method: 'POST',
    path: '/link-extract/crawl',
    operation: 'link-extract-crawl',
    credits: 1,
    input: urlInput,
    timeoutMs: 15_000,
    call: (c, input, options) => c.crawl.startLinkExtractCrawl({ url: input.url }, options),
    present: (r) => ({ status: 202, body: dataEnvelope({ jobId: r.jobId }) }),
  }),
  route({
    method: 'GET',
    path: '/link-extract/crawl/:job_id',
    operation: 'link-extract-crawl-status',
    credits: 0,
    input: jobInput,
    timeoutMs: 15_000,
    call: (c, input, options) => c.crawl.getLinkExtractCrawl({ jobId: input.job_id }, options),
    present: (r) => ({ body: dataEnvelope(presentJob(r, r.result && presentExtractResult(r.result, true))), headers: NO_STORE }),
  }),

  // Quota, the bot challenge, sessions and API keys: free, rate-limited like every route.
  route({
    method: 'GET',
    path: '/quota',
    operation: 'quota',
    credits: 0,
    input: noInput,
    timeoutMs: BILLING_TIMEOUT_MS,
    // Billing's Authorize already read the quota, after counting this request.
    call: async (_c, _input, _options, caller) => caller.quota,
    present: (quota) => ({ body: dataEnvelope(presentQuota(quota)), headers: NO_STORE }),
  }),
  route({
    method: 'GET',
    path: '/challenge',
    operation: 'challenge',
    credits: 0,
    callers: 'ip',
    input: noInput,
    timeoutMs: BILLING_TIMEOUT_MS,
    call: (c, _input, options, caller) => c.billing.createChallenge({ clientIp: caller.credential.clientIp }, options),
    present: (r) => ({ body: dataEnvelope(presentChallenge(r)), headers: NO_STORE }),
  }),
  route({
    method: 'POST',
    path: '/challenge',
    operation: 'challenge-solve',
    credits: 0,
    callers: 'ip',
    input: solutionInput,
    timeoutMs: BILLING_TIMEOUT_MS,
    call: (c, input, options, caller) =>
      c.billing.solveChallenge(
        {
          clientIp: caller.credential.clientIp,
          solution: input.payload ? { $case: 'altchaPayload', altchaPayload: input.payload } : { $case: 'turnstileToken', turnstileToken: input.turnstileToken ?? '' },
        },
        options,
      ),
    present: (r, ctx) => ({
      body: dataEnvelope({ maxAgeSeconds: r.maxAgeSeconds }),
      headers: { ...NO_STORE, 'Set-Cookie': cookie(ctx, CLEARANCE_COOKIE, r.clearance, r.maxAgeSeconds) },
    }),
  }),
  route({
    method: 'POST',
    path: '/auth/sign-up',
    operation: 'sign-up',
    credits: 0,
    callers: 'ip',
    challenge: true,
    input: credentialsInput,
    timeoutMs: BILLING_TIMEOUT_MS,
    call: (c, input, options) => c.billing.signUp(input, options),
    present: (r, ctx) => presentSession(r.session, ctx, 201),
  }),
  route({
    method: 'POST',
    path: '/auth/sign-in',
    operation: 'sign-in',
    credits: 0,
    callers: 'ip',
    input: credentialsInput,
    timeoutMs: BILLING_TIMEOUT_MS,
    call: (c, input, options, caller) => c.billing.signIn({ ...input, clientIp: caller.credential.clientIp }, options),
    present: (r, ctx) => {
      if (r.outcome?.$case !== 'session') throw refusal(ctx, r.outcome?.denial, 0);
      return presentSession(r.outcome.session, ctx, 200);
    },
  }),
  route({
    method: 'POST',
    path: '/auth/sign-out',
    operation: 'sign-out',
    credits: 0,
    callers: 'session',
    input: noInput,
    timeoutMs: BILLING_TIMEOUT_MS,
    call: (c, _input, options, caller) => c.billing.signOut({ credential: caller.credential }, options),
    present: (_r, ctx) => ({ body: dataEnvelope({ signedOut: true }), headers: { 'Set-Cookie': cookie(ctx, SESSION_COOKIE, '', 0) } }),
  }),
  route({
    method: 'GET',
    path: '/auth/me',
    operation: 'account',
    credits: 0,
    callers: 'session',
    input: noInput,
    timeoutMs: BILLING_TIMEOUT_MS,
    call: (c, _input, options, caller) => c.billing.getAccount({ credential: caller.credential }, options),
    present: (r) => ({ body: dataEnvelope({ account: r.account, csrfToken: r.csrfToken }), headers: NO_STORE }),
  }),
  route({
    method: 'GET',
    path: '/keys',
    operation: 'list-keys',
    credits: 0,
    callers: 'session',
    input: noInput,
    timeoutMs: BILLING_TIMEOUT_MS,
    call: (c, _input, options, caller) => c.billing.listApiKeys({ credential: caller.credential }, options),
    present: (r) => ({ body: dataEnvelope({ keys: r.keys.map(presentKey) }), headers: NO_STORE }),
  }),
  route({
    method: 'POST',
    path: '/keys',
    operation: 'create-key',
    credits: 0,
    callers: 'session',
    input: z.object({ name: required('name') }),
    timeoutMs: BILLING_TIMEOUT_MS,
    call: (c, input, options, caller) => c.billing.createApiKey({ credential: caller.credential, name: input.name }, options),
    // The only time the full key is shown.
    present: (r) => ({ status: 201, body: dataEnvelope({ ...presentKey(r.key), key: r.secret }), headers: NO_STORE }),
  }),
  route({
    method: 'DELETE',
    path: '/keys/:key_id',
    operation: 'revoke-key',
    credits: 0,
    callers: 'session',
    input: z.object({ key_id: required('key_id') }),
    timeoutMs: BILLING_TIMEOUT_MS,
    call: (c, input, options, caller) => c.billing.revokeApiKey({ credential: caller.credential, keyId: input.key_id }, options),
    present: (r) => ({ body: dataEnvelope(presentKey(r.key)) }),
  }),
];

function presentExtractResult(result: ExtractResult | undefined, crawl: boolean) {
  if (!result) throw new Error('service returned no result');
  return {
    url: result.url,
    scannedAt: result.scannedAt,
    totalLinks: result.totalLinks,
    truncated: result.truncated,
    counts: result.counts,
    links: result.links.map((link) => presentExtractedLink(link, crawl)),
  };
}

function presentExtractedLink(link: ExtractedLink, crawl: boolean) {
  const item = { url: link.url, originalHref: link.originalHref, text: link.text, rel: link.rel ?? null, type: link.type, scheme: link.scheme };
  return crawl ? { ...item, sources: link.sources, sourceCount: link.sourceCount ?? link.sources.length } : item;
}

/** The crawl job envelope: `result` once done, `error` once failed, neither while crawling. */
function presentJob(job: { jobId: string; status: string; progress?: object; error?: JobError }, result: object | undefined) {
  return {
    jobId: job.jobId,
    status: job.status,
    progress: job.progress ?? {},
    ...(job.status === 'done' && result ? { result } : {}),
    ...(job.status === 'failed' && job.error ? { error: { code: job.error.code, message: job.error.message } } : {}),
  };
}

function presentBrokenLinkCrawl(result: BrokenLinkCrawlResult) {
  return {
    url: result.url,
    scannedAt: result.scannedAt,
    healthScore: result.healthScore,
    grade: result.grade,
    summary: result.summary,
    statusBreakdown: result.statusBreakdown,
    pagesCrawled: result.pagesCrawled,
    pagesDiscovered: result.pagesDiscovered,
    totalUniqueLinks: result.totalUniqueLinks,
    truncatedPages: result.truncatedPages,
    truncatedLinks: result.truncatedLinks,
    links: result.links.map((link) => presentLinkRecord(link, true)),
    pages: result.pages.map((page) => ({ ...page, statusCode: page.statusCode ?? null })),
  };
}

/** A link record: statusCode and rel are null when absent; finalUrl, responseTimeMs and errorCode are omitted. */
function presentLinkRecord(link: LinkRecord, crawl: boolean) {
  return {
    url: link.url,
    originalHref: link.originalHref,
    text: link.text,
    type: link.type,
    rel: link.rel ?? null,
    statusCode: link.statusCode ?? null,
    statusText: link.statusText,
    severity: link.severity,
    reason: link.reason,
    category: link.category,
    redirected: link.redirected,
    ...(link.redirected && link.finalUrl !== undefined ? { finalUrl: link.finalUrl } : {}),
    ...(link.responseTimeMs !== undefined ? { responseTimeMs: link.responseTimeMs } : {}),
    ...(link.errorCode !== undefined ? { errorCode: link.errorCode } : {}),
    ...(crawl ? { sources: link.sources, sourceCount: link.sourceCount ?? link.sources.length } : {}),
  };
}
