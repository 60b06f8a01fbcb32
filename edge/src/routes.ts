/**
 * Every public route, in one place: method, path, operation, credits, request and response
 * schemas, the one RPC it calls, and the failures it answers. Each route is served under both /v1
 * and /api/v1; the OpenAPI document (openapi.ts) is generated from this table. docs/architecture.md
 * says how to add a row.
 */
import { DownloadKind } from '@webutil/proto/webutil/bookmark/v1/bookmark';
import { z } from 'zod';
import { BILLING_TIMEOUT_MS } from './billing-client.js';
import { challengeSolution, renderCaller } from './caller.js';
import type { Clients } from './clients.js';
import { type CallOptions, NEVER_CANCELLED } from './grpc-clients.js';
import {
  clearanceHeaders,
  noStore,
  presentChallenge,
  presentNewKey,
  presentRevokedKey,
  presentSignedOut,
  presentUsage,
  signedIn,
  signedInHeaders,
  signedOutHeaders,
} from './presenters/billing.js';
import { brokenLinksExport, crawlExport, presentExtract } from './presenters/crawl.js';
import { withDownloadUrl } from './presenters/downloads.js';
import { pdfFile, pdfHeaders, screenshotFile, screenshotHeaders } from './presenters/render.js';
import { presentSslScan } from './presenters/tls-scan.js';
import { type Caller, type DownloadSpec, download, type RouteSpec, route, versioned } from './route-spec.js';
import {
  ApiKey,
  ApiKeyList,
  Challenge,
  ChallengeCleared,
  credentialsInput,
  NewApiKey,
  newKeyInput,
  Quota,
  Session,
  SignedOut,
  solutionInput,
  UsageList,
} from './schemas/billing.js';
import {
  HTML_UPLOAD,
  htmlToXbelInput,
  XBEL_UPLOAD,
  XbelResult,
  xbelDecryptInput,
  xbelToHtmlInput,
} from './schemas/bookmark.js';
import {
  BOOKMARK_UPLOAD,
  BookmarkCheckJob,
  bookmarkCheckInput,
  bookmarkDownloadInput,
} from './schemas/bookmark-check.js';
import { jobInput, noInput, required } from './schemas/common.js';
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
} from './schemas/crawl.js';
import { DownCheckInput, DownCheckResult, MetaScanInput, MetaScanResult } from './schemas/meta-scan.js';
import {
  PdfInput,
  PdfResult,
  pdfRequest,
  ScreenshotInput,
  ScreenshotResult,
  screenshotRequest,
} from './schemas/render.js';
import { SslScanResult, sslScanInput } from './schemas/tls-scan.js';
import { WebhookDeliveries, WebhookSecret, webhookDeliveriesInput } from './schemas/webhooks.js';
import { withWebhook } from './webhooks/start.js';

/** Failures of a service that fetches the caller's page. */
const FETCH_ERRORS = { target_blocked: 400, target_unreachable: 400, target_http_error: 400, not_html: 400 };
/** A crawl start whose client left: the crawl service drops the job if it is not queued yet. */
const withdrawCrawlStart = (c: Clients, requestId: string) =>
  c.crawl.withdrawStart({ requestId }, { requestId, timeoutMs: 5_000, signal: NEVER_CANCELLED });
/** Who starts a crawl: the crawl service bounds each caller's crawls queued or running, by plan. */
const crawlCaller = (caller: Caller) => ({ key: caller.subject, plan: caller.quota.plan });
/**
 * A crawl start resolves the entry host at once; a caller with its plan's bound of crawls queued
 * or running is refused (429, with Retry-After).
 */
const CRAWL_START_ERRORS = {
  target_blocked: 400,
  target_unreachable: 400,
  too_many_crawls: 429,
  queue_unavailable: 503,
  // An option the crawl service refuses (a glob that does not compile, a refused header).
  invalid_option: 400,
};
const JOB_ERRORS = { job_not_found: 404 };
/** The spec answers a file it cannot use with 500; the code says what was wrong with it. */
/** A file the service refuses; 422 when what it converts to would pass the output bound (docs/decisions/0111). */
const XBEL_FILE_ERRORS = { empty_file: 400, output_too_large: 422 };
/**
 * A render: 400 when the page cannot be had, the service refuses an option (a selector the browser
 * cannot parse, page ranges past the document) or no element matches a selector; 408 past the
 * render budget, 503 (with Retry-After) when every browser is busy or the one rendering it stopped.
 */
