import http from 'node:http';
import { isIP, type Socket } from 'node:net';
import { AddressPolicy, lookupVia, resolveTarget } from '@webutil/kit';
import { type FixtureDns, startFixtureDns } from '@webutil/scripts/fixture-dns';
import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { expect } from 'chai';

import { EgressProxy, parseAuthority, REFUSAL_HEADER } from '../src/egress-proxy.js';

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A request in absolute form through the proxy, as Chromium sends http: requests. */
function viaProxy(proxy: EgressProxy, target: string, headers: Record<string, string> = {}): Promise<Answer> {
  const { port } = new URL(proxy.url);
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: '127.0.0.1',
      port,
      path: target,
      headers: { host: new URL(target).host, ...headers },
    });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        body += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** A CONNECT tunnel through the proxy, as Chromium opens for https:, ws: and wss:. */
function tunnel(proxy: EgressProxy, authority: string): Promise<{ status: number; socket: Socket }> {
  const { port } = new URL(proxy.url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'CONNECT', path: authority });
    req.on('connect', (res, socket) => resolve({ status: res.statusCode ?? 0, socket }));
    req.on('error', reject);
    req.end();
  });
}

/** Speaks HTTP/1.1 over an open tunnel. */
function getOver(socket: Socket, host: string, path: string): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => {
      text += chunk;
    });
    socket.on('end', () => resolve(text));
    socket.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
  });
}

