/**
 * The OpenAPI 3.1 document of the REST edge, generated from the route table: parameters and body
 * from each row's input schema, the success body from its output schema and envelope, failures
 * from what the row declares, the credit cost as `x-credits`. Served at /v1/openapi.json and
 * written to docs/openapi.json by the build.
 */
import { OpenAPIRegistry, OpenApiGeneratorV31, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { CLEARANCE_COOKIE, CSRF_HEADER, SESSION_COOKIE } from './caller.js';
import { CREDITS_HEADER, RATE_LIMIT_HEADER, RATE_LIMIT_POLICY_HEADER } from './envelope.js';
import {
  IDEMPOTENCY_KEY_HEADER,
  IDEMPOTENCY_KEY_MAX,
  IDEMPOTENT_REPLAYED_HEADER,
  takesIdempotencyKey,
} from './idempotency.js';
import { Failure, successSchema } from './rest/common.js';
import {
  type BlockPrice,
  type DownloadSpec,
  exportRoutes,
  PREFIXES,
  type RawBody,
  type RouteSpec,
  sizedCredits,
  takesJsonBody,
} from './route-spec.js';

export const OPENAPI_PATH = '/openapi.json';

type Failures = Map<number, Set<string>>;

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad request',
  401: 'No acceptable credential or challenge clearance',
  402: 'Not enough credits',
  403: 'Not allowed',
  404: 'Not found',
  408: 'Timed out',
  409: 'Conflict',
  413: 'Body too large',
  415: 'Body is not JSON',
  422: 'Unprocessable as sent',
  429: 'Too many requests',
  500: 'Internal error',
  503: 'Unavailable',
  504: 'Timed out',
};

/** What of a row decides the failures it can answer. */
type FailureFacts = Pick<
  RouteSpec,
  'input' | 'method' | 'upload' | 'callers' | 'challenge' | 'credits' | 'errors' | 'exports'
>;

/** A session's state-changing and credit-spending calls carry its CSRF token. */
const needsCsrf = (spec: Pick<RouteSpec, 'method' | 'credits'>) => spec.method !== 'GET' || spec.credits > 0;

/** Failures a route answers because of what its row declares (input, callers, challenge, credits). */
function platformFailures(spec: FailureFacts): Failures {
  const failures: Failures = new Map();
  const add = (status: number, ...codes: string[]) => {
    const set = failures.get(status) ?? new Set<string>();
    for (const code of codes) set.add(code);
    failures.set(status, set);
  };
  const fields = Object.keys(spec.input.shape);
  if (fields.length || takesJsonBody(spec)) add(400, 'invalid_request');
  if (fields.includes('url')) add(400, 'invalid_url');
  if (spec.upload) {
    add(413, 'payload_too_large');
    add(429, 'too_many_uploads');
  } else if (takesJsonBody(spec)) {
    add(400, 'invalid_json');
    add(413, 'payload_too_large');
    add(415, 'unsupported_media_type');
  }
  const callers = spec.callers ?? 'any';
  if (callers !== 'ip') {
    add(401, 'invalid_authorization', 'invalid_api_key', 'revoked_api_key', 'key_expired', 'invalid_session');
    add(403, 'plan_required');
    if (needsCsrf(spec)) add(403, 'csrf_failed');
  }
  if (callers === 'session') add(401, 'session_required');
  if (spec.challenge ?? spec.credits > 0) add(401, 'challenge_required', 'challenge_failed', 'challenge_expired');
  if (spec.credits > 0) {
    // A key's own limits (decision 0203): its credits per cycle, and the operations it may call.
    add(402, 'insufficient_credits', 'key_credit_limit');
    add(403, 'operation_not_allowed');
  }
  if (takesIdempotencyKey(spec)) {
    add(400, 'invalid_idempotency_key');
    add(409, 'idempotency_key_in_use', 'idempotency_key_used');
    add(422, 'idempotency_key_mismatch');
  }
  add(429, 'rate_limited', 'too_many_connections');
  add(500, 'internal_error');
  add(503, 'service_unavailable');
  add(504, 'timeout');
  if (spec.exports) add(400, 'invalid_format');
  for (const [code, status] of Object.entries({ ...spec.errors, ...spec.exports?.errors })) add(status, code);
  return failures;
}

const commonHeaders = {
  [CREDITS_HEADER]: { $ref: `#/components/headers/${CREDITS_HEADER}` },
  [RATE_LIMIT_POLICY_HEADER]: { $ref: `#/components/headers/${RATE_LIMIT_POLICY_HEADER}` },
  [RATE_LIMIT_HEADER]: { $ref: `#/components/headers/${RATE_LIMIT_HEADER}` },
  'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' },
};

