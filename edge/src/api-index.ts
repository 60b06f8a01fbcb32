/** docs/api.md: a readable index of the OpenAPI document (the document stays the reference). */

import { blockPriceText, documentedPaths } from './openapi.js';
import { type DownloadSpec, exportRoutes, type RouteSpec } from './route-spec.js';

const INTRO = `# API index

Generated from the route table by \`npm run build\`; the full contract (every field, type and
failure) is the OpenAPI 3.1 document [\`openapi.json\`](openapi.json), also served by the API at
\`GET /v1/openapi.json\`. Every path is also served under \`/api/v1\`.

- Success: \`{"success": true, "data": {...}}\` (rendering and XBEL routes: the fields at top level).
- Failure: \`{"success": false, "error": {"code", "message"}}\`, plus \`creditsRequired\` with 402.
- Credentials: \`Authorization: Bearer <API key>\`; or, for browsers, the \`wu_session\` cookie and the
  \`wu_clearance\` challenge cookie (see the README). A success spends the route's credits; a
  failure spends none.
- Every response carries \`X-Credits-Remaining\` and \`X-Request-Id\`; every 401 \`WWW-Authenticate\`;
  429 \`Retry-After\`.
- Every response carries the caller's request-rate window as draft-ietf-httpapi-ratelimit-headers
  names it: \`RateLimit-Policy: "default";q=60;w=60\` (60 requests per 60 s window) and
  \`RateLimit: "default";r=12;t=34\` (12 left, the window resets in 34 s). A 429's code names the
  limit hit: \`rate_limited\` (requests per minute), \`concurrency_limited\` (renders in flight),
  \`too_many_uploads\` (uploads in flight), \`too_many_connections\` (open connections),
  \`sign_up_limit\` and \`sign_in_limit\` (accounts opened, failed sign-ins). The anonymous daily
  allowance is credits: spent, it is 402 \`insufficient_credits\`.
- An API key may have limits of its own, set when it is created (\`POST /v1/keys\`): past its
  \`creditLimit\` for the cycle a call is 402 \`key_credit_limit\` (with \`creditsRequired\`), past its
  \`expiresAt\` 401 \`key_expired\`, an operation outside its \`allowedOperations\` 403
  \`operation_not_allowed\`; none of them spends anything.
- Sandbox keys: a key created with \`"mode": "test"\` (\`wu_test_…\`; \`GET /v1/keys\` shows each key's
  \`mode\`) gets every credit-spending route's answer from a fixed sample in the route's real shape,
  spends no credits (\`X-Credits-Remaining\`: the account's balance, untouched) and fetches nothing.
  Input is validated as for live keys; rate limits, \`allowedOperations\` and \`expiresAt\` apply; it
  takes no \`creditLimit\` (400 \`invalid_credit_limit\`). Its crawl and bookmark-check starts answer a
  \`sandbox-…\` job id whose poll is a finished sample job (exports work); renders and bookmark
  conversions answer \`sandbox-…\` files that download (to anyone: they are fixed public bytes). A
  sandbox start's \`webhookUrl\` is delivered the sample job's envelope, signed, as a live one's; an
  \`Idempotency-Key\` is accepted and nothing is kept (every sandbox answer is the same). Service-side
  refusals (an unreachable or blocked target, a wrong password) do not happen in the sandbox.
- Credit-spending POSTs take an \`Idempotency-Key\` (at most 255 printable characters): a retry with
  the same key and body within 24 h gets the first success (\`Idempotent-Replayed: true\`) and
  spends nothing; another body is 422 \`idempotency_key_mismatch\`; a retry while the first call
  runs is 409 \`idempotency_key_in_use\`. A failed call frees its key.
- Job starts (both crawl starts, and the bookmark check as a form field) take an optional
  \`webhookUrl\`: when the job ends, its envelope, as the poll answers it, is POSTed there, signed
  per Standard Webhooks (\`webhook-id\`, \`webhook-timestamp\`, \`webhook-signature\`: \`v1,\` and
  the base64 HMAC-SHA256 of \`id.timestamp.body\` with the account's \`whsec_\` secret from
  \`POST /v1/webhooks/secret\`), and \`X-Webutil-Job-Id\`; retried on network errors, 408, 429 and
  5xx with back-off (5 s doubling, at most 10 minutes apart) for 30 minutes; a redirect is not
  followed. \`GET /v1/webhooks/deliveries\` lists each attempt, newest first. The secret and the
  list belong to the account's owner (a session, or a key without limits: 403 \`owner_required\`
  otherwise); a test key has its sandbox's own (at most 10 sandbox webhooks a minute). A rotated-out
  secret signs beside the new one for 24 hours (two space-separated signatures). A receiver has
  10 s to answer; at most 4 of an account's deliveries are in flight at once; an envelope over
  1 MB (256 KB gzip'd) is delivered as a summary with \`truncated: true\` and its \`pollUrl\`.
- Monitor alerts go to \`alerts.emails\` (SMTP, or the dev outbox), \`alerts.slackUrls\` (POSTed
  \`{"text"}\`) and, with \`alerts.webhook\`, \`alerts.webhookUrl\`: signed and retried as job webhooks
  are (\`X-Webutil-Job-Id\` is the monitor's id; the attempts are in \`GET /v1/webhooks/deliveries\`).
  Every URL passes the outbound address policy (400 \`invalid_webhook_url\`); each channel is tried
  three times at most. The webhook channel needs the account's signing secret: creating or changing a
  monitor whose alerts send webhooks (\`webhookUrl\` with \`webhook\` true or left out) before
  \`POST /v1/webhooks/secret\` is 400 \`webhook_secret_missing\`, and nothing is created or changed.
- Monitors: \`alerts.maintenance\` lists up to 10 windows (\`startsAt\`, \`endsAt\`, and \`repeat: "weekly"\`
  for the same span every 7 days, shorter than a week) in which alerts are silenced; runs and incidents
  are still recorded, an incident opened in one is \`silenced\`. Uptime over 24 h, 7 d, 30 d and 90 d
  (summaries, status pages, badges) is read from a daily rollup kept as each run finishes. A run
  the account has no credits left for is \`skipped\` and pauses every active monitor of the account
  (\`pausedReason: "out of credits"\`, never overspent); the account's address is mailed once for that
  pause, naming the monitors paused and how to resume (top up or change plan, then
  \`POST /v1/monitors/{id}/resume\` or the monitors page).
- Email: sign-up mails a single-use link (48 hours) to \`PUBLIC_BASE_URL/verify-email?token=…\`,
  whose page posts the token to \`POST /v1/auth/verify-email\`. An unverified account works on the
  Free plan, but creating an API key and buying (\`POST /v1/keys\`, \`POST /v1/billing/checkout\`)
  are 403 \`email_not_verified\` until it is verified (\`account.emailVerified\` in
  \`GET /v1/auth/me\`); accounts made before verification existed, or by the operator CLI, count as
  verified. \`POST /v1/auth/password-reset\` answers 202 the same for any address and mails a
  single-use link (30 minutes) to an account's address (3 requests an hour per address, 10 per client
  network: 429 \`password_reset_limit\`) to \`PUBLIC_BASE_URL/reset-password?token=…\`, whose page posts the
  new password to \`POST /v1/auth/password-reset/confirm\`, which ends every session of the account. The
  website's sign-in page links to \`/reset-password\` ("Forgot your password?"); its account page mails a
  new verification link while the address is unverified. Notices (receipts, failed renewals, 80 % and 100 % of the
  cycle's credits, once per cycle each) are on unless turned off with \`POST /v1/account/notices\`.
- Usage: \`GET /v1/account/usage\` lists the 50 most recent spent calls; \`GET /v1/account/usage/daily\`
  sums credits and calls per UTC day and operation over the last \`days\` (1 to 90, default 30), today
  the last, every day listed (zeros included). The latter belongs to the account's owner (a session, or a
  key without limits: 403 \`owner_required\` otherwise; a test key's days are all zero). The account page
  draws it as a chart, with the plan, its price, the renewal (or paid-through) date and the notices form.
- Uploads (XBEL routes): a file of at most 10 MB, judged by the request's headers before its body
  is read (send \`Expect: 100-continue\` to send the body only once it is wanted); at most 2
  uploads in flight per client (429 \`too_many_uploads\`); an output of at most 50 MB (422
  \`output_too_large\`).
`;