describe('egress proxy (real servers on 127.0.0.1, the internal one on 127.0.0.2)', function () {
  this.timeout(20_000);
  let site: FixtureSite;
  let internal: FixtureSite;
  let dns: FixtureDns;
  let proxy: EgressProxy;
  // Only 127.0.0.1 is allowed, so 127.0.0.2 stands for the internal network.
  const policy = new AddressPolicy(['127.0.0.1/32']);

  before(async () => {
    [site, internal, dns] = await Promise.all([
      startFixtureSite(),
      startFixtureSite({ host: '127.0.0.2' }),
      startFixtureDns(),
    ]);
    site.route('/echo', (req, res) => {
      res.writeHead(200, ['content-type', 'application/json', 'set-cookie', 'a=1', 'set-cookie', 'b=2']);
      res.end(
        JSON.stringify({ host: req.headers.host, proxyAuthorization: req.headers['proxy-authorization'] ?? null }),
      );
    });
    internal.route('/secret', (_req, res) => {
      res.end('INTERNAL-SECRET');
    });
  });
  after(async () => Promise.all([site?.close(), internal?.close(), dns?.close()]));
  beforeEach(async () => {
    proxy = await EgressProxy.open({ policy, lookup: lookupVia([dns.server]), connectTimeoutMs: 2_000 });
    internal.requests.length = 0;
  });
  afterEach(async () => proxy.close());

  it('forwards http: requests to allowed addresses, headers intact, without the proxy hop headers', async () => {
    dns.set('site.example.com', ['127.0.0.1']);
    const answer = await viaProxy(proxy, `http://site.example.com:${site.port}/echo`, {
      'proxy-authorization': 'Basic c2VjcmV0',
    });
    expect(answer.status).to.equal(200);
    expect(JSON.parse(answer.body)).to.deep.equal({ host: `site.example.com:${site.port}`, proxyAuthorization: null });
    expect(answer.headers['set-cookie']).to.deep.equal(['a=1', 'b=2']);
    expect(answer.headers[REFUSAL_HEADER]).to.equal(undefined);
  });

  // Gotenberg GHSA-chwh-f6gm-r836 and CVE-2024-21527: a private target however it is spelled
  // (an IPv4-mapped IPv6 literal, a name, NAT64 / 6to4 forms: GHSA-86m8-88fq-xfxp) is refused
  // before any connection is made, and the refusal is marked with this proxy's token.
  const refusedTargets = [
    ['an IP literal', (port: number) => `http://127.0.0.2:${port}/secret`],
    ['an IPv4-mapped IPv6 literal', (port: number) => `http://[::ffff:127.0.0.2]:${port}/secret`],
    ['an IPv4-mapped IPv6 literal in hex', (port: number) => `http://[::ffff:7f00:2]:${port}/secret`],
    ['a public-looking name', (port: number) => `http://internal.example.com:${port}/secret`],
    ['a name with a NAT64 address', (port: number) => `http://nat64.example.com:${port}/secret`],
    ['a name with a 6to4 address', (port: number) => `http://sixtofour.example.com:${port}/secret`],
    ['the cloud metadata address', () => 'http://169.254.169.254/latest/meta-data/'],
  ] as const;
  for (const [what, target] of refusedTargets) {
    it(`refuses ${what} (http: and CONNECT), reaching nothing`, async () => {
      dns.set('internal.example.com', ['127.0.0.2']);
      dns.set('nat64.example.com', ['64:ff9b::7f00:2']);
      dns.set('sixtofour.example.com', ['2002:7f00:2::1']);
      const url = new URL(target(internal.port));
      const answer = await viaProxy(proxy, url.href);
      expect(answer.status).to.equal(403);
      expect(answer.headers[REFUSAL_HEADER]).to.equal(proxy.token);
      expect(answer.body).to.match(/private or reserved address/);
      // A name's refusal does not tell what it resolved to inside.
      if (!isIP(url.hostname.replace(/^\[(.*)\]$/, '$1'))) expect(answer.body).to.not.match(/127|7f00|ff9b|2002/);
      expect(proxy.failureFor(url.href)).to.include({ kind: 'blocked', code: 'ETARGETBLOCKED' });
      const connect = await tunnel(proxy, `${url.hostname}:${url.port || 443}`);
      expect(connect.status).to.equal(403);
      connect.socket.destroy();
      expect(internal.requests).to.deep.equal([]);
    });
  }

  it('dials exactly the address it checked: a rebinding name cannot switch to an internal one', async () => {
    // First answer allowed, every later one internal (GHSA-2pmr-289p-44r3).
    dns.set('rebind.example.com', (asked) => (asked === 0 ? ['127.0.0.1'] : ['127.0.0.2']));
    const first = await viaProxy(proxy, `http://rebind.example.com:${site.port}/ok`);
    expect(first.status).to.equal(200);
    const second = await viaProxy(proxy, `http://rebind.example.com:${internal.port}/secret`);
    expect(second.status).to.equal(403);
    expect(internal.requests).to.deep.equal([]);
    // Of several addresses, only an allowed one is dialled.
    dns.set('mixed.example.com', ['127.0.0.2', '127.0.0.1']);
    expect(await resolveTarget('mixed.example.com', policy, lookupVia([dns.server]))).to.deep.equal(['127.0.0.1']);
  });

  it('tunnels CONNECT to allowed addresses and cuts every tunnel when closed', async () => {
    const { status, socket } = await tunnel(proxy, `127.0.0.1:${site.port}`);
    expect(status).to.equal(200);
    const text = await getOver(socket, `127.0.0.1:${site.port}`, '/ok');
    expect(text).to.match(/^HTTP\/1\.1 200 OK/);
    const open = await tunnel(proxy, `127.0.0.1:${site.port}`);
    const ended = new Promise((resolve) => open.socket.once('close', resolve));
    await proxy.close();
    await ended;
  });

  it('reports unresolvable names and refused or broken connections as unreachable, in the kit wording', async () => {
    const missing = await viaProxy(proxy, 'http://nowhere.example.com/');
    expect(missing.status).to.equal(502);
    expect(missing.body).to.equal('render egress: the host name does not resolve (ENOTFOUND)\n');
    expect(proxy.failureFor('http://nowhere.example.com/')).to.include({ kind: 'dns', code: 'ENOTFOUND' });
    const closedPort = await viaProxy(proxy, 'http://127.0.0.1:9/');
    expect(closedPort.status).to.equal(502);
    expect(proxy.failureFor('http://127.0.0.1:9/')).to.include({
      kind: 'connect',
      code: 'ECONNREFUSED',
      message: 'the connection was refused (ECONNREFUSED)',
    });
    // A site that takes the connection and closes it without answering.
    site.route('/hang-up', (req) => {
      req.socket.destroy();
    });
    const hungUp = await viaProxy(proxy, `http://127.0.0.1:${site.port}/hang-up`);
    expect(hungUp.status).to.equal(502);
    expect(proxy.failureFor(`http://127.0.0.1:${site.port}/hang-up`)).to.include({
      kind: 'connect',
      message: 'the connection was reset (ECONNRESET)',
    });
  });

  it('answers malformed proxy requests with 400', async () => {
    expect(parseAuthority('example.com:443')).to.deep.equal({ host: 'example.com', port: 443 });
    expect(parseAuthority('[::1]:8443')).to.deep.equal({ host: '::1', port: 8443 });
    for (const bad of ['example.com', 'example.com:0', 'example.com:99999', 'a/b:1', '[::1:80', '']) {
      expect(parseAuthority(bad), bad).to.equal(undefined);
    }
    expect((await tunnel(proxy, 'no-port')).status).to.equal(400);
    // An origin-form request is a request to the proxy itself, not through it.
    const direct = await fetch(`${proxy.url}/ok`);
    expect(direct.status).to.equal(400);
    expect(direct.headers.get(REFUSAL_HEADER)).to.equal(proxy.token);
  });
});