/** The envelope, its `error.code` one of the codes this route answers with this status. */
const failureOf = (codes: Set<string>) =>
  Failure.and(z.object({ error: z.object({ code: z.enum([...codes] as [string, ...string[]]) }) }));

function failureResponse(status: number, codes: Set<string>) {
  const text = STATUS_TEXT[status];
  if (!text) throw new Error(`openapi.ts: STATUS_TEXT has no wording for ${status}`);
  return {
    description: `${text}: ${[...codes].map((c) => `\`${c}\``).join(', ')}.`,
    headers: {
      ...commonHeaders,
      ...(status === 401 ? { 'WWW-Authenticate': { $ref: '#/components/headers/WWW-Authenticate' } } : {}),
      ...(status === 409 || status === 429 || status === 503
        ? { 'Retry-After': { $ref: '#/components/headers/Retry-After' } }
        : {}),
    },
    content: { 'application/json': { schema: failureOf(codes) } },
  };
}

/**
 * The contract's areas (its tags), by a path's first segment below the version prefix. A path of
 * no area fails the build: a new route names its area here.
 */
const AREAS: Record<string, string> = {
  screenshot: 'Rendering',
  'url-to-pdf': 'Rendering',
  uploads: 'Rendering',
  'meta-scan': 'Scanning',
  'ssl-scan': 'Scanning',
  'down-check': 'Scanning',
  'broken-links': 'Links',
  'link-extract': 'Links',
  bookmarks: 'Bookmarks',
  'xbel-decrypt': 'Bookmarks',
  'xbel-to-html': 'Bookmarks',
  'html-to-xbel': 'Bookmarks',
  quota: 'Account',
  challenge: 'Account',
  auth: 'Account',
  keys: 'Account',
  account: 'Account',
  webhooks: 'Webhooks',
  billing: 'Payments',
  monitors: 'Monitors',
  'openapi.json': 'Contract',
  'site-audit': 'Site audits',
  'status-page': 'Monitors',
  status: 'Monitors',
  badges: 'Monitors',
  'monitor-images': 'Monitors',
  'site-audit-images': 'Site audits',
};
const TAGS = [
  { name: 'Rendering', description: 'Screenshots and PDFs of pages, and their files.' },
  { name: 'Scanning', description: 'A page’s metadata, a host’s TLS, whether a site is up.' },
  { name: 'Links', description: 'Broken links and extracted links, of a page or a crawled site.' },
  { name: 'Bookmarks', description: 'Bookmark files checked link by link, converted and decrypted.' },
  { name: 'Account', description: 'Quota, the bot challenge, sessions, API keys and usage.' },
  { name: 'Webhooks', description: 'The signing secret and the deliveries of job webhooks.' },
  { name: 'Payments', description: 'Prices, card checkout and the customer portal (Stripe), and Stripe’s events.' },
  { name: 'Monitors', description: 'Operations run on a schedule: their runs, incidents and alerts.' },
  { name: 'Contract', description: 'This document.' },
  { name: 'Site audits', description: 'Every page of a site checked for technical and SEO issues, as a job.' },
];

function areaOf(path: string): string[] {
  const segment =
    path
      .replace(/^\/(api\/)?v1\//, '/')
      .replace(/^\/api\//, '/')
      .split('/')[1] ?? '';
  const area = AREAS[segment];
  if (!area) throw new Error(`openapi.ts: AREAS names no area for ${path}`);
  return [area];
}

/**
 * Where a route's file answers are described for generated clients: the distinct operation typed
 * as the file (the route itself is documented with its JSON answer, so a client types it as JSON).
 * The route still answers the file when asked (Accept, `format`); the contract check reads the
 * content types here.
 */
function fileAnswers(spec: RouteSpec) {
  if (spec.exportOnly) return {};
  const answers = [
    ...(spec.file
      ? [
          {
            contentTypes: spec.file.contentTypes,
            when: 'an Accept header naming the file’s content type',
            operationId: 'render-download',
          },
        ]
      : []),
    ...(spec.exports
      ? [{ contentTypes: spec.exports.contentTypes, when: '`format`', operationId: `${spec.operation}-export` }]
      : []),
  ];
  return answers.length ? { 'x-file-answers': answers } : {};
}

/** A credit-spending POST takes an Idempotency-Key. */
const idempotencyHeaders = z.object({
  [IDEMPOTENCY_KEY_HEADER]: z
    .string()
    .min(1)
    .max(IDEMPOTENCY_KEY_MAX)
    .optional()
    .meta({
      description:
        'Makes retries safe: a retry with the same key and request within 24 h gets the first success ' +
        '(status and body, with Idempotent-Replayed: true) and spends nothing; the key with another request ' +
        'is 422 idempotency_key_mismatch; a retry while the first call runs is 409 idempotency_key_in_use. ' +
        'Keys are per account (per client network when anonymous); a failed call frees its key. ' +
        'Printable ASCII, at most 255 characters.',
    }),
});

/** Who may call: an API key, a session, or anonymous by IP; browser callers with a clearance where needed. */
function security(spec: RouteSpec): RouteConfig['security'] {
  const challenge = spec.challenge ?? spec.credits > 0;
  const callers = spec.callers ?? 'any';
  const csrf: Record<string, string[]> = needsCsrf(spec) ? { csrf: [] } : {};
  if (callers === 'session') return [{ session: [], ...csrf }];
  if (callers === 'ip') return challenge ? [{ clearance: [] }] : [];
  // The account's owner: an API key (one without limits) or a session; no anonymous caller.
  if (callers === 'owner') return [{ apiKey: [] }, { session: [], ...csrf }];
  if (challenge) return [{ apiKey: [] }, { session: [], clearance: [], ...csrf }, { clearance: [] }];
  return [{ apiKey: [] }, { session: [], ...csrf }, {}];
}

/** What a success spends, as the response's description says it. */
function successPrice(spec: RouteSpec): string {
  if (!spec.credits) return 'Success.';
  const credits = (n: number) => `${n.toLocaleString('en')} credit${n > 1 ? 's' : ''}`;
  if (!spec.perBlock) return `Success; spends ${credits(spec.credits)}.`;
  return `Success; spends ${blockPriceText(spec, spec.perBlock)}.`;
}

/**
 * A price by size in words (the contract, docs/api.md): "2 credits for the first 1,000 bookmarks and
 * 2 more for each further 1,000 begun (10 for 5,000)".
 */
export function blockPriceText(spec: Pick<RouteSpec, 'credits'>, block: BlockPrice): string {
  const n = (value: number) => value.toLocaleString('en');
  const most = sizedCredits({ ...spec, perBlock: block }, block.maxUnits);
  return (
    `${n(spec.credits)} credits for the first ${n(block.size)} ${block.unit} and ${n(block.credits)} more ` +
    `for each further ${n(block.size)} begun (${n(most)} for ${n(block.maxUnits)}); ` +
    'a caller without the sized price is refused with 402 before anything is created' +
    (block.settled ? `; ${block.settled}` : '')
  );
}

/** A raw body's request: the body as sent (any JSON object) and the headers the input reads. */
function rawBodyRequest(rules: RawBody, shape: Record<string, z.ZodType>): RouteConfig['request'] {
  const headers = Object.entries(rules.headers).map(([field, header]) => [header, shape[field] ?? z.string()]);
  return {
    headers: z.object(Object.fromEntries(headers)),
    body: {
      required: true,
      content: { [rules.contentType]: { schema: z.looseObject({}).meta({ description: rules.description }) } },
    },
  };
}

function operation(spec: RouteSpec, prefix: string): RouteConfig {
  const shape = spec.input.shape as Record<string, z.ZodType>;
  const pathNames = [...spec.path.matchAll(/:(\w+)/g)].map((m) => m[1] ?? '');
  const pick = (inPath: boolean) =>
    z.object(Object.fromEntries(Object.entries(shape).filter(([name]) => pathNames.includes(name) === inPath)));
  const rest = pick(false);
  const hasRest = Object.keys(rest.shape).length > 0;
  // `?format=` of a route with exports (a query parameter on a POST too); its export operation's is required.
  const format = spec.exports && z.enum(spec.exports.formats as [string, ...string[]]);
  const formatShape = format
    ? { format: (spec.exportOnly ? format : format.optional()).meta({ description: spec.exports?.description }) }
    : {};
  const query =
    hasRest && spec.method === 'GET' ? rest.extend(formatShape) : spec.exports ? z.object(formatShape) : undefined;
  const status = spec.status ?? 200;
  return {
    method: spec.method.toLowerCase() as RouteConfig['method'],
    path: `${prefix}${spec.path.replace(/:(\w+)/g, '{$1}')}`,
    operationId: spec.exportOnly ? `${spec.operation}-export` : spec.operation,
    summary: spec.summary,
    tags: areaOf(spec.path),
    security: security(spec),
    'x-credits': spec.credits,
    ...(spec.perBlock ? { 'x-credits-per-block': spec.perBlock } : {}),
    ...fileAnswers(spec),
    request: spec.rawBody
      ? rawBodyRequest(spec.rawBody, shape)
      : {
          ...(takesIdempotencyKey(spec) ? { headers: idempotencyHeaders } : {}),
          ...(pathNames.length ? { params: pick(true) } : {}),
          ...(query ? { query } : {}),
          ...(hasRest && spec.method !== 'GET'
            ? {
                body: {
                  required: true,
                  content: { [spec.upload ? 'multipart/form-data' : 'application/json']: { schema: spec.input } },
                },
              }
            : {}),
        },
    responses: {
      [status]: {
        description:
          successPrice(spec) +
          (spec.file
            ? ` With an Accept header naming the file's content type (${spec.file.contentTypes.join(', ')}), ` +
              'the file itself, the fields as X- headers; otherwise JSON.'
            : '') +
          (spec.exports && spec.exportOnly
            ? ` The result as a file (Content-Disposition: attachment, with its name), in the \`format\` asked for.`
            : '') +
          (spec.exports && !spec.exportOnly
            ? ` With \`format\`, the result as a file (Content-Disposition: attachment, with its name): ` +
              `${spec.exports.formats.join(', ')}.`
            : ''),
        headers: {
          ...commonHeaders,
          ...(takesIdempotencyKey(spec)
            ? {
                [IDEMPOTENT_REPLAYED_HEADER]: {
                  description: '`true` on a retry answered with the first call’s response (nothing spent).',
                  schema: { type: 'string', enum: ['true'] },
                },
              }
            : {}),
          ...Object.fromEntries(
            Object.entries(spec.successHeaders ?? {}).map(([name, description]) => [
              name,
              { required: true, description, schema: { type: 'string' } },
            ]),
          ),
          ...Object.fromEntries(
            Object.entries(spec.file?.fieldHeaders ?? {}).map(([name, description]) => [
              name,
              {
                required: false,
                description: `With the file as the answer: ${description}`,
                schema: { type: 'string' },
              },
            ]),
          ),
        },
        // The JSON answer; the file answers are their own operations' (fileAnswers), or this one's when
        // it is an export operation.
        content:
          spec.exportOnly && spec.exports
            ? fileContent(spec.exports.contentTypes)
            : { 'application/json': { schema: successSchema(spec.output, spec.envelope ?? 'data') } },
      },
      ...Object.fromEntries(
        [...platformFailures(spec)]
          .sort(([a], [b]) => a - b)
          .map(([code, codes]) => [code, failureResponse(code, codes)]),
      ),
    },
  };
}

