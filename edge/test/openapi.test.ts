import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Contract, ContractViolation } from '@webutil/scripts/contract';
import { expect } from 'chai';
import { z } from 'zod';
import { apiIndex } from '../src/api-index.js';
import { CSRF_HEADER } from '../src/caller.js';
import { CREDITS_HEADER, successBody } from '../src/envelope.js';
import { failureStatuses, openApiDocument, openApiJson } from '../src/openapi.js';
import { successSchema } from '../src/rest/common.js';
import { downloads, KEY_OPERATIONS, routes } from '../src/routes.js';

type OperationObject = { responses?: Record<string, unknown> };
type ResponseObject = { description?: string; headers?: Record<string, unknown> };

const docs = (name: string) => readFileSync(new URL(`../../docs/${name}`, import.meta.url), 'utf8');

describe('the OpenAPI document', () => {
  it('docs/openapi.json and docs/api.md are what the route table generates (run npm run build)', () => {
    expect(docs('openapi.json')).to.equal(openApiJson(routes, downloads));
    expect(docs('api.md')).to.equal(apiIndex(routes, downloads, failureStatuses));
  });

  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(JSON.parse(openApiJson(routes, downloads)));
    expect(result.errors, JSON.stringify(result.errors)).to.equal(undefined);
    expect(result.valid).to.equal(true);
    expect(validator.version).to.equal('3.1');
  });

  it('has one operation per route, with its credits, security and failures', () => {
    const document = openApiDocument(routes, downloads);
    for (const spec of routes) {
      const path = `/v1${spec.path.replace(/:(\w+)/g, '{$1}')}`;
      const operation = document.paths?.[path]?.[spec.method.toLowerCase() as 'get' | 'post' | 'delete'];
      expect(operation, `${spec.method} ${path}`).to.not.equal(undefined);
      expect(operation?.operationId).to.equal(spec.operation);
      expect(operation?.['x-credits']).to.equal(spec.credits);
      const statuses = Object.keys(operation?.responses ?? {});
      expect(statuses).to.include(String(spec.status ?? 200));
      for (const status of ['429', '500', '503', '504']) expect(statuses).to.include(status);
      if (spec.credits > 0) expect(statuses).to.include('402');
      for (const status of Object.values(spec.errors ?? {})) expect(statuses).to.include(String(status));
    }
    expect(document.components?.securitySchemes).to.have.all.keys('apiKey', 'session', 'clearance', 'csrf');
  });

  it('puts X-Credits-Remaining and X-Request-Id on every response of every operation', () => {
    const document = openApiDocument(routes, downloads);
    let responses = 0;
    for (const [path, item] of Object.entries(document.paths ?? {})) {
      for (const [method, operation] of Object.entries(item ?? {})) {
        for (const [status, response] of Object.entries((operation as OperationObject).responses ?? {})) {
          const headers = (response as ResponseObject).headers ?? {};
          expect(headers, `${method} ${path} ${status}`).to.include.keys(CREDITS_HEADER, 'X-Request-Id');
          responses++;
        }
      }
    }
    expect(responses).to.be.greaterThan(routes.length * 5);
  });

  it('words every failure status (408 render_timeout is "Timed out", not a generic "Failure")', () => {
    const document = openApiDocument(routes, downloads);
    const timeout = (document.paths?.['/v1/screenshot']?.post?.responses?.['408'] ?? {}) as ResponseObject;
    expect(timeout.description).to.equal('Timed out: `render_timeout`.');
    for (const item of Object.values(document.paths ?? {})) {
      for (const operation of Object.values(item ?? {})) {
        for (const response of Object.values((operation as OperationObject).responses ?? {})) {
          expect((response as ResponseObject).description).to.not.match(/^Failure/);
        }
      }
    }
  });

  it('says which links a crawl’s progress counts in linksFound: the rule of its result', () => {
    const schemas = (openApiDocument(routes, downloads).components?.schemas ?? {}) as Record<
      string,
      { properties?: Record<string, { description?: string }> }
    >;
    const described = (id: string) => schemas[id]?.properties?.linksFound?.description ?? '';
    expect(described('BrokenLinkCrawlProgress')).to.include('totalUniqueLinks');
    expect(described('LinkExtractCrawlProgress')).to.include('counts.total').and.include('anchors');
  });

  it('lists the credit-spending operations a key may be limited to, as the route table has them', () => {
    const spending = routes.filter((spec) => spec.credits > 0).map((spec) => spec.operation);
    expect([...KEY_OPERATIONS].sort()).to.deep.equal(spending.sort());
    const document = JSON.parse(openApiJson(routes, downloads));
    const body = document.paths['/v1/keys'].post.requestBody.content['application/json'].schema;
    const input = body.$ref ? document.components.schemas[body.$ref.split('/').pop()] : body;
    expect(input.properties.allowedOperations.items.enum).to.deep.equal([...KEY_OPERATIONS]);
  });

  it('names the CSRF header as the edge reads it', () => {
    const schemes = openApiDocument(routes, downloads).components?.securitySchemes ?? {};
    expect(schemes.csrf).to.include({ type: 'apiKey', in: 'header', name: CSRF_HEADER });
  });

  it('puts a top-level row’s fields beside success (rendering and XBEL routes), a data row’s in data', () => {
    const output = z.strictObject({ filename: z.string(), sizeBytes: z.number().int() });
    const fields = { filename: 'a.png', sizeBytes: 12 };
    const flat = successSchema(output, 'top-level');
    expect(flat.parse(successBody(fields, 'top-level'))).to.deep.equal({ success: true, ...fields });
    expect(() => flat.parse({ success: true, data: fields })).to.throw();
    const wrapped = successSchema(output, 'data');
    expect(wrapped.parse(successBody(fields, 'data'))).to.deep.equal({ success: true, data: fields });
  });
});

