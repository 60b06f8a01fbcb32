import { getEventListeners } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { startFixtureDns } from '@webutil/scripts/fixture-dns';
import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { expect } from 'chai';
import { AddressPolicy } from '../src/address-policy.js';
import { lookupVia } from '../src/resolve-target.js';
import { OutboundError, type OutboundFailureKind, SafeHttp } from '../src/safe-http.js';

/** Awaits a promise that must fail with an OutboundError of the given kind (and code). */
async function expectOutbound(
  promise: Promise<unknown>,
  kind: OutboundFailureKind,
  code?: string,
): Promise<OutboundError> {
  let result: unknown;
  try {
    result = await promise;
  } catch (err) {
    expect(err, String(err)).to.be.instanceOf(OutboundError);
    const e = err as OutboundError;
    expect(e.kind, `${e.kind} (${e.code}): ${e.message}`).to.equal(kind);
    if (code) expect(e.code).to.equal(code);
    return e;
  }
  expect.fail(`expected an OutboundError of kind ${kind}, got a result: ${JSON.stringify(result, ['status', 'url'])}`);
}

async function elapsed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const start = performance.now();
  const value = await fn();
  return [value, performance.now() - start];
}

/** A port on 127.0.0.1 that nothing listens on: bind, read the port, close. */
async function refusedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen({ host: '127.0.0.1', port: 0 }, resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('SafeHttp', () => {
  let site: FixtureSite;

  before(async () => {
    site = await startFixtureSite();
  });
  after(async () => {
    await site.close();
  });
  beforeEach(() => {
    site.requests.length = 0;
  });

  describe('with the default policy (nothing internal allowed)', () => {
    let client: SafeHttp;
    before(() => {
      client = new SafeHttp({ policy: new AddressPolicy([]) });
    });
    after(async () => {
      await client.close();
    });

    const loopbackForms: [string, (port: number) => string][] = [
      ['the fixture origin (127.0.0.1)', (port) => `http://127.0.0.1:${port}/ok`],
      ['a name resolving to loopback (localhost)', (port) => `http://localhost:${port}/ok`],
      ['IPv6 loopback [::1]', (port) => `http://[::1]:${port}/ok`],
      ['hex IPv4 0x7f000001', (port) => `http://0x7f000001:${port}/ok`],
      ['IPv4-mapped IPv6 [::ffff:127.0.0.1]', (port) => `http://[::ffff:127.0.0.1]:${port}/ok`],
    ];
    for (const [label, make] of loopbackForms) {
      it(`blocks ${label} and nothing reaches the site`, async () => {
        const err = await expectOutbound(client.fetch(make(site.port)), 'blocked', 'ETARGETBLOCKED');
        expect(err.message).to.match(/is a private or reserved address|resolves to a private or reserved address/);
        // A name's resolved address is never echoed: it would map the inside of our network.
        if (label.includes('localhost')) expect(err.message).to.not.match(/127\.0\.0\.1|::1/);
        expect(site.requests).to.deep.equal([]);
      });
    }

    it('blocks a private address before connecting', async () => {
      const [, ms] = await elapsed(() => expectOutbound(client.fetch('http://10.0.0.1/'), 'blocked', 'ETARGETBLOCKED'));
      expect(ms).to.be.lessThan(5_000);
    });

    it('blocks the cloud metadata address before connecting', async () => {
      await expectOutbound(client.fetch('http://169.254.169.254/latest/meta-data/'), 'blocked', 'ETARGETBLOCKED');
    });

    it('refuses non-web schemes', async () => {
      await expectOutbound(client.fetch('file:///etc/passwd'), 'blocked', 'EUNSUPPORTEDSCHEME');
    });
  });

  describe('with 127.0.0.1/32 allowed', () => {
    let client: SafeHttp;
    before(() => {
      client = new SafeHttp({ policy: new AddressPolicy(['127.0.0.1/32']) });
    });
    after(async () => {
      await client.close();
    });

    it('fetches a 200 page', async () => {
      const res = await client.fetch(site.url('/ok'));
      expect(res.status).to.equal(200);
      expect(res.statusText).to.equal('OK');
      expect(res.url).to.equal(site.url('/ok'));
      expect(res.redirects).to.deep.equal([]);
      expect(res.redirectLimitReached).to.equal(false);
      expect(res.headers['content-type']).to.match(/^text\/html/);
      expect(await res.text()).to.include('ok');
      expect(res.truncated).to.equal(false);
      expect(site.requests).to.deep.equal([{ method: 'GET', path: '/ok' }]);
    });

    it('sends its user agent and HEAD when asked', async () => {
      let seen: http.IncomingHttpHeaders = {};
      site.route('/echo-headers', (req, res) => {
        seen = req.headers;
        res.end();
      });
      const res = await client.fetch(site.url('/echo-headers'), { method: 'HEAD' });
      await res.dump();
      expect(res.status).to.equal(200);
      expect(seen['user-agent']).to.match(/WebUtilBot/);
      expect(site.requests).to.deep.equal([{ method: 'HEAD', path: '/echo-headers' }]);
    });

    it('returns 4xx and 5xx as responses, not errors', async () => {
      const res = await client.fetch(site.url('/status/503'));
      expect(res.status).to.equal(503);
      await res.dump();
      const missing = await client.fetch(site.url('/nope'));
      expect(missing.status).to.equal(404);
      await missing.dump();
    });

    it('follows a chain of 3 redirects to the 200', async () => {
      const res = await client.fetch(site.url('/redirect/3'));
      expect(res.status).to.equal(200);
      expect(res.url).to.equal(site.url('/redirect/0'));
      expect(res.redirects).to.deep.equal([
        { url: site.url('/redirect/3'), status: 302 },
        { url: site.url('/redirect/2'), status: 302 },
        { url: site.url('/redirect/1'), status: 302 },
      ]);
      expect(res.redirectLimitReached).to.equal(false);
      await res.dump();
    });

    it('stops at maxRedirects and returns the last 3xx', async () => {
      const res = await client.fetch(site.url('/redirect/7'), { maxRedirects: 5 });
      expect(res.status).to.equal(302);
      expect(res.redirectLimitReached).to.equal(true);
      expect(res.redirects).to.have.length(5);
      expect(res.url).to.equal(site.url('/redirect/2'));
      expect(res.headers.location).to.equal('/redirect/1');
      await res.dump();
      expect(site.requests).to.have.length(6);
    });

    it('terminates a redirect loop', async () => {
      const res = await client.fetch(site.url('/redirect-loop'), { maxRedirects: 5 });
      expect(res.status).to.equal(302);
      expect(res.redirectLimitReached).to.equal(true);
      expect(res.redirects).to.have.length(5);
      await res.dump();
      expect(site.requests).to.have.length(6);
    });

    it('with maxRedirects 0 returns the first 3xx', async () => {
      const res = await client.fetch(site.url('/redirect/1'), { maxRedirects: 0 });
      expect(res.status).to.equal(302);
      expect(res.redirectLimitReached).to.equal(true);
      expect(res.redirects).to.deep.equal([]);
      await res.dump();
    });

    it('blocks a redirect to loopback outside the allow-list (127.0.0.2)', async () => {
      const target = `http://127.0.0.2:${site.port}/ok`;
      const err = await expectOutbound(
        client.fetch(site.url(`/redirect-to?url=${encodeURIComponent(target)}`)),
        'blocked',
        'ETARGETBLOCKED',
      );
      expect(err.url).to.equal(target);
      expect(site.requests.map((r) => r.path)).to.deep.equal([`/redirect-to?url=${encodeURIComponent(target)}`]);
    });

    it('blocks a redirect to the cloud metadata address', async () => {
      const err = await expectOutbound(
        client.fetch(site.url(`/redirect-to?url=${encodeURIComponent('http://169.254.169.254/')}&status=301`)),
        'blocked',
        'ETARGETBLOCKED',
      );
      expect(err.url).to.equal('http://169.254.169.254/');
    });

    it('blocks a redirect to a file: URL', async () => {
      await expectOutbound(
        client.fetch(site.url(`/redirect-to?url=${encodeURIComponent('file:///etc/passwd')}`)),
        'blocked',
        'EUNSUPPORTEDSCHEME',
      );
    });

    it('keeps one listener on a caller signal however many fetches share it, failed ones included', async () => {
      // A crawl hands one long-lived signal to thousands of fetches: a listener left per fetch adds up.
      const scan = new AbortController();
      const failures: [string, OutboundFailureKind][] = [
        [site.url(`/redirect-to?url=${encodeURIComponent('file:///etc/passwd')}`), 'blocked'],
        [site.url(`/redirect-to?url=${encodeURIComponent('http://169.254.169.254/')}`), 'blocked'],
        [site.url('/redirect-to?url=http%3A%2F%2F%5B%3A%3A1'), 'protocol'],
        [`http://127.0.0.1:${await refusedPort()}/`, 'connect'],
      ];
      for (const [url, kind] of failures) await expectOutbound(client.fetch(url, { signal: scan.signal }), kind);
      for (let i = 0; i < 3; i++) await (await client.fetch(site.url('/ok'), { signal: scan.signal })).dump();
      expect(getEventListeners(scan.signal, 'abort')).to.have.length(1);
      // That one listener still cancels what is in flight when the caller aborts.
      setTimeout(() => scan.abort(), 100);
      await expectOutbound(client.fetch(site.url('/hang'), { signal: scan.signal }), 'cancelled');
    });

    it('times out promptly when headers never come', async () => {
      const [err, ms] = await elapsed(() =>
        expectOutbound(client.fetch(site.url('/hang'), { timeoutMs: 300 }), 'timeout'),
      );
      expect(err.url).to.equal(site.url('/hang'));
      expect(ms).to.be.lessThan(5_000);
    });

    it('times out promptly while reading a body that never ends', async () => {
      const start = performance.now();
      const res = await client.fetch(site.url('/never-ends'), { timeoutMs: 500 });
      expect(res.status).to.equal(200);
      await expectOutbound(res.text(), 'timeout');
      expect(performance.now() - start).to.be.lessThan(5_000);
    });

    it('times out promptly while reading a gzip body that stalls', async function () {
      this.timeout(10_000);
      site.route('/gzip-stall', (_req, res) => {
        const full = zlib.gzipSync(Buffer.from(`<html><body>${'<p>x</p>'.repeat(2000)}</body></html>`));
        res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
        res.write(full.subarray(0, Math.floor(full.length / 2))); // then nothing more, ever
      });
      const start = performance.now();
      const res = await client.fetch(site.url('/gzip-stall'), { timeoutMs: 500 });
      await expectOutbound(res.text(), 'timeout');
      expect(performance.now() - start).to.be.lessThan(5_000);
    });

    it('cuts a 50 MB body at maxBodyBytes without holding it in memory', async () => {
      const warm = await client.fetch(site.url('/large?mb=1'));
      await warm.text();
      const before = process.memoryUsage().rss;
      const res = await client.fetch(site.url('/large?mb=50'), { maxBodyBytes: 1024 * 1024 });
      const text = await res.text();
      const grown = process.memoryUsage().rss - before;
      expect(res.truncated).to.equal(true);
      expect(Buffer.byteLength(text)).to.equal(1024 * 1024);
      expect(text.startsWith('<html><body>\n<p><a href="/p/0">link 0</a></p>')).to.equal(true);
      expect(grown, `RSS grew by ${Math.round(grown / 1024 / 1024)} MB`).to.be.lessThan(25 * 1024 * 1024);
    });

    it('reads a body just under maxBodyBytes without marking it truncated', async () => {
      const res = await client.fetch(site.url('/large?mb=1'), { maxBodyBytes: 1024 * 1024 });
      const text = await res.text();
      expect(Buffer.byteLength(text)).to.equal(1024 * 1024);
      expect(text.endsWith('</body></html>\n')).to.equal(true);
      expect(res.truncated).to.equal(false);
    });

    it('lets a caller stop reading early and dump the rest', async () => {
      for (const path of ['/large?mb=5', '/gzip', '/never-ends']) {
        const res = await client.fetch(site.url(path), { timeoutMs: 5_000 });
        for await (const chunk of res.body) {
          expect(chunk.length).to.be.greaterThan(0);
          break;
        }
        await res.dump();
        expect(res.truncated).to.equal(false);
      }
      await new Promise((resolve) => setTimeout(resolve, 100)); // an uncaught error would surface here
    });

    it('dumps an unread body, plain or gzip, without an uncaught error', async () => {
      for (const path of ['/large?mb=5', '/gzip', '/never-ends', '/hang-body']) {
        if (path === '/hang-body') {
          site.route(path, (_req, res) => {
            res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
            res.flushHeaders();
          });
        }
        const res = await client.fetch(site.url(path), { timeoutMs: 5_000 });
        await res.dump();
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    });

    it('decodes a gzip body', async () => {
      const res = await client.fetch(site.url('/gzip'));
      expect(res.headers['content-encoding']).to.equal('gzip');
      const text = await res.text();
      expect(text).to.include('<a href="/gzip/a">A</a>');
      expect(text.match(/<a /g)).to.have.length(3);
    });

    it('applies maxBodyBytes to the decoded gzip body', async () => {
      const res = await client.fetch(site.url('/gzip'), { maxBodyBytes: 40 });
      const text = await res.text();
      expect(Buffer.byteLength(text)).to.equal(40);
      expect(text.startsWith('<!doctype html>')).to.equal(true);
      expect(res.truncated).to.equal(true);
    });

    it('reports a refused connection as connect/ECONNREFUSED', async () => {
      const port = await refusedPort();
      await expectOutbound(client.fetch(`http://127.0.0.1:${port}/`), 'connect', 'ECONNREFUSED');
    });

    it('reports a caller abort before headers as cancelled', async () => {
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 100);
      const [, ms] = await elapsed(() =>
        expectOutbound(client.fetch(site.url('/hang'), { signal: controller.signal }), 'cancelled'),
      );
      expect(ms).to.be.lessThan(5_000);
    });

    it('reports a caller abort while reading the body as cancelled', async () => {
      const controller = new AbortController();
      const res = await client.fetch(site.url('/never-ends'), { signal: controller.signal });
      setTimeout(() => controller.abort(), 150);
      await expectOutbound(res.text(), 'cancelled');
    });

    it('reports an already-aborted caller signal as cancelled and sends nothing', async () => {
      await expectOutbound(client.fetch(site.url('/ok'), { signal: AbortSignal.abort() }), 'cancelled');
      expect(site.requests).to.deep.equal([]);
    });

    it('keeps working after failures (the pool is not poisoned)', async () => {
      const res = await client.fetch(site.url('/links?n=3&external=1'));
      expect(res.status).to.equal(200);
      expect((await res.text()).match(/<a /g)).to.have.length(4);
    });
  });

  describe('a name that resolves to an allowed address', () => {
    it('is fetched when the allow-list admits what it resolves to', async () => {
      const client = new SafeHttp({ policy: new AddressPolicy(['127.0.0.0/8', '::1/128']) });
      try {
        const res = await client.fetch(`http://localhost:${site.port}/ok`);
        expect(res.status).to.equal(200);
        await res.dump();
      } finally {
        await client.close();
      }
    });
  });

  describe('a timed exchange (phases)', () => {
    it('opens a connection per hop and adds up its lookup and connect; no TLS over http', async () => {
      const dns = await startFixtureDns();
      dns.set('timed.example.test', ['127.0.0.1']);
      const client = new SafeHttp({ policy: new AddressPolicy(['127.0.0.0/8']), lookup: lookupVia([dns.server]) });
      try {
        const phases = { dnsMs: null, connectMs: null, tlsMs: null };
        const res = await client.fetch(`http://timed.example.test:${site.port}/redirect/2`, { phases });
        expect(res.status).to.equal(200);
        await res.dump();
        expect(phases.dnsMs).to.be.a('number').at.least(0);
        expect(phases.connectMs).to.be.a('number').at.least(0);
        expect(phases.tlsMs).to.equal(null);
        // Three hops, three connections of their own: the name was looked up for each.
        expect(dns.queries.filter((q) => q === 'A timed.example.test')).to.have.length(3);
      } finally {
        await client.close();
        await dns.close();
      }
    });

    it('has no lookup for an IP literal, and no connect when the connection is refused', async () => {
      const client = new SafeHttp({ policy: new AddressPolicy(['127.0.0.0/8']) });
      try {
        const ok = { dnsMs: null, connectMs: null, tlsMs: null };
        await (await client.fetch(site.url('/ok'), { phases: ok })).dump();
        expect(ok.dnsMs).to.equal(null);
        expect(ok.connectMs).to.be.a('number');
        const refused = { dnsMs: null, connectMs: null, tlsMs: null };
        const port = await refusedPort();
        await expectOutbound(client.fetch(`http://127.0.0.1:${port}/`, { phases: refused }), 'connect', 'ECONNREFUSED');
        expect(refused).to.deep.equal({ dnsMs: null, connectMs: null, tlsMs: null });
      } finally {
        await client.close();
      }
    });
  });

  describe('with its own DNS servers (lookupVia)', () => {
    it('connects where those servers point, and checks what they answer at connect time', async () => {
      const dns = await startFixtureDns();
      dns.set('site.example.test', ['127.0.0.1']);
      dns.set('inside.example.test', ['10.1.2.3']);
      const client = new SafeHttp({ policy: new AddressPolicy(['127.0.0.0/8']), lookup: lookupVia([dns.server]) });
      try {
        const res = await client.fetch(`http://site.example.test:${site.port}/ok`);
        expect(res.status).to.equal(200);
        await res.dump();
        await expectOutbound(client.fetch(`http://inside.example.test:${site.port}/ok`), 'blocked', 'ETARGETBLOCKED');
        await expectOutbound(client.fetch(`http://nowhere.example.test:${site.port}/ok`), 'dns');
        expect(dns.queries).to.include('A site.example.test');
      } finally {
        await client.close();
        await dns.close();
      }
    });
  });
});