const RENDER_ERRORS = {
  target_blocked: 400,
  target_unreachable: 400,
  not_renderable: 400,
  invalid_option: 400,
  invalid_selector: 400,
  selector_not_found: 400,
  render_timeout: 408,
  render_busy: 503,
  browser_crashed: 503,
  concurrency_limited: 429,
  // blockAds on a render service installed without its filter lists (decision 0192).
  ads_lists_unavailable: 503,
};
/** A render's stored file, for the answer that is the file itself (Accept: its content type). */
const readRenderFile = (c: Clients, reply: { filename: string }, options: CallOptions) =>
  c.render.readArtifact({ filename: reply.filename }, options);
/** A render may wait 15 s for a browser, then has 30 s. */
const RENDER_TIMEOUT_MS = 60_000;

/** Where the bookmark routes' outputs are downloaded: the answer's downloadUrl and the download row share it. */
const XBEL_DECRYPT_DOWNLOAD = '/xbel-decrypt/download';
const XBEL_TO_HTML_DOWNLOAD = '/xbel-to-html/download';
const HTML_TO_XBEL_DOWNLOAD = '/html-to-xbel/download';

/**
 * A bookmark check is two services' work (docs/decisions/0241): the bookmark service reads the
 * file (and keeps it for cleaned copies), the crawl service checks its URLs as a job. The edge
 * hands one's answer to the other unchanged.
 */
const BOOKMARK_FILE_ERRORS = {
  ...XBEL_FILE_ERRORS,
  key_required: 400,
  invalid_file: 400,
  invalid_xbel: 400,
  nesting_too_deep: 400,
  corrupted_file: 400,
  wrong_password: 400,
  no_bookmarks: 400,
};

/**
 * The operations a key may be limited to (`allowedOperations`): the credit-spending routes; free
 * reads (quota, job polls, downloads) stay open to every key. A test keeps it equal to the table.
 */
export const KEY_OPERATIONS = [
  'down-check',
  'meta-scan',
  'ssl-scan',
  'link-extract',
  'screenshot',
  'url-to-pdf',
  'broken-links',
  'broken-links-crawl',
  'link-extract-crawl',
  'xbel-decrypt',
  'xbel-to-html',
  'html-to-xbel',
  'bookmarks-check',
] as const;

/** What sign-up and sign-in send billing: the credentials, the client and any solved challenge. */
const signInput = (input: z.output<typeof credentialsInput>, caller: Caller) => ({
  email: input.email,
  password: input.password,
  clientIp: caller.credential.clientIp,
  solution: challengeSolution(input),
});

/**
 * Job starts that take an optional webhookUrl, each with the operation of the route that polls its
 * job (docs/decisions/0206-webhooks.md): a job route gets webhooks with one line here.
 */
const WEBHOOK_POLLS: Readonly<Record<string, string>> = {
  'broken-links-crawl': 'broken-links-crawl-status',
  'link-extract-crawl': 'link-extract-crawl-status',
  'bookmarks-check': 'bookmarks-check-status',
};

