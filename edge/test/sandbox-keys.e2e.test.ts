import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { Webhook } from 'standardwebhooks';
import { KEY_OPERATIONS, routes } from '../src/routes.js';
import { account, Browser, creditsHeader, eventually, expectFailure, json } from './billing-helpers.js';

const PASSWORD = 'a long enough password';
const XBEL =
  '<?xml version="1.0"?><xbel version="1.0"><bookmark href="https://example.com/"><title>E</title></bookmark></xbel>';
const HTML = '<!DOCTYPE NETSCAPE-Bookmark-file-1><DL><p><DT><A HREF="https://example.com/">E</A></DL>';
/** The services a sandbox call never reaches; billing stays up (it knows the key). */
const SERVICES = ['crawl', 'render', 'meta-scan', 'tls-scan', 'bookmark'];

type Operation = (typeof KEY_OPERATIONS)[number];
interface Call {
  path: string;
  init?: RequestInit;
}

const upload = (file: string, type: string, name: string, fields: Record<string, string> = {}): RequestInit => {
  const form = new FormData();
  form.set('file', new Blob([file], { type }), name);
  for (const [field, value] of Object.entries(fields)) form.set(field, value);
  return { method: 'POST', body: form };
};
const post = (body: unknown): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});

/**
 * Sandbox keys (docs/decisions/0207-sandbox-keys.md), through the REST edge: a key made with mode
 * test answers every credit-spending route with a sample in the route's contract shape (every
 * stack.api() answer is checked against the OpenAPI document), spends nothing, fetches nothing, and
 * still answers with the services stopped; its jobs, exports and files are real downloads.
 */
