import { readFileSync } from 'node:fs';
import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { freePort } from '@webutil/scripts/local-stack';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';

interface Envelope {
  success: boolean;
  data?: any;
  error?: { code: string; message: string };
}

async function json(res: Response): Promise<Envelope> {
  expect(res.headers.get('content-type')).to.match(/application\/json/);
  return (await res.json()) as Envelope;
}

function expectFailure(body: Envelope, code: string): void {
  expect(body.success).to.equal(false);
  expect(body.error?.code).to.equal(code);
  expect(body.error?.message).to.be.a('string').and.not.be.empty;
  expect(body).to.have.all.keys('success', 'error');
}

/** Peak resident memory of a process, from /proc (kB). */
function peakRssKb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmHWM:'));
  return Number(line?.replace(/\D+/g, ''));
}

describe('foundation, through the REST edge', function () {
  this.timeout(60_000);
  let site: FixtureSite;
  let open: TestStack; // fixture sites on 127.0.0.0/8 allowed; short timeouts
  let strict: TestStack; // default settings: nothing private allowed

  before(async () => {
    site = await startFixtureSite();
    const env = { DOWN_CHECK_TIMEOUT_MS: '1500', PAGE_TIMEOUT_MS: '1500' };
    [open, strict] = await Promise.all([startTestStack({ allowTargets: '127.0.0.0/8', env }), startTestStack({ env })]);
  });
  after(async () => {
    await Promise.all([open?.stop(), strict?.stop()]);
    await site?.close();
  });

  describe('GET /v1/down-check', () => {
    const check = async (stack: TestStack, url: string) =>
      json(await stack.api(`/v1/down-check?url=${encodeURIComponent(url)}`));

    it('reports a reachable page with status, time, IPv4 and the fixed vantage point', async () => {
      const body = await check(open, site.url('/ok'));
      expect(body.success).to.equal(true);
      expect(body.data).to.have.all.keys(
        'url',
        'testedFrom',
        'httpsStatus',
        'responseTimeMs',
        'ipAddress',
        'timings',
        'redirects',
        'statusMatches',
        'keywordFound',
        'verdict',
        'reason',
      );
      expect(body.data.url).to.equal(site.url('/ok'));
      expect(body.data.testedFrom).to.equal('India (Mumbai)');
      expect(body.data.httpsStatus).to.equal(200);
      expect(body.data.responseTimeMs).to.be.a('number').at.least(0);
      expect(body.data.ipAddress).to.equal('127.0.0.1');
    });

    for (const status of [404, 500, 503]) {
      it(`counts ${status} as reachable (200 with httpsStatus ${status})`, async () => {
        const body = await check(open, site.url(`/status/${status}`));
        expect(body.data.httpsStatus).to.equal(status);
      });
    }

    it('follows up to 5 redirects', async () => {
      expect((await check(open, site.url('/redirect/5'))).data.httpsStatus).to.equal(200);
    });

    it('stops after 5 redirects and reports the last redirect status', async () => {
      expect((await check(open, site.url('/redirect/6'))).data.httpsStatus).to.equal(302);
      expect((await check(open, site.url('/redirect-loop'))).data.httpsStatus).to.equal(302);
    });

    it('is a 200 with a null status when the target never answers (time-out)', async () => {
      const body = await check(open, site.url('/hang'));
      expect(body.success).to.equal(true);
      expect(body.data.httpsStatus).to.equal(null);
      expect(body.data.responseTimeMs).to.be.a('number');
      expect(body.data.ipAddress).to.equal('127.0.0.1');
    });

    it('is a 200 with a null status when the connection is refused', async () => {
      const port = await freePort();
      const body = await check(open, `http://127.0.0.1:${port}/`);
      expect(body.data).to.include({ httpsStatus: null, ipAddress: '127.0.0.1' });
      expect(body.data.responseTimeMs).to.be.a('number');
    });

    it('gives null status, time and address when the name does not resolve', async () => {
      const body = await check(open, 'http://no-such-host.invalid/');
      const { timings, ...rest } = body.data;
      expect(rest).to.deep.equal({
        url: 'http://no-such-host.invalid/',
        testedFrom: 'India (Mumbai)',
        httpsStatus: null,
        responseTimeMs: null,
        ipAddress: null,
        redirects: [],
        statusMatches: null,
        keywordFound: null,
        verdict: 'down',
        reason: 'DNS name not found',
      });
      expect(timings).to.include({ dnsMs: null, connectMs: null, tlsMs: null, firstByteMs: null });
    });

    it('treats a URL without a scheme as https', async () => {
      const body = await check(open, `127.0.0.1:${site.port}/ok`);
      expect(body.data.url).to.equal(`https://127.0.0.1:${site.port}/ok`);
      expect(body.data.httpsStatus).to.equal(null); // the fixture speaks plain HTTP, so TLS fails
    });

    it('is served under /api/v1 too', async () => {
      const body = await json(await open.api(`/api/v1/down-check?url=${encodeURIComponent(site.url('/ok'))}`));
      expect(body.data.httpsStatus).to.equal(200);
    });
  });

  describe('GET /v1/link-extract', () => {
    const extract = async (stack: TestStack, url: string) =>
      stack.api(`/v1/link-extract?url=${encodeURIComponent(url)}`);

    it('extracts, types and counts the links of a page', async () => {
      const res = await extract(open, site.url('/links?n=8&external=3'));
      expect(res.status).to.equal(200);
      const body = await json(res);
      expect(body.data).to.have.all.keys('url', 'scannedAt', 'totalLinks', 'truncated', 'counts', 'links');
      expect(body.data.counts).to.deep.equal({ total: 11, internal: 8, external: 3, mailto: 0, tel: 0 });
      expect(body.data.totalLinks).to.equal(11);
      expect(body.data.truncated).to.equal(false);
      expect(new Date(body.data.scannedAt).toString()).to.not.equal('Invalid Date');
      const first = body.data.links[0];
      expect(first).to.have.all.keys('url', 'originalHref', 'text', 'rel', 'type', 'scheme');
      expect(first).to.include({
        url: site.url('/page/0'),
        originalHref: '/page/0',
        type: 'internal',
        scheme: 'http',
        rel: null,
      });
      expect(body.data.links.some((l: { rel: string | null }) => l.rel === 'nofollow')).to.equal(true);
    });

    it('caps at 5,000 links and says truncated', async () => {
      const body = await json(await extract(open, site.url('/links?n=6000')));
      expect(body.data.links).to.have.length(5000);
      expect(body.data.truncated).to.equal(true);
      expect(body.data.totalLinks).to.equal(5000);
    });

    it('reads a 50 MB page with bounded memory', async () => {
      const body = await json(await extract(open, site.url('/large?mb=50')));
      expect(body.data.truncated).to.equal(true);
      expect(body.data.links).to.have.length(5000);
      site.route('/huge-no-links', (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/html' });
        const line = `<p>${'x'.repeat(1020)}</p>\n`;
        let sent = 0;
        const pump = () => {
          while (sent < 50 * 1024) {
            sent++;
            if (!res.write(line)) return res.once('drain', pump);
          }
          res.end('<a href="/after-50mb">late</a>');
        };
        res.on('error', () => undefined);
        pump();
      });
      const noLinks = await json(await extract(open, site.url('/huge-no-links')));
      expect(noLinks.success).to.equal(true);
      expect(noLinks.data.truncated).to.equal(true); // cut at MAX_PAGE_BYTES (20 MB)
      expect(noLinks.data.links).to.have.length(0);
      const pid = open.pid('crawl');
      expect(pid).to.be.a('number');
      expect(peakRssKb(pid!)).to.be.below(400 * 1024);
    });

    it('decodes a gzip page', async () => {
      const body = await json(await extract(open, site.url('/gzip')));
      expect(body.data.counts.total).to.equal(3);
    });

    const failures: [string, string, string][] = [
      ['a non-HTML response', '/text', 'not_html'],
      ['an error status', '/status/404', 'target_http_error'],
      ['a redirect loop', '/redirect-loop', 'target_unreachable'],
      ['a response that never ends', '/never-ends', 'target_unreachable'],
      ['a page that never answers', '/hang', 'target_unreachable'],
    ];
    for (const [what, path, code] of failures) {
      it(`answers ${what} with 400 ${code}`, async () => {
        const res = await extract(open, site.url(path));
        expect(res.status).to.equal(400);
        expectFailure(await json(res), code);
      });
    }
  });

  describe('bad input', () => {
    for (const route of ['/v1/down-check', '/v1/link-extract']) {
      it(`${route}: missing url is 400 invalid_request`, async () => {
        const res = await open.api(route);
        expect(res.status).to.equal(400);
        const body = await json(res);
        expectFailure(body, 'invalid_request');
        expect(body.error?.message).to.equal('url is required');
      });

      for (const url of [
        'javascript:alert(1)',
        'file:///etc/passwd',
        'data:text/html,<a href=x>',
        'ftp://example.com/x',
      ]) {
        it(`${route}: ${url.split(':')[0]}: URL is 400 invalid_url`, async () => {
          const res = await open.api(`${route}?url=${encodeURIComponent(url)}`);
          expect(res.status).to.equal(400);
          expectFailure(await json(res), 'invalid_url');
        });
      }
    }

    it('malformed JSON is 400 invalid_json', async () => {
      const res = await open.api('/v1/broken-links', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"url": ',
      });
      expect(res.status).to.equal(400);
      expectFailure(await json(res), 'invalid_json');
    });

    it('an oversized JSON body is 413', async () => {
      const res = await open.api('/v1/broken-links', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ url: 'x'.repeat(100_000) }),
      });
      expect(res.status).to.equal(413);
      expectFailure(await json(res), 'payload_too_large');
    });

    it('an unknown route is 404 in the envelope, with a request id', async () => {
      const res = await open.api('/v1/no-such-route');
      expect(res.status).to.equal(404);
      expect(res.headers.get('x-request-id')).to.match(/^[0-9a-f-]{36}$/);
      expectFailure(await json(res), 'not_found');
    });

    it('a wrong method is 405 in the envelope', async () => {
      const res = await open.api('/v1/down-check', { method: 'DELETE' });
      expect(res.status).to.equal(405);
      expectFailure(await json(res), 'method_not_allowed');
    });
  });

  describe('blocked targets (default settings)', () => {
    const targets = (port: number) => [
      `http://127.0.0.1:${port}/ok`,
      `http://localhost:${port}/ok`,
      `http://[::1]:${port}/ok`,
      `http://0x7f000001:${port}/ok`,
      `http://[::ffff:127.0.0.1]:${port}/ok`,
      // IPv4-compatible (::/96): the URL parser writes it [::7f00:1].
      `http://[::127.0.0.1]:${port}/ok`,
      'http://10.0.0.1/',
      'http://169.254.169.254/latest/meta-data/',
    ];
    for (const route of ['/v1/down-check', '/v1/link-extract']) {
      it(`${route} refuses loopback, private, link-local, mapped and IPv4-compatible addresses: 400`, async () => {
        const before = site.requests.length;
        for (const url of targets(site.port)) {
          const res = await strict.api(`${route}?url=${encodeURIComponent(url)}`);
          expect(res.status, url).to.equal(400);
          expectFailure(await json(res), 'target_blocked');
        }
        expect(site.requests.length, 'no request may reach the fixture').to.equal(before);
      });

      it(`${route} refuses a redirect into a blocked address`, async () => {
        for (const target of [
          'http://169.254.169.254/latest/meta-data/',
          `http://[::1]:${site.port}/ok`,
          'http://10.0.0.1/',
        ]) {
          const res = await open.api(
            `${route}?url=${encodeURIComponent(site.url(`/redirect-to?url=${encodeURIComponent(target)}`))}`,
          );
          expect(res.status, target).to.equal(400);
          expectFailure(await json(res), 'target_blocked');
        }
      });
    }
  });

  describe('faults', () => {
    it('a killed service gives 503 in the envelope, then recovers when it is back', async () => {
      const url = `/v1/down-check?url=${encodeURIComponent(site.url('/ok'))}`;
      await open.kill('meta-scan');
      const down = await open.api(url);
      expect(down.status).to.equal(503);
      expectFailure(await json(down), 'service_unavailable');
      await open.start('meta-scan');
      const up = await open.api(url);
      expect(up.status).to.equal(200);
      expect((await json(up)).data.httpsStatus).to.equal(200);
    });

    it('SIGTERM lets the in-flight call finish before the service exits', async () => {
      const pending = open.api(`/v1/down-check?url=${encodeURIComponent(site.url('/slow?ms=800'))}`);
      await new Promise((r) => setTimeout(r, 300));
      process.kill(open.pid('meta-scan')!, 'SIGTERM');
      const res = await pending;
      expect(res.status).to.equal(200);
      expect((await json(res)).data.httpsStatus).to.equal(200);
      await open.start('meta-scan');
    });

    it('carries the request id from the edge into the service logs', async () => {
      const id = `trace-${Date.now()}`;
      const res = await open.api(`/v1/down-check?url=${encodeURIComponent(site.url('/ok'))}`, {
        headers: { 'x-request-id': id },
      });
      expect(res.headers.get('x-request-id')).to.equal(id);
      // Each process's log lines reach the harness over their own pipe: wait for both.
      const logged = (name: string) => open.logs.some((l) => l.startsWith(`[${name}]`) && l.includes(id));
      for (let i = 0; i < 50 && !(logged('edge') && logged('meta-scan')); i++)
        await new Promise((r) => setTimeout(r, 100));
      expect(logged('edge'), 'edge log line').to.equal(true);
      expect(logged('meta-scan'), 'meta-scan log line').to.equal(true);
    });
  });
});