const table: RouteSpec[] = [
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
  route({
    method: 'GET',
    path: '/ssl-scan',
    operation: 'ssl-scan',
    summary:
      'The certificate chain, protocols, cipher, HSTS, CAA and ALPN of a host on port 443 (or `port`), graded ' +
      'after the SSL Labs guide with the reasons.',
    credits: 1,
    input: sslScanInput,
    output: SslScanResult,
    errors: { invalid_domain: 400, target_blocked: 400, target_unreachable: 400, tls_handshake_failed: 400 },
    timeoutMs: 30_000,
    call: (c, input, options) =>
      c.tlsScan.sslScan({ domain: input.domain, port: input.port, fast: input.fast === 'true' }, options),
    present: presentSslScan,
  }),
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

  // Rendering: the result is a file, downloaded from /api/uploads/<filename> (see downloads below).
  route({
    method: 'POST',
    path: '/screenshot',
    operation: 'screenshot',
    summary: 'A full-page image of a URL in a headless browser (png, jpeg or webp; desktop or mobile).',
    credits: 2,
    render: true,
    input: ScreenshotInput,
    output: ScreenshotResult,
    envelope: 'top-level',
    errors: RENDER_ERRORS,
    timeoutMs: RENDER_TIMEOUT_MS,
    call: (c, input, options, caller) =>
      c.render.screenshot({ ...screenshotRequest(input), caller: renderCaller(caller) }, options),
    headers: screenshotHeaders,
    file: { ...screenshotFile, read: readRenderFile },
    successHeaders: {
      'X-Screenshot-Cache': 'HIT when served from the short-lived result cache without the browser, else MISS.',
      'X-Screenshot-Clipped': 'true or false, as `clipped`.',
      'Server-Timing': 'Stages queue, page, nav, net, scroll, settle, encode and total, in ms.',
    },
  }),
  route({
    method: 'POST',
    path: '/url-to-pdf',
    operation: 'url-to-pdf',
    summary: 'A URL printed to a paginated PDF in a headless browser (paper format, orientation, theme).',
    credits: 2,
    render: true,
    input: PdfInput,
    output: PdfResult,
    envelope: 'top-level',
    errors: RENDER_ERRORS,
    timeoutMs: RENDER_TIMEOUT_MS,
    call: (c, input, options, caller) =>
      c.render.urlToPdf({ ...pdfRequest(input), caller: renderCaller(caller) }, options),
    headers: pdfHeaders,
    file: { ...pdfFile, read: readRenderFile },
    successHeaders: {
      'X-Pdf-Cache': 'HIT when served from the short-lived result cache without the browser, else MISS.',
      'Server-Timing': 'Stages queue, page, nav, net, scroll, settle, render and total, in ms.',
    },
  }),

  // Link checking and site crawls: a crawl start answers 202 with the job id at once; polls are
  // free and read the job store. A job that ended in failure is a 200 with status `failed`.
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

  // Bookmark health: a file's bookmarks checked as a job; polls are free, as are cleaned copies.
  route({
    method: 'POST',
    path: '/bookmarks/check',
    operation: 'bookmarks-check',
    summary:
      'Checks every bookmark of an XBEL (plain or Floccus-encrypted) or browser bookmark HTML file (the first ' +
      '5,000, each URL once, within 6 minutes); poll its job, then download a cleaned copy.',
    credits: 2,
    input: bookmarkCheckInput,
    upload: BOOKMARK_UPLOAD,
    output: JobStarted,
    status: 202,
    errors: { ...BOOKMARK_FILE_ERRORS, ...CRAWL_START_ERRORS },
    timeoutMs: 60_000,
    call: async (c, input, options, caller) => {
      const parsed = await c.bookmark.parseBookmarks(
        { fileName: input.file.name, file: input.file.bytes, key: input.key, salt: input.salt },
        options,
      );
      return c.crawl.startBookmarkCheck({ ...parsed, caller: crawlCaller(caller) }, options);
    },
    withdraw: withdrawCrawlStart,
  }),
  route({
    method: 'GET',
    path: '/bookmarks/check/:job_id',
    operation: 'bookmarks-check-status',
    freeRead: 'job-poll',
    summary: 'A bookmark check’s progress, and its result once done.',
    credits: 0,
    input: jobInput,
    output: BookmarkCheckJob,
    errors: JOB_ERRORS,
    timeoutMs: 15_000,
    call: (c, input, options) => c.crawl.getBookmarkCheck({ jobId: input.job_id }, options),
    headers: noStore,
  }),

  // Bookmark files: an upload in, a link to the output (kept 30 minutes) out.
  route({
    method: 'POST',
    path: '/xbel-decrypt',
    operation: 'xbel-decrypt',
    summary: 'Decrypts a bookmark file encrypted by Floccus; a plain XBEL file passes through unchanged.',
    credits: 1,
    input: xbelDecryptInput,
    upload: XBEL_UPLOAD,
    output: XbelResult,
    envelope: 'top-level',
    errors: { ...XBEL_FILE_ERRORS, wrong_password: 500, invalid_file: 500, corrupted_file: 500 },
    timeoutMs: 60_000,
    call: (c, input, options) =>
      c.bookmark.decryptXbel(
        { fileName: input.file.name, file: input.file.bytes, key: input.key, salt: input.salt },
        options,
      ),
    present: withDownloadUrl(XBEL_DECRYPT_DOWNLOAD),
  }),
  route({
    method: 'POST',
    path: '/xbel-to-html',
    operation: 'xbel-to-html',
    summary: 'Converts an XBEL bookmark file to the Netscape bookmark HTML that browsers import.',
    credits: 1,
    input: xbelToHtmlInput,
    upload: XBEL_UPLOAD,
    output: XbelResult,
    envelope: 'top-level',
    errors: { ...XBEL_FILE_ERRORS, invalid_xbel: 500, nesting_too_deep: 500, alias_expansion_too_large: 500 },
    timeoutMs: 60_000,
    call: (c, input, options) =>
      c.bookmark.convertXbelToHtml({ fileName: input.file.name, file: input.file.bytes }, options),
    present: withDownloadUrl(XBEL_TO_HTML_DOWNLOAD),
  }),

  route({
    method: 'POST',
    path: '/html-to-xbel',
    operation: 'html-to-xbel',
    summary: 'Converts a browser’s bookmark HTML export (Netscape format) to XBEL.',
    credits: 1,
    input: htmlToXbelInput,
    upload: HTML_UPLOAD,
    output: XbelResult,
    envelope: 'top-level',
    // A new route: a file it cannot use is the caller's to fix (400), unlike the spec's XBEL routes.
    errors: { ...XBEL_FILE_ERRORS, invalid_html: 400, nesting_too_deep: 400 },
    timeoutMs: 60_000,
    call: (c, input, options) =>
      c.bookmark.convertHtmlToXbel({ fileName: input.file.name, file: input.file.bytes }, options),
    present: withDownloadUrl(HTML_TO_XBEL_DOWNLOAD),
  }),

  // Quota, the bot challenge, sessions and API keys: free, rate-limited like every route.
  route({
    method: 'GET',
    path: '/quota',
    operation: 'quota',
    summary: 'The caller’s credits: limit of the cycle (or day) and remaining.',
    credits: 0,
    input: noInput,
    output: Quota,
    timeoutMs: BILLING_TIMEOUT_MS,
    fromCallerView: true,
    freeRead: 'site-read',
    // Billing's Authorize (or the edge's view of the caller) already read the quota, counting this request.
    call: async (_c, _input, _options, caller) => caller.quota,
    headers: noStore,
  }),
  route({
    method: 'GET',
    path: '/challenge',
    operation: 'challenge',
    summary: 'A bot challenge for browser callers: an ALTCHA proof of work, or the Turnstile site key.',
    credits: 0,
    callers: 'ip',
    input: noInput,
    output: Challenge,
    errors: { challenge_unavailable: 503 },
    timeoutMs: BILLING_TIMEOUT_MS,
    call: (c, _input, options, caller) => c.billing.createChallenge({ clientIp: caller.credential.clientIp }, options),
    present: presentChallenge,
    headers: noStore,
  }),
  route({
    method: 'POST',
    path: '/challenge',
    operation: 'challenge-solve',
    summary: 'Submits a solved challenge; sets the wu_clearance cookie.',
    credits: 0,
    callers: 'ip',
    input: solutionInput,
    output: ChallengeCleared,
    errors: { challenge_failed: 401, challenge_expired: 401, challenge_unavailable: 503 },
    timeoutMs: BILLING_TIMEOUT_MS,
    call: (c, input, options, caller) =>
      c.billing.solveChallenge({ clientIp: caller.credential.clientIp, solution: challengeSolution(input) }, options),
    headers: clearanceHeaders,
  }),
  route({
    method: 'POST',
    path: '/auth/sign-up',
    operation: 'sign-up',
    summary:
      'Creates a Free account and signs it in (sets wu_session). Each sign-up redeems a freshly solved ' +
      'challenge (payload or turnstileToken), not the clearance; a client network opens 3 accounts a day.',
    credits: 0,
    callers: 'ip',
    input: credentialsInput,
    output: Session,
    status: 201,
    errors: {
      invalid_email: 400,
      weak_password: 400,
      invalid_password: 400,
      challenge_required: 401,
      challenge_failed: 401,
      email_taken: 409,
      sign_up_limit: 429,
      challenge_unavailable: 503,
    },
    timeoutMs: BILLING_TIMEOUT_MS,
    call: (c, input, options, caller) => c.billing.signUp(signInput(input, caller), options),
    present: signedIn,
    headers: signedInHeaders,
  }),
  route({
    method: 'POST',
    path: '/auth/sign-in',
    operation: 'sign-in',
    summary:
      'Signs in with email and password (sets wu_session). An account that has had many failed sign-ins ' +
      'asks for a freshly solved challenge (payload or turnstileToken) with each attempt.',
    credits: 0,
    callers: 'ip',
    input: credentialsInput,
    output: Session,
    errors: {
      invalid_credentials: 401,
      challenge_required: 401,
      challenge_failed: 401,
      sign_in_limit: 429,
      challenge_unavailable: 503,
    },
    timeoutMs: BILLING_TIMEOUT_MS,
    call: (c, input, options, caller) => c.billing.signIn(signInput(input, caller), options),
    present: signedIn,
    headers: signedInHeaders,
  }),
  route({
    method: 'POST',
    path: '/auth/sign-out',
    operation: 'sign-out',
    summary: 'Ends the session (clears wu_session).',
    credits: 0,
    callers: 'session',
    input: noInput,
    output: SignedOut,
    timeoutMs: BILLING_TIMEOUT_MS,
    call: (c, _input, options, caller) => c.billing.signOut({ credential: caller.credential }, options),
    present: presentSignedOut,
    headers: signedOutHeaders,
  }),
  // Webhooks: an account's signing secret and its delivery attempts (docs/decisions/0206-webhooks.md).
  route({
    method: 'POST',
    path: '/webhooks/secret',
    operation: 'rotate-webhook-secret',
    summary:
      'Creates the account’s webhook signing secret, or replaces it at once (the old one stops signing); ' +
      'the secret is returned this once. Session or API key.',
    credits: 0,
    input: noInput,
    output: WebhookSecret,
    status: 201,
    errors: { account_required: 401 },
    timeoutMs: BILLING_TIMEOUT_MS,
    call: (c, _input, options, caller) => c.webhooks.rotateWebhookSecret({ subject: caller.subject }, options),
    headers: noStore,
  }),
  route({
    method: 'GET',
    path: '/webhooks/deliveries',
    operation: 'webhook-deliveries',
    summary:
      'The account’s most recent webhook delivery attempts (at most 100, kept 7 days), newest first, and when ' +
      'its signing secret was made. Session or API key.',
    credits: 0,
    input: webhookDeliveriesInput,
    output: WebhookDeliveries,
    errors: { account_required: 401 },
    timeoutMs: BILLING_TIMEOUT_MS,
    call: (c, input, options, caller) =>
      c.webhooks.listWebhookAttempts({ subject: caller.subject, limit: input.limit ?? 50 }, options),
    headers: noStore,
  }),
  route({
    method: 'GET',
    path: '/auth/me',
    operation: 'account',
    summary: 'The signed-in account and its CSRF token.',
    freeRead: 'site-read',
    credits: 0,
    callers: 'session',
    input: noInput,
    output: Session,
    timeoutMs: BILLING_TIMEOUT_MS,
    call: (c, _input, options, caller) => c.billing.getAccount({ credential: caller.credential }, options),
    headers: noStore,
  }),
  route({
    method: 'GET',
    path: '/keys',
    operation: 'list-keys',
    summary: 'The account’s API keys (never the keys themselves).',
    credits: 0,
    callers: 'session',
    input: noInput,
    output: ApiKeyList,
    timeoutMs: BILLING_TIMEOUT_MS,
    call: (c, _input, options, caller) => c.billing.listApiKeys({ credential: caller.credential }, options),
    headers: noStore,
  }),
  route({
    method: 'GET',
    path: '/account/usage',
    operation: 'account-usage',
    summary: 'The account’s most recent spent calls (operation, credits, time), newest first.',
    credits: 0,
    callers: 'session',
    input: noInput,
    output: UsageList,
    timeoutMs: BILLING_TIMEOUT_MS,
    call: (c, _input, options, caller) => c.billing.listUsage({ credential: caller.credential }, options),
    present: presentUsage,
    headers: noStore,
  }),
  route({
    method: 'POST',
    path: '/keys',
    operation: 'create-key',
    summary:
      'Creates an API key (Starter plan or higher); the full key is shown this once. With mode test, a sandbox ' +
      'key: its calls answer fixed samples and spend nothing.',
    credits: 0,
    callers: 'session',
    input: newKeyInput(KEY_OPERATIONS),
    output: NewApiKey,
    status: 201,
    errors: {
      invalid_name: 400,
      invalid_credit_limit: 400,
      invalid_expires_at: 400,
      invalid_allowed_operations: 400,
      invalid_mode: 400,
      plan_required: 403,
    },
    timeoutMs: BILLING_TIMEOUT_MS,
    call: (c, input, options, caller) =>
      c.billing.createApiKey(
        {
          credential: caller.credential,
          name: input.name,
          creditLimit: input.creditLimit,
          expiresAt: input.expiresAt,
          allowedOperations: input.allowedOperations ?? [],
          mode: input.mode,
        },
        options,
      ),
    present: presentNewKey,
    headers: noStore,
  }),
  route({
    method: 'DELETE',
    path: '/keys/:key_id',
    operation: 'revoke-key',
    summary: 'Revokes an API key.',
    credits: 0,
    callers: 'session',
    input: z.object({ key_id: required('key_id') }),
    output: ApiKey,
    errors: { api_key_not_found: 404 },
    timeoutMs: BILLING_TIMEOUT_MS,
    call: (c, input, options, caller) =>
      c.billing.revokeApiKey({ credential: caller.credential, keyId: input.key_id }, options),
    present: presentRevokedKey,
  }),
];