/** The harness's check, against the real document: drift in either direction fails. */
describe('the e2e contract check', () => {
  const contract = new Contract(JSON.parse(openApiJson(routes, downloads)));
  const headers = { 'content-type': 'application/json', 'x-credits-remaining': '9', 'x-request-id': 'r1' };
  const respond = (body: unknown, status = 200, extra: Record<string, string> = headers) =>
    new Response(JSON.stringify(body), { status, headers: extra });
  const downCheck = {
    url: 'https://example.com/',
    testedFrom: 'India (Mumbai)',
    httpsStatus: null,
    responseTimeMs: 12,
    ipAddress: '93.184.215.14',
    timings: { dnsMs: 3, connectMs: 4, tlsMs: null, firstByteMs: null, totalMs: 12 },
    redirects: [],
    statusMatches: null,
    keywordFound: null,
    verdict: 'down',
    reason: 'TLS error: handshake failed',
  };
  const check = (res: Response, path = '/v1/down-check?url=example.com', method = 'GET') =>
    contract.check(method, `http://127.0.0.1${path}`, res);
  const violation = async (res: Response, path?: string, method?: string) => {
    const err = await check(res, path, method).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(ContractViolation);
    return (err as Error).message;
  };

  it('accepts a body as the spec shapes it, under /v1 and /api/v1', async () => {
    await check(respond({ success: true, data: downCheck }));
    await check(respond({ success: true, data: downCheck }), '/api/v1/down-check?url=example.com');
    await check(respond({ success: true, data: { callerKind: 'anonymous', limit: 10, remaining: 9 } }), '/v1/quota');
  });

  it('refuses a missing field, an extra field and a wrong type', async () => {
    const { ipAddress: _, ...withoutIp } = downCheck;
    expect(await violation(respond({ success: true, data: withoutIp }))).to.match(/ipAddress/);
    expect(await violation(respond({ success: true, data: { ...downCheck, region: 'x' } }))).to.match(/region/);
    expect(await violation(respond({ success: true, data: { ...downCheck, httpsStatus: '200' } }))).to.match(
      /httpsStatus/,
    );
  });

  it('refuses null where the spec omits the field', async () => {
    const anonymous = { callerKind: 'anonymous', plan: null, limit: 10, remaining: 9 };
    expect(await violation(respond({ success: true, data: anonymous }), '/v1/quota')).to.match(/plan/);
  });

  it('refuses a status the route does not declare, and a success on an unknown route', async () => {
    const failure = { success: false, error: { code: 'teapot', message: 'no' } };
    expect(await violation(respond(failure, 418))).to.match(/does not declare/);
    expect(await violation(respond({ success: true, data: {} }), '/v1/no-such-route')).to.match(/no route/);
  });

  it('refuses a failure outside the envelope, and a response without X-Credits-Remaining', async () => {
    expect(await violation(respond({ error: 'bad' }, 400))).to.match(/success/);
    const { 'x-credits-remaining': _, ...noCredits } = headers;
    expect(await violation(respond({ success: true, data: downCheck }, 200, noCredits))).to.match(
      /X-Credits-Remaining/,
    );
  });

  it('refuses an error code the route does not declare for that status', async () => {
    const failure = (code: string) => ({ success: false, error: { code, message: 'refused' } });
    await check(respond(failure('target_blocked'), 400));
    expect(await violation(respond(failure('teapot'), 400))).to.match(/error\/code.*allowedValues/s);
    // A code declared with another status is drift too.
    await check(respond(failure('job_not_found'), 404), '/v1/broken-links/crawl/x');
    expect(await violation(respond(failure('target_blocked'), 404), '/v1/broken-links/crawl/x')).to.match(
      /allowedValues/,
    );
  });

  it('refuses a 401 without WWW-Authenticate', async () => {
    const failure = { success: false, error: { code: 'invalid_api_key', message: 'the API key is not valid' } };
    expect(await violation(respond(failure, 401))).to.match(/WWW-Authenticate/);
    await check(respond(failure, 401, { ...headers, 'www-authenticate': 'Bearer realm="webutil"' }));
  });
});