/** A file answer's content: the bytes, of one of these types. */
const fileContent = (types: readonly string[]) =>
  Object.fromEntries(types.map((type) => [type, { schema: { type: 'string' as const, contentMediaType: type } }]));

const downloadFacts = (spec: DownloadSpec): FailureFacts => ({ ...spec, method: 'GET', credits: 0, challenge: false });

function downloadOperation(spec: DownloadSpec, path: string): RouteConfig {
  const openApiPath = path.replace(/:(\w+)/g, '{$1}');
  // Path parameters in the path; any other input (a cleaned copy's options) is the query's.
  const pathNames = [...path.matchAll(/:(\w+)/g)].map((m) => m[1] ?? '');
  const shape = spec.input.shape as Record<string, z.ZodType>;
  const pick = (inPath: boolean) =>
    z.object(Object.fromEntries(Object.entries(shape).filter(([name]) => pathNames.includes(name) === inPath)));
  const query = pick(false);
  return {
    method: 'get',
    path: openApiPath,
    operationId: spec.operation,
    summary: spec.summary,
    tags: areaOf(path),
    security: spec.callers === 'ip' ? [] : [{ apiKey: [] }, { session: [] }, {}],
    'x-credits': 0,
    request: { params: pick(true), ...(Object.keys(query.shape).length ? { query } : {}) },
    responses: {
      200: {
        description: `The file (Content-Disposition: ${spec.disposition}, with its name). Free.`,
        headers: {
          ...commonHeaders,
          'Content-Length': { required: true, schema: { type: 'integer', minimum: 0 } },
          'Content-Disposition': { required: true, schema: { type: 'string' } },
        },
        content: fileContent(spec.contentTypes),
      },
      ...Object.fromEntries(
        [...platformFailures(downloadFacts(spec))]
          .sort(([a], [b]) => a - b)
          .map(([code, codes]) => [code, failureResponse(code, codes)]),
      ),
    },
  };
}

