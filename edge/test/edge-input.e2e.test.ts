import { readFileSync } from 'node:fs';
import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { routes } from '../src/routes.js';
import { Browser, creditsHeader, expectFailure, json, quota } from './billing-helpers.js';

/** Bad requests at the edge: each is a clear 4xx in the envelope that holds nothing. */
describe('the edge refuses bad requests before anything is held', function () {
  this.timeout(60_000);
  let site: FixtureSite;
  let stack: TestStack;

  before(async () => {
    site = await startFixtureSite();
    // A header limit other than Node's 16 KB default, so the 431 message is seen to state the configured one.
    stack = await startTestStack({ allowTargets: '127.0.0.0/8', envFor: { edge: { MAX_HEADER_BYTES: '8192' } } });
  });
  after(async () => {
    await stack?.stop();
    await site?.close();
  });

  /** Every route of the table that takes a URL to fetch. */
  const urlRoutes = routes.filter((spec) => 'url' in spec.input.shape);
  const send = (method: string, path: string, url: string, init: RequestInit = {}) =>
    method === 'GET'
      ? stack.api(`/v1${path}?url=${encodeURIComponent(url)}`, init)
      : stack.api(`/v1${path}`, {
          ...init,
          method,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ url }),
        });

  it('knows the URL-taking routes', () => {
    expect(urlRoutes.map((spec) => spec.path)).to.have.members([
      '/down-check',
      '/meta-scan',
      '/link-extract',
      '/screenshot',
      '/url-to-pdf',
      '/broken-links',
      '/broken-links/crawl',
      '/link-extract/crawl',
      '/site-audit',
    ]);
  });

  for (const spec of urlRoutes) {
    it(`${spec.method} /v1${spec.path}: a host that is no host name is 400 invalid_url, holding nothing`, async () => {
      const before = (await quota(stack)).remaining;
      for (const url of ['ht!tp://%%%', 'https://exa!mple.com/', 'http://*.example.com/', 'http://-x-.example/']) {
        const res = await send(spec.method, spec.path, url);
        const body = await expectFailure(res, 400, 'invalid_url');
        expect(body.error?.message, url).to.match(/not a valid (host name|URL)/);
        expect(creditsHeader(res)).to.equal(before);
      }
      expect((await quota(stack)).remaining).to.equal(before);
      expect(site.requests).to.deep.equal([]);
    });
  }

  describe('a body that is not declared JSON', () => {
    for (const type of ['application/x-www-form-urlencoded', 'text/plain']) {
      it(`(${type}, as curl -d sends) is 415 naming application/json, holding no credit`, async () => {
        const before = (await quota(stack)).remaining;
        const res = await stack.api('/v1/broken-links', {
          method: 'POST',
          headers: { 'content-type': type },
          body: JSON.stringify({ url: site.url('/ok') }),
        });
        const body = await expectFailure(res, 415, 'unsupported_media_type');
        expect(body.error?.message).to.include('application/json');
        expect(creditsHeader(res)).to.equal(before);
        expect(site.requests).to.deep.equal([]);
      });
    }

    it('a JSON body with a JSON type (application/json or +json) is served', async () => {
      for (const type of ['application/json', 'application/json; charset=utf-8', 'application/vnd.api+json']) {
        const res = await stack.api('/v1/link-extract/crawl', {
          method: 'POST',
          headers: { 'content-type': type },
          body: JSON.stringify({ url: site.url('/ok') }),
        });
        expect(res.status, type).to.equal(202);
      }
    });
  });

  describe('an oversized request line or header block', () => {
    const raw = (path: string, headers: Record<string, string> = {}) => fetch(`${stack.edgeUrl}${path}`, { headers });

    for (const [what, request] of [
      ['query', () => raw(`/v1/down-check?url=${'a'.repeat(20_000)}.example`)],
      ['header block', () => raw('/v1/quota', { cookie: `wu_session=${'x'.repeat(20_000)}` })],
    ] as const) {
      it(`(${what}) is 431 in the envelope, with X-Request-Id`, async () => {
        const res = await request();
        expect(res.status).to.equal(431);
        expect(res.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
        expect(res.headers.get('x-credits-remaining')).to.equal('0');
        const body = await json(res);
        expect(body).to.deep.equal({
          success: false,
          error: { code: 'headers_too_large', message: 'the request line and headers exceed 8 KB' },
        });
      });
    }
  });

  it('POST /v1/challenge with a bad payload is 401 with WWW-Authenticate, like every 401', async () => {
    const browser = new Browser(stack, '192.0.2.77');
    for (const payload of [Buffer.from('{"number":1}').toString('base64'), 'not base64 at all']) {
      const res = await browser.post('/v1/challenge', { payload });
      await expectFailure(res, 401, 'challenge_failed');
      expect(res.headers.get('www-authenticate')).to.match(/^Bearer realm="webutil"/);
    }
    expect(browser.cookies.has('wu_clearance')).to.equal(false);
  });

  describe('GET /v1/openapi.json', () => {
    const committed = JSON.parse(readFileSync(new URL('../../docs/openapi.json', import.meta.url), 'utf8'));

    it('serves docs/openapi.json, free and without a credential, under /v1 and /api/v1', async () => {
      for (const path of ['/v1/openapi.json', '/api/v1/openapi.json']) {
        const res = await stack.api(path, { anonymous: true });
        expect(res.status).to.equal(200);
        expect(await res.json()).to.deep.equal(committed);
        expect(res.headers.get('x-request-id')).to.be.a('string');
        expect(creditsHeader(res)).to.equal(10);
      }
    });

    it('does not count against the anonymous rate (30 a minute)', async () => {
      const browser = new Browser(stack, '192.0.2.78');
      for (let i = 0; i < 40; i++) expect((await browser.fetch('/v1/openapi.json')).status).to.equal(200);
      expect((await browser.fetch('/v1/quota')).status).to.equal(200);
    });
  });
});