export const routes: RouteSpec[] = table.map((spec) => {
  const poll = WEBHOOK_POLLS[spec.operation];
  return poll ? withWebhook(spec, poll) : spec;
});

/** A bookmark conversion's output, by the downloadUrl its conversion returned (kept 30 minutes). */
function bookmarkFile(
  prefix: string,
  operation: string,
  what: string,
  contentType: string,
  { kind }: { kind: DownloadKind },
): DownloadSpec {
  return download({
    paths: versioned(`${prefix}/:stored_name`),
    operation,
    summary: `${what} by the downloadUrl its conversion returned; kept 30 minutes.`,
    input: z.object({ stored_name: required('stored_name') }),
    nameParam: 'stored_name',
    disposition: 'attachment',
    contentTypes: [contentType],
    errors: { file_not_found: 404 },
    timeoutMs: 60_000,
    call: (c, input, options) => c.bookmark.readDownload({ kind, storedName: input.stored_name }, options),
  });
}

/** Result files, streamed from the service that stored them: free, no credential needed. */
export const downloads: DownloadSpec[] = [
  download({
    paths: ['/api/uploads/:filename'],
    operation: 'render-download',
    summary: 'A rendered screenshot or PDF by the filename its render returned; kept about 5 minutes.',
    input: z.object({ filename: required('filename') }),
    nameParam: 'filename',
    disposition: 'inline',
    contentTypes: ['image/png', 'image/jpeg', 'image/webp', 'application/pdf'],
    errors: { file_not_found: 404 },
    timeoutMs: 60_000,
    call: (c, input, options) => c.render.readArtifact({ filename: input.filename }, options),
  }),
  download({
    paths: versioned('/bookmarks/check/:job_id/download'),
    operation: 'bookmarks-check-download',
    summary:
      'A cleaned copy of a checked file: broken bookmarks and/or duplicates left out, permanent redirects ' +
      'rewritten, nothing else changed; as long as the check’s job lives (30 minutes).',
    input: bookmarkDownloadInput,
    nameParam: 'job_id',
    disposition: 'attachment',
    contentTypes: ['application/xml', 'text/html'],
    errors: { job_not_found: 404, file_not_found: 404, job_not_done: 409, output_too_large: 422 },
    timeoutMs: 60_000,
    call: async function* (c, input, options) {
      const edits = await c.crawl.getBookmarkCheckEdits(
        {
          jobId: input.job_id,
          dropBroken: input.drop.has('broken'),
          dropDuplicates: input.drop.has('duplicates'),
          updateRedirects: input.update === 'redirects',
        },
        options,
      );
      yield* c.bookmark.readCleanedBookmarks(
        { fileId: edits.fileId, format: input.format ?? '', drop: edits.drop, rewrites: edits.rewrites, baseName: '' },
        options,
      );
    },
  }),
  bookmarkFile(XBEL_DECRYPT_DOWNLOAD, 'xbel-decrypt-download', 'A decrypted XBEL file', 'application/xml', {
    kind: DownloadKind.DOWNLOAD_KIND_DECRYPTED,
  }),
  bookmarkFile(XBEL_TO_HTML_DOWNLOAD, 'xbel-to-html-download', 'A bookmark HTML file', 'text/html', {
    kind: DownloadKind.DOWNLOAD_KIND_HTML,
  }),
  bookmarkFile(HTML_TO_XBEL_DOWNLOAD, 'html-to-xbel-download', 'An XBEL file', 'application/xml', {
    kind: DownloadKind.DOWNLOAD_KIND_XBEL_FROM_HTML,
  }),
];