/** A download's paths in the contract: the /api/v1 aliases are implied, as for every route. */
export const documentedPaths = (spec: DownloadSpec) => spec.paths.filter((path) => !path.startsWith(`${PREFIXES[1]}/`));

/** The contract's version: /v1 paths; the minor grows with additions, the patch with wording. */
const VERSION = '1.0.0';

export function openApiDocument(routes: readonly RouteSpec[], downloads: readonly DownloadSpec[]) {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'apiKey', {
    type: 'http',
    scheme: 'bearer',
    description: 'An API key (`wu_live_…`, Starter plan or higher); no bot challenge.',
  });
  registry.registerComponent('securitySchemes', 'session', {
    type: 'apiKey',
    in: 'cookie',
    name: SESSION_COOKIE,
    description: 'A signed-in browser session, set by POST /v1/auth/sign-in or sign-up.',
  });
  registry.registerComponent('securitySchemes', 'clearance', {
    type: 'apiKey',
    in: 'cookie',
    name: CLEARANCE_COOKIE,
    description: 'The bot-challenge clearance of a browser caller, set by POST /v1/challenge (15 minutes).',
  });
  registry.registerComponent('securitySchemes', 'csrf', {
    type: 'apiKey',
    in: 'header',
    name: CSRF_HEADER,
    description:
      'A session’s state-changing and credit-spending requests send its CSRF token (from sign-in or /v1/auth/me).',
  });
  registry.registerComponent('headers', CREDITS_HEADER, {
    required: true,
    description: 'The caller’s credits left (0 when the caller is unknown).',
    schema: { type: 'integer', minimum: 0 },
  });
  registry.registerComponent('headers', RATE_LIMIT_POLICY_HEADER, {
    description:
      'The caller’s request-rate policy (draft-ietf-httpapi-ratelimit-headers): `"default";q=60;w=60` is ' +
      '60 requests per 60-second window. Absent only when billing could not be asked.',
    schema: { type: 'string', examples: ['"default";q=60;w=60'] },
  });
  registry.registerComponent('headers', RATE_LIMIT_HEADER, {
    description:
      'The caller’s window now (draft-ietf-httpapi-ratelimit-headers): `"default";r=12;t=34` is 12 requests ' +
      'left, the window resetting in 34 s. Absent only when billing could not be asked.',
    schema: { type: 'string', examples: ['"default";r=12;t=34'] },
  });
  registry.registerComponent('headers', 'X-Request-Id', {
    required: true,
    description: 'The caller’s X-Request-Id when it is a short token, else a new UUID.',
    schema: { type: 'string' },
  });
  registry.registerComponent('headers', 'WWW-Authenticate', { required: true, schema: { type: 'string' } });
  registry.registerComponent('headers', 'Retry-After', {
    description: 'Seconds until the caller may try again.',
    schema: { type: 'integer' },
  });
  for (const spec of [...routes, ...exportRoutes(routes)]) registry.registerPath(operation(spec, '/v1'));
  for (const spec of downloads) {
    for (const path of documentedPaths(spec)) registry.registerPath(downloadOperation(spec, path));
  }
  registry.registerPath({
    method: 'get',
    path: `/v1${OPENAPI_PATH}`,
    operationId: 'openapi',
    summary: 'This document. Free, no credential.',
    tags: areaOf(OPENAPI_PATH),
    security: [],
    'x-credits': 0,
    responses: {
      200: {
        description: 'The OpenAPI document.',
        headers: commonHeaders,
        content: { 'application/json': { schema: { type: 'object' } } },
      },
    },
  });
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    servers: [
      {
        url: 'http://localhost:8080',
        description: 'A local stack (npm start); a deployment serves the same paths at its PUBLIC_BASE_URL.',
      },
    ],
    tags: TAGS,
    info: {
      title: 'Web Utility API',
      version: VERSION,
      description: [
        'Page rendering, site scanning, link checking and extraction, and bookmark conversion, sold by credits.',
        'Every path under /v1 is also served under /api/v1 (the website’s same-origin proxy).',
        'A success spends the operation’s credits (`x-credits`); a failure spends none.',
        'Every response carries X-Credits-Remaining, X-Request-Id and the caller’s request-rate window',
        '(RateLimit-Policy and RateLimit); every 429 carries Retry-After; every failure is',
        '`{"success": false, "error": {"code", "message"}}`.',
      ].join(' '),
    },
  });
}

/** The document as docs/openapi.json holds it. */
export const openApiJson = (routes: readonly RouteSpec[], downloads: readonly DownloadSpec[]) =>
  `${JSON.stringify(openApiDocument(routes, downloads), null, 2)}\n`;

/** The failure statuses a route declares, for the index. */
export const failureStatuses = (spec: RouteSpec | DownloadSpec) =>
  [...platformFailures('paths' in spec ? downloadFacts(spec) : spec).keys()].sort((a, b) => a - b);