const who = (spec: RouteSpec) => {
  const callers = spec.callers ?? 'any';
  if (callers === 'session') return 'session';
  if (callers === 'owner') return 'session, or key without limits (a test key: its sandbox)';
  if (callers === 'ip') return spec.challenge ? 'anyone, after the challenge' : 'anyone';
  return (spec.challenge ?? spec.credits > 0) ? 'key, or browser after the challenge' : 'key, session or anonymous';
};

export function apiIndex(
  routes: readonly RouteSpec[],
  downloads: readonly DownloadSpec[],
  failures: (spec: RouteSpec | DownloadSpec) => number[],
): string {
  const rows = [...routes, ...exportRoutes(routes)].map((spec) => {
    const path = `/v1${spec.path.replace(/:(\w+)/g, '{$1}')}`;
    const credits = spec.perBlock
      ? `${spec.credits} per ${spec.perBlock.size.toLocaleString('en')} ${spec.perBlock.unit}`
      : spec.credits || 'free';
    return `| \`${spec.method} ${path}\` | ${credits} | ${who(spec)} | ${spec.summary} | ${
      spec.status ?? 200
    } | ${failures(spec).join(', ')} |`;
  });
  return [
    INTRO,
    '| Route | Credits | Caller | What it does | Success | Failures |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows,
    ...downloads.flatMap((spec) =>
      documentedPaths(spec).map(
        (path) =>
          `| \`GET ${path.replace(/:(\w+)/g, '{$1}')}\` | free | anyone | ${spec.summary} | 200 | ` +
          `${failures(spec).join(', ')} |`,
      ),
    ),
    '| `GET /v1/openapi.json` | free | anyone | The OpenAPI document. | 200 | |',
    '',
    ...sizedPrices(routes),
  ].join('\n');
}

/** The routes priced by size (RouteSpec.perBlock), each price in words, below the table. */
function sizedPrices(routes: readonly RouteSpec[]): string[] {
  const sized = routes.filter((spec) => spec.perBlock);
  if (sized.length === 0) return [];
  return [
    '## Prices by size',
    '',
    'A job whose work grows with its input is priced by its size once its input is read (the ' +
      "contract's `x-credits` is its first block's price, `x-credits-per-block` the rule):",
    '',
    ...sized.map(
      (spec) => `- \`${spec.method} /v1${spec.path}\`: ${spec.perBlock && blockPriceText(spec, spec.perBlock)}.`,
    ),
    '',
  ];
}
