import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type FixtureDns, startFixtureDns } from '@webutil/scripts/fixture-dns';
import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { freePort } from '@webutil/scripts/local-stack';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { issue, startTlsServer, type TlsServer } from '@webutil/scripts/tls-fixtures';
import { expect } from 'chai';
import { creditsHeader, expectFailure, json } from './billing-helpers.js';

/** The down-check's details (issue 24): timings, redirects, expectStatus, keyword, method, verdict. */
describe('GET /v1/down-check, the details', function () {
  this.timeout(90_000);
  let site: FixtureSite;
  let dns: FixtureDns;
  let tls: TlsServer;
  let caDir: string;
  let stack: TestStack;

  before(async () => {
    site = await startFixtureSite();
    site.route('/article', (req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      if (req.method === 'HEAD') return void res.end();
      // The keyword sits past the first chunk, split across two writes.
      res.write(`<html><body>${'<p>filler</p>'.repeat(20_000)}Order con`);
      setTimeout(() => res.end('firmed</body></html>'), 20);
    });
    site.route('/huge', (_req, res) => {
      // 2 MB of filler, then the keyword: past the 1 MB searched.
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`${'x'.repeat(2 * 1024 * 1024)}Order confirmed`);
    });
    dns = await startFixtureDns();
    dns.set('up.example.test', ['127.0.0.1']);
    dns.set('secure.example.test', ['127.0.0.1']);
    const ca = await issue({ commonName: 'Down-check Test CA', ca: true });
    const leaf = await issue({ commonName: 'secure.example.test', altNames: ['secure.example.test'] }, ca);
    tls = await startTlsServer({ key: leaf.keyPem, chain: [leaf.pem] });
    caDir = mkdtempSync(path.join(tmpdir(), 'down-check-ca-'));
    writeFileSync(path.join(caDir, 'ca.pem'), ca.pem);
    stack = await startTestStack({
      allowTargets: '127.0.0.0/8',
      envFor: {
        'meta-scan': {
          DOWN_CHECK_TIMEOUT_MS: '1500',
          META_DNS_SERVERS: dns.server,
          NODE_EXTRA_CA_CERTS: path.join(caDir, 'ca.pem'),
        },
      },
    });
  });
  after(async () => {
    await stack?.stop();
    await Promise.all([site?.close(), dns?.close(), tls?.close()]);
    if (caDir) rmSync(caDir, { recursive: true, force: true });
  });

  const check = async (url: string, query = '') => {
    const res = await stack.api(`/v1/down-check?url=${encodeURIComponent(url)}${query}`);
    const body = await json(res);
    expect(res.status, JSON.stringify(body)).to.equal(200);
    return body.data;
  };

  it('breaks an answer over http into DNS, connect, first byte and total; no TLS', async () => {
    const data = await check(`http://up.example.test:${site.port}/ok`);
    expect(data).to.include({ httpsStatus: 200, ipAddress: '127.0.0.1', verdict: 'up', reason: 'HTTP 200' });
    const { dnsMs, connectMs, tlsMs, firstByteMs, totalMs } = data.timings;
    expect(dnsMs).to.be.a('number').at.least(0);
    expect(connectMs).to.be.a('number').at.least(0);
    expect(tlsMs).to.equal(null);
    expect(firstByteMs).to.equal(data.responseTimeMs);
    expect(totalMs).to.be.at.least(firstByteMs);
    expect(data.redirects).to.deep.equal([]);
    expect(data.statusMatches).to.equal(null);
    expect(data.keywordFound).to.equal(null);
  });

  it('times the TLS handshake of an https target', async () => {
    const data = await check(`https://secure.example.test:${tls.port}/`);
    expect(data).to.include({ httpsStatus: 200, verdict: 'up' });
    expect(data.timings.tlsMs).to.be.a('number').at.least(0);
    expect(data.timings.connectMs).to.be.a('number').at.least(0);
    expect(data.timings.dnsMs).to.be.a('number').at.least(0);
  });

  it('lists the redirects followed, and calls a chain past 5 degraded', async () => {
    const three = await check(site.url('/redirect/3'));
    expect(three.redirects).to.deep.equal([
      { url: site.url('/redirect/3'), status: 302 },
      { url: site.url('/redirect/2'), status: 302 },
      { url: site.url('/redirect/1'), status: 302 },
    ]);
    expect(three).to.include({ httpsStatus: 200, verdict: 'up' });
    const loop = await check(site.url('/redirect-loop'));
    expect(loop.redirects).to.have.length(5);
    expect(loop).to.include({ httpsStatus: 302, verdict: 'degraded' });
    expect(loop.reason).to.equal('HTTP 302, still redirecting after 5 redirects');
  });

  it('says why a site is down: refused, DNS, time-out, 503, and TLS', async () => {
    const refused = await check(`http://127.0.0.1:${await freePort()}/`);
    expect(refused).to.include({ httpsStatus: null, verdict: 'down', reason: 'connection refused' });
    expect(refused.timings).to.include({ dnsMs: null, connectMs: null, tlsMs: null, firstByteMs: null });
    expect(refused.timings.totalMs).to.be.a('number');

    const unknown = await check(`http://gone.example.test:${site.port}/`);
    expect(unknown).to.include({ ipAddress: null, verdict: 'down', reason: 'DNS name not found' });
    expect(unknown.timings.totalMs).to.be.a('number');

    const hung = await check(site.url('/hang'));
    expect(hung).to.include({ httpsStatus: null, verdict: 'down', reason: 'timed out after 1.5 s' });
    expect(hung.timings.connectMs).to.be.a('number');
    expect(hung.timings.firstByteMs).to.equal(null);

    const unavailable = await check(site.url('/status/503'));
    expect(unavailable).to.include({ httpsStatus: 503, verdict: 'down', reason: 'HTTP 503' });
    const missing = await check(site.url('/status/404'));
    expect(missing).to.include({ httpsStatus: 404, verdict: 'degraded', reason: 'HTTP 404' });

    // https to a plain-http server: connected, then the handshake failed.
    const tlsFailed = await check(`https://127.0.0.1:${site.port}/ok`);
    expect(tlsFailed).to.include({ httpsStatus: null, verdict: 'down' });
    expect(tlsFailed.reason).to.match(/^TLS error/);
    expect(tlsFailed.timings.connectMs).to.be.a('number');
    expect(tlsFailed.timings.tlsMs).to.equal(null);
  });

  it('judges the status against expectStatus, a code or a range', async () => {
    const inRange = await check(site.url('/status/204'), '&expectStatus=200-299');
    expect(inRange).to.include({ statusMatches: true, verdict: 'up', reason: 'HTTP 204' });
    const wanted404 = await check(site.url('/status/404'), '&expectStatus=404');
    expect(wanted404).to.include({ statusMatches: true, verdict: 'up' });
    const outside = await check(site.url('/ok'), '&expectStatus=301');
    expect(outside).to.include({ statusMatches: false, verdict: 'down', reason: 'HTTP 200, expected 301' });
  });

  it('looks for a keyword in the first 1 MB, across chunks', async () => {
    const found = await check(site.url('/article'), '&keyword=Order%20confirmed');
    expect(found).to.include({ keywordFound: true, verdict: 'up' });
    const absent = await check(site.url('/article'), '&keyword=Out%20of%20stock');
    expect(absent).to.include({ keywordFound: false, verdict: 'down' });
    expect(absent.reason).to.equal('HTTP 200, keyword not found in the first 1 MB');
    const tooDeep = await check(site.url('/huge'), '&keyword=Order%20confirmed');
    expect(tooDeep).to.include({ keywordFound: false, verdict: 'down' });
  });

  it('sends HEAD when asked, GET otherwise', async () => {
    const before = site.requests.length;
    await check(site.url('/ok?head'), '&method=HEAD');
    await check(site.url('/ok?get'));
    const seen = site.requests.slice(before).map((r) => `${r.method} ${r.path}`);
    expect(seen).to.deep.equal(['HEAD /ok?head', 'GET /ok?get']);
  });

  it('refuses bad options with a 400 naming the field, fetching nothing and spending nothing', async () => {
    const before = creditsHeader(await stack.api('/v1/quota'));
    const requests = site.requests.length;
    const bad: [string, RegExp][] = [
      ['&expectStatus=abc', /^expectStatus must be a status code/],
      ['&expectStatus=299-200', /^expectStatus/],
      ['&expectStatus=600', /^expectStatus/],
      [`&keyword=${'k'.repeat(201)}`, /^keyword must be at most 200 characters/],
      ['&keyword=', /^keyword must not be empty/],
      ['&method=POST', /^method must be one of GET, HEAD/],
      ['&method=HEAD&keyword=ok', /^keyword needs method GET/],
    ];
    for (const [query, message] of bad) {
      const res = await stack.api(`/v1/down-check?url=${encodeURIComponent(site.url('/ok'))}${query}`);
      const body = await expectFailure(res, 400, 'invalid_request');
      expect(body.error?.message, query).to.match(message);
      expect(creditsHeader(res)).to.equal(before);
    }
    expect(site.requests.length).to.equal(requests);
  });
});