describe('sandbox (test) keys', function () {
  this.timeout(120_000);
  let site: FixtureSite;
  let stack: TestStack;
  let browser: Browser;
  let liveKey: string;
  let testKey: string;
  /** The sandbox's webhook signing secret, and the deliveries the fixture site's /hook received. */
  let secret: string;
  const hooks: { body: string; headers: Record<string, string> }[] = [];
  /** What the fixture site was asked for, webhook deliveries aside: a fetch of a target. */
  const fetched = () => site.requests.filter((r) => r.path !== '/hook');
  const target = () => site.url('/ok');
  const enc = encodeURIComponent;

  /** One valid call of each credit-spending route; a route the table gains without one fails the test. */
  const CALLS: Record<Operation, () => Call> = {
    'down-check': () => ({ path: `/v1/down-check?url=${enc(target())}` }),
    'meta-scan': () => ({ path: `/v1/meta-scan?url=${enc(target())}` }),
    'ssl-scan': () => ({ path: '/v1/ssl-scan?domain=example.com' }),
    'link-extract': () => ({ path: `/v1/link-extract?url=${enc(target())}` }),
    screenshot: () => ({ path: '/v1/screenshot', init: post({ url: target() }) }),
    'url-to-pdf': () => ({ path: '/v1/url-to-pdf', init: post({ url: target() }) }),
    'broken-links': () => ({ path: '/v1/broken-links', init: post({ url: target() }) }),
    'broken-links-crawl': () => ({
      path: '/v1/broken-links/crawl',
      init: post({ url: target(), webhookUrl: site.url('/hook') }),
    }),
    'link-extract-crawl': () => ({ path: '/v1/link-extract/crawl', init: post({ url: target() }) }),
    'site-audit': () => ({ path: '/v1/site-audit', init: post({ url: target() }) }),
    // The sandbox's sample audit, printed as the sample PDF.
    'site-audit-report-pdf': () => ({ path: '/v1/site-audit/sandbox-site-audit/report.pdf', init: post({}) }),
    'xbel-decrypt': () => ({ path: '/v1/xbel-decrypt', init: upload(XBEL, 'application/xml', 'b.xbel', { key: 'k' }) }),
    'xbel-to-html': () => ({ path: '/v1/xbel-to-html', init: upload(XBEL, 'application/xml', 'b.xbel') }),
    'html-to-xbel': () => ({ path: '/v1/html-to-xbel', init: upload(HTML, 'text/html', 'b.html') }),
    'bookmarks-check': () => ({ path: '/v1/bookmarks/check', init: upload(XBEL, 'application/xml', 'b.xbel') }),
  };

  const callOf = (operation: string): Call => {
    const make = (CALLS as Record<string, () => Call>)[operation];
    if (!make) throw new Error(`the sandbox test has no call of ${operation}: add one, and a sample if it needs one`);
    return make();
  };

  /** The path of a downloadUrl (absolute, on the edge's public base). */
  const pathOf = (url: string) => new URL(url).pathname;

  async function balance(): Promise<number> {
    const res = await stack.api('/v1/quota', { apiKey: liveKey });
    return (await json(res)).data.remaining as number;
  }

  /** Calls every credit-spending route with the test key and follows each answer to its job, export or file. */
  async function callEverySpendingRoute(): Promise<void> {
    const spending = routes.filter((spec) => spec.credits > 0);
    expect(spending.map((spec) => spec.operation).sort()).to.deep.equal([...KEY_OPERATIONS].sort());
    const before = await balance();
    for (const spec of spending) {
      const { path, init } = callOf(spec.operation);
      const res = await stack.api(path, { ...init, apiKey: testKey });
      const body = await json(res);
      expect(res.status, `${spec.operation}: ${JSON.stringify(body)}`).to.equal(spec.status ?? 200);
      // The account's balance, untouched.
      expect(creditsHeader(res), spec.operation).to.equal(before);
      await followUp(spec.operation, body);
    }
    expect(await balance()).to.equal(before);
  }

  async function followUp(operation: string, body: Record<string, any>): Promise<void> {
    const as = { apiKey: testKey };
    if (body.data?.jobId) {
      const polled = `${callOf(operation).path}/${body.data.jobId}`;
      const poll = await json(await stack.api(polled, as));
      expect(poll.success, `${polled}: ${JSON.stringify(poll)}`).to.equal(true);
      expect(poll.data.status, operation).to.equal('done');
      if (operation === 'broken-links-crawl') {
        const csv = await stack.api(`${polled}?format=csv`, as);
        expect(csv.status).to.equal(200);
        expect(csv.headers.get('content-type')).to.match(/^text\/csv/);
        expect(await csv.text()).to.include('/old-page');
      }
      if (operation === 'bookmarks-check') {
        const cleaned = await stack.api(`${polled}/download?drop=broken&format=html`, as);
        expect(cleaned.status).to.equal(200);
        expect(await cleaned.text()).to.include('NETSCAPE-Bookmark-file-1');
      }
    }
    if (operation === 'screenshot' || operation === 'url-to-pdf') {
      const file = await stack.api(`/api/uploads/${body.filename}`, { anonymous: true });
      const bytes = Buffer.from(await file.arrayBuffer());
      expect(file.status).to.equal(200);
      expect(bytes.length).to.equal(body.sizeBytes);
      const magic = operation === 'screenshot' ? '\x89PNG' : '%PDF';
      expect(bytes.subarray(0, 4).toString('latin1')).to.equal(magic);
      // The same file in one round trip (Accept names its type).
      const type = operation === 'screenshot' ? 'image/png' : 'application/pdf';
      const { path, init } = callOf(operation);
      const direct = await stack.api(path, { ...init, apiKey: testKey, headers: { ...init?.headers, accept: type } });
      expect(direct.headers.get('content-type')).to.equal(type);
      expect(Buffer.from(await direct.arrayBuffer()).equals(bytes)).to.equal(true);
    }
    if (body.downloadUrl) {
      const file = await stack.api(pathOf(body.downloadUrl), { anonymous: true });
      expect(file.status, operation).to.equal(200);
      expect(await file.text()).to.match(operation === 'xbel-to-html' ? /NETSCAPE-Bookmark-file-1/ : /<xbel/);
    }
  }

  before(async () => {
    site = await startFixtureSite();
    site.route('/hook', (req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => {
        body += chunk;
      });
      req.on('end', () => {
        hooks.push({ body, headers: req.headers as Record<string, string> });
        res.writeHead(204).end();
      });
    });
    stack = await startTestStack({
      allowTargets: '127.0.0.0/8',
      envFor: { edge: { TRUSTED_PROXIES: '127.0.0.1/32', WEBHOOK_POLL_MS: '200', WEBHOOK_TICK_MS: '100' } },
    });
    const owner = await account(stack, 'STARTER', '--password', PASSWORD, '--credits', '100', '--rate-limit', '100000');
    liveKey = owner.apiKey;
    browser = new Browser(stack, '192.0.2.70');
    expect((await browser.signIn(owner.email, PASSWORD)).status).to.equal(200);
    const res = await browser.post('/v1/keys', { name: 'integration', mode: 'test' });
    const created = await json(res);
    expect(res.status, JSON.stringify(created)).to.equal(201);
    testKey = created.data.key;
    // The sandbox has webhook books of its own: its secret is made with a test key (decision 0281).
    const rotated = await json(await stack.api('/v1/webhooks/secret', { ...post({}), apiKey: testKey }));
    secret = rotated.data.secret;
  });
  after(async () => {
    await stack?.stop();
    await site?.close();
  });

  it('are made with mode test: a wu_test_ key, listed with its mode beside live keys', async () => {
    expect(testKey).to.match(/^wu_test_[A-Za-z0-9_-]{32}$/);
    const keys = (await json(await browser.fetch('/v1/keys'))).data.keys as Record<string, unknown>[];
    expect(keys.map((k) => [k.mode, String(k.prefix).slice(0, 8)])).to.deep.equal([
      ['live', 'wu_live_'],
      ['test', 'wu_test_'],
    ]);
    // A test key spends nothing, so it takes no credit limit; an unknown mode is refused.
    await expectFailure(
      await browser.post('/v1/keys', { name: 'x', mode: 'test', creditLimit: 5 }),
      400,
      'invalid_credit_limit',
    );
    await expectFailure(await browser.post('/v1/keys', { name: 'x', mode: 'staging' }), 400, 'invalid_request');
  });

  it('answer every credit-spending route with its sample, spending nothing and fetching nothing', async () => {
    await callEverySpendingRoute();
    expect(fetched(), JSON.stringify(site.requests)).to.deep.equal([]);
    const usage = await json(await browser.fetch('/v1/account/usage'));
    expect(usage.data.usage).to.deep.equal([]);
    const listed = (await json(await browser.fetch('/v1/keys'))).data.keys as Record<string, unknown>[];
    expect(listed.find((k) => k.mode === 'test')).to.include({ creditsSpentThisCycle: 0 });
  });

  it('validate input as live keys do, keep their allowed operations and expiry, and replay nothing', async () => {
    const refusals = async (apiKey: string) => {
      const missing = await json(await stack.api('/v1/down-check', { apiKey }));
      const bad = await json(await stack.api('/v1/screenshot', { ...post({ url: 'not a url' }), apiKey }));
      return [missing.error?.code, bad.error?.code];
    };
    const live = await refusals(liveKey);
    expect(live.every(Boolean)).to.equal(true);
    expect(await refusals(testKey)).to.deep.equal(live);
    const narrow = await json(
      await browser.post('/v1/keys', { name: 'narrow', mode: 'test', allowedOperations: ['down-check'] }),
    );
    const apiKey = narrow.data.key as string;
    expect((await stack.api(callOf('down-check').path, { apiKey })).status).to.equal(200);
    await expectFailure(await stack.api(callOf('meta-scan').path, { apiKey }), 403, 'operation_not_allowed');
    // An expiry holds too.
    const expires = Date.now() + 5_000;
    const expiresAt = new Date(expires).toISOString();
    const brief = await json(await browser.post('/v1/keys', { name: 'brief', mode: 'test', expiresAt }));
    expect((await stack.api(callOf('down-check').path, { apiKey: brief.data.key })).status).to.equal(200);
    await new Promise((resolve) => setTimeout(resolve, expires + 500 - Date.now()));
    await expectFailure(await stack.api(callOf('down-check').path, { apiKey: brief.data.key }), 401, 'key_expired');
    // Every sandbox answer is the same: an Idempotency-Key is taken, and nothing is kept to replay.
    for (let i = 0; i < 2; i++) {
      const res = await stack.api('/v1/broken-links', {
        ...post({ url: target() }),
        headers: { 'content-type': 'application/json', 'idempotency-key': 'sandbox-retry' },
        apiKey: testKey,
      });
      expect(res.status).to.equal(200);
      expect(res.headers.get('idempotent-replayed')).to.equal(null);
    }
  });

  it('answer with every service they would call stopped (a live key then gets 503)', async () => {
    for (const name of SERVICES) await stack.kill(name);
    await expectFailure(await stack.api(callOf('down-check').path, { apiKey: liveKey }), 503, 'service_unavailable');
    await callEverySpendingRoute();
    expect(fetched()).to.deep.equal([]);
  });

  it('deliver a sandbox start’s webhook: the sample job’s envelope, signed with the sandbox’s secret', async () => {
    const delivered = await eventually(async () => {
      expect(hooks).to.have.length.of.at.least(1);
      return hooks[0]!;
    });
    const verified = new Webhook(secret).verify(delivered.body, delivered.headers);
    const jobId = delivered.headers['x-webutil-job-id'];
    expect(jobId).to.match(/^sandbox-/);
    const polled = await json(await stack.api(`/v1/broken-links/crawl/${jobId}`, { apiKey: testKey }));
    expect(verified).to.deep.equal(polled);
  });
});
