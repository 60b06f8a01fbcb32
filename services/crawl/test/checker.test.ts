import { setMaxListeners } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import { AddressPolicy, SafeHttp } from '@webutil/kit';
import { expect } from 'chai';
import {
  type CheckerDeps,
  LinkChecker,
  MAX_PROBED_ORIGINS,
  MAX_READ_TARGETS,
  retryAfterMs,
} from '../src/checking/checker.js';
import { HostThrottle } from '../src/checking/throttle.js';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/** A real server on 127.0.0.1 with a route table, counting requests and connections. */
async function server(routes: Record<string, Handler>, fallback?: Handler) {
  const requests: string[] = [];
  let connections = 0;
  const srv = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const route = routes[req.url ?? ''] ?? fallback;
    if (route) route(req, res);
    else res.writeHead(404, { 'content-type': 'text/html' }).end('<title>404</title>not here');
  });
  srv.on('connection', () => connections++);
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(srv.address() as net.AddressInfo).port}`;
  return {
    origin,
    requests,
    get connections() {
      return connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        srv.closeAllConnections();
        srv.close(() => resolve());
      }),
  };
}

/** An HTML answer with its length (without one, no client keeps a HEAD's connection alive). */
const html =
  (body: string, title = 'Page') =>
  (_req: http.IncomingMessage, res: http.ServerResponse) => {
    const page = `<html><head><title>${title}</title></head><body>${body}</body></html>`;
    res.writeHead(200, { 'content-type': 'text/html', 'content-length': Buffer.byteLength(page) }).end(page);
  };

describe('link checker (against real local servers)', () => {
  let http_: SafeHttp;
  const deps = (over: Partial<CheckerDeps> = {}): CheckerDeps => ({
    http: http_,
    throttle: new HostThrottle({
      globalLimit: 64,
      initialPerHost: 4,
      maxPerHost: 16,
      slowMs: 1000,
      timeoutsToGiveUp: 3,
      downForMs: 60_000,
    }),
    linkTimeoutMs: 2_000,
    pageTimeoutMs: 2_000,
    maxPageBytes: 1024 * 1024,
    maxRetryAfterMs: 5_000,
    slowAnswerMs: 1_000,
    ...over,
  });
  const checker = (over: Partial<CheckerDeps> = {}, budgetMs = 20_000) => {
    const signal = new AbortController().signal;
    setMaxListeners(0, signal); // every request in flight listens to it, as in a scan
    return new LinkChecker(deps(over), signal, Date.now() + budgetMs);
  };

  before(() => {
    http_ = new SafeHttp({ policy: new AddressPolicy(['127.0.0.1/32']), connectionsPerOrigin: 16 });
  });
  after(async () => {
    await http_.close();
  });

  it('checks each URL once, fragments ignored, with HEAD on kept-alive connections', async () => {
    const pages = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`/p${i}`, html(`page ${i}`)]));
    const site = await server(pages);
    const c = checker();
    const urls = Array.from({ length: 40 }, (_, i) => `${site.origin}/p${i % 20}#frag${i}`);
    const outcomes = await Promise.all(urls.map((u) => c.check(u)));
    expect(outcomes.every((o) => o.status === 200)).to.equal(true);
    expect(site.requests).to.have.length(20 + 1); // + the soft-404 probe of the host
    expect(site.requests.filter((r) => r.startsWith('HEAD'))).to.have.length(20);
    expect(site.connections).to.be.at.most(16);
    await site.close();
  });

  it('keeps the latest `remembered` outcomes: a URL checked since forgotten is asked again', async () => {
    const pages = Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`/p${i}`, html(`page ${i}`)]));
    const site = await server(pages);
    const signal = new AbortController().signal;
    const c = new LinkChecker(deps(), signal, Date.now() + 20_000, { soft404: false, remembered: 3 });
    for (const i of [0, 1, 2, 0, 3, 4, 5, 4]) expect((await c.check(`${site.origin}/p${i}`)).status).to.equal(200);
    // The second /p0 came while it was one of the latest three: answered from memory.
    expect(site.requests).to.deep.equal(['HEAD /p0', 'HEAD /p1', 'HEAD /p2', 'HEAD /p3', 'HEAD /p4', 'HEAD /p5']);
    // /p3, /p4 and /p5 came after /p0 and /p1: those two were forgotten and are asked again; /p5 is not.
    for (const i of [0, 1, 5]) await c.check(`${site.origin}/p${i}`);
    expect(site.requests.slice(6)).to.deep.equal(['HEAD /p0', 'HEAD /p1']);
    await site.close();
  });

  it('never forgets a check in flight: 40 links checked twice at once with 3 remembered, each asked once', async () => {
    // Slow answers keep every check in flight while the second round asks again.
    const slow: Handler = (req, res) => setTimeout(() => html(`page ${req.url}`)(req, res), 100);
    const pages = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`/p${i}`, slow]));
    const site = await server(pages);
    const signal = new AbortController().signal;
    setMaxListeners(0, signal);
    const c = new LinkChecker(deps(), signal, Date.now() + 20_000, { soft404: false, remembered: 3 });
    const urls = Array.from({ length: 40 }, (_, i) => `${site.origin}/p${i}`);
    const outcomes = await Promise.all([...urls, ...urls].map((u) => c.check(u)));
    expect(outcomes.every((o) => o.status === 200)).to.equal(true);
    const asked = new Map<string, number>();
    for (const r of site.requests) asked.set(r, (asked.get(r) ?? 0) + 1);
    expect([...asked.values()].every((n) => n === 1)).to.equal(true, JSON.stringify([...asked]));
    expect(asked.size).to.equal(40);
    // Once settled, the bound holds again: a link checked 37 links ago is asked again.
    await c.check(urls[0] as string);
    expect(site.requests.slice(40)).to.deep.equal(['HEAD /p0']);
    await site.close();
  });

  it('falls back to GET when HEAD is refused (405) or answers an error', async () => {
    const site = await server({
      '/hostile': (req, res) => (req.method === 'HEAD' ? res.writeHead(405).end() : html('fine')(req, res)),
    });
    const c = checker();
    expect((await c.check(`${site.origin}/hostile`)).status).to.equal(200);
    expect((await c.check(`${site.origin}/missing`)).status).to.equal(404);
    expect(site.requests.filter((r) => r.endsWith('/hostile') || r.endsWith('/missing'))).to.deep.equal([
      'HEAD /hostile',
      'GET /hostile',
      'HEAD /missing',
      'GET /missing',
    ]);
    await site.close();
  });

  it('waits out a 429 Retry-After that fits the budget, and reports one that does not', async () => {
    let calls = 0;
    const site = await server({
      '/busy': (_req, res) =>
        calls++ === 0 ? res.writeHead(429, { 'retry-after': '1' }).end() : res.writeHead(200).end(),
      '/closed': (_req, res) => res.writeHead(429, { 'retry-after': '3600' }).end(),
    });
    const c = checker();
    const busy = await c.check(`${site.origin}/busy`);
    expect(busy.status).to.equal(200);
    expect(calls).to.equal(2);
    const closed = await c.check(`${site.origin}/closed`);
    expect(closed).to.include({ status: 429, retryAfterSeconds: 3600 });
    expect(site.requests.filter((r) => r.endsWith('/closed'))).to.have.length(1);
    await site.close();
  });

  it('follows redirect chains and recognises loops', async () => {
    const site = await server({
      '/r2': (_req, res) => res.writeHead(301, { location: '/r1' }).end(),
      '/r1': (_req, res) => res.writeHead(302, { location: '/end' }).end(),
      '/end': html('end'),
      '/loop-a': (_req, res) => res.writeHead(302, { location: '/loop-b' }).end(),
      '/loop-b': (_req, res) => res.writeHead(302, { location: '/loop-a' }).end(),
    });
    const c = checker();
    expect(await c.check(`${site.origin}/r2`)).to.include({
      status: 200,
      firstStatus: 301,
      redirects: 2,
      finalUrl: `${site.origin}/end`,
    });
    const loop = await c.check(`${site.origin}/loop-a`);
    expect(loop.redirectTrouble).to.equal('loop');
    expect(loop.status).to.equal(302);
    await site.close();
  });

  it('times out on a host that never answers, then stops asking it', async () => {
    const sockets = new Set<net.Socket>();
    const silent = net.createServer((s) => void sockets.add(s.on('error', () => undefined)));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(silent.address() as net.AddressInfo).port}`;
    const throttle = new HostThrottle({
      globalLimit: 64,
      initialPerHost: 1,
      maxPerHost: 4,
      slowMs: 1000,
      timeoutsToGiveUp: 3,
      downForMs: 60_000,
    });
    const c = checker({ throttle, linkTimeoutMs: 300 });
    const outcomes = await Promise.all([0, 1, 2, 3, 4].map((i) => c.check(`${origin}/n${i}`)));
    expect(outcomes.map((o) => o.error?.kind)).to.deep.equal([
      'timeout',
      'timeout',
      'timeout',
      'not_answering',
      'not_answering',
    ]);
    expect(outcomes.every((o) => o.error?.code === 'ETIMEDOUT')).to.equal(true);
    for (const s of sockets) s.destroy();
    silent.close();
  });

  it('reports refused connections and refuses addresses the policy blocks', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = net.createServer().listen(0, '127.0.0.1', () => {
        const { port: p } = probe.address() as net.AddressInfo;
        probe.close(() => resolve(p));
      });
    });
    const c = checker();
    expect((await c.check(`http://127.0.0.1:${port}/`)).error).to.include({ kind: 'connect', code: 'ECONNREFUSED' });
    expect((await c.check('http://127.0.0.2:9/')).error).to.include({ kind: 'blocked', code: 'ETARGETBLOCKED' });
  });

  it('recognises a bot wall', async () => {
    const site = await server({
      '/wall': (_req, res) =>
        res
          .writeHead(403, { server: 'cloudflare', 'content-type': 'text/html' })
          .end('<title>Just a moment...</title><div id="challenge-platform"></div>'),
    });
    expect((await checker().check(`${site.origin}/wall`)).botWall).to.equal('Cloudflare');
    await site.close();
  });

  it('recognises soft 404s against one probe per host', async () => {
    const site = await server(
      { '/real': html('<h1>Anvils</h1><p>Heavy and reliable anvils, shipped fast.</p>', 'Anvils') },
      (req, res) => html(`<h1>Oops</h1><p>We could not find ${req.url}; try the home page.</p>`, 'Not found')(req, res),
    );
    const c = checker();
    expect((await c.check(`${site.origin}/gone-product`)).soft404).to.equal(true);
    expect((await c.check(`${site.origin}/real`)).soft404).to.equal(false);
    expect(site.requests.filter((r) => r.includes('webutil-probe'))).to.have.length(1);
    await site.close();
  });

  it('reads a page for its fragment targets when asked', async () => {
    const site = await server({ '/doc': html('<h2 id="install">Install</h2><a name="legacy"></a>') });
    const outcome = await checker().checkWithTargets(`${site.origin}/doc#install`);
    expect(outcome.targets?.has('install')).to.equal(true);
    expect(outcome.targets?.has('legacy')).to.equal(true);
    expect(outcome.targets?.has('other')).to.equal(false);
    await site.close();
  });

  it('keeps at most MAX_READ_TARGETS fragment targets across the pages a scan reads for them', async () => {
    const ids = Array.from({ length: 10_000 }, (_, k) => `<i id="t${k}"></i>`).join('');
    const site = await server({}, html(`${ids}<p id="last"></p>`));
    const c = checker();
    const pages = MAX_READ_TARGETS / 10_000 + 2;
    const outcomes = [];
    for (let i = 0; i < pages; i++) outcomes.push(await c.checkWithTargets(`${site.origin}/doc/${i}#last`));
    const kept = outcomes.reduce((sum, o) => sum + (o.targets?.size ?? 0), 0);
    expect(kept).to.equal(MAX_READ_TARGETS);
    // The first pages kept their first 10,000 ids; the last has none left: its anchors are unknown, not missing.
    expect(outcomes[0]?.targets?.has('t9999')).to.equal(true);
    expect(outcomes.at(-1)?.targets?.has('t0')).to.equal(undefined);
    await site.close();
  });

  it('reads 12 pages at once for their targets, each page whole: the budget is taken as ids are found', async () => {
    // Each page is held open until all 12 are being read (each server is a host of its own, so the host
    // throttle lets them overlap); a share of 10,000 set aside per page left nothing for the 11th and 12th.
    const held: http.ServerResponse[] = [];
    const doc = (_req: http.IncomingMessage, res: http.ServerResponse) => {
      res.writeHead(200, { 'content-type': 'text/html' }).write('<!doctype html>');
      held.push(res);
      if (held.length === 12) for (const r of held) r.end('<html><body><h2 id="a">A</h2><p id="b">B</p></body></html>');
    };
    const notFound = (_req: http.IncomingMessage, res: http.ServerResponse) => res.writeHead(404).end();
    const sites = await Promise.all(Array.from({ length: 12 }, () => server({ '/doc': doc }, notFound)));
    const c = checker();
    const outcomes = await Promise.all(sites.map((site) => c.checkWithTargets(`${site.origin}/doc`)));
    for (const outcome of outcomes) {
      expect(outcome.targets?.size).to.equal(2);
      // A name not on the page is missing, not unknown.
      expect(outcome.targets?.has('elsewhere')).to.equal(false);
    }
    await Promise.all(sites.map((site) => site.close()));
  });

  it(`asks at most ${MAX_PROBED_ORIGINS} origins for their not-found page`, async function () {
    this.timeout(60_000);
    const sites = await Promise.all(
      Array.from({ length: MAX_PROBED_ORIGINS + 4 }, () =>
        server({ '/real': html('<p>Real</p>') }, html('<p>Not found</p>', 'Not found')),
      ),
    );
    const c = checker();
    const outcomes = await Promise.all(sites.map((site) => c.check(`${site.origin}/real`)));
    expect(outcomes.every((o) => o.status === 200 && o.soft404 === false)).to.equal(true);
    const probed = sites.filter((site) => site.requests.some((r) => r.includes('webutil-probe')));
    expect(probed).to.have.length(MAX_PROBED_ORIGINS);
    await Promise.all(sites.map((site) => site.close()));
  });

  it('backs a host off when it answers 503', async () => {
    const site = await server({}, (_req, res) => res.writeHead(503).end());
    const throttle = new HostThrottle({
      globalLimit: 64,
      initialPerHost: 8,
      maxPerHost: 16,
      slowMs: 1000,
      timeoutsToGiveUp: 3,
      downForMs: 60_000,
    });
    await checker({ throttle }).check(`${site.origin}/down`);
    expect(throttle.limitOf(new URL(site.origin).host)).to.be.below(8);
    await site.close();
  });

  it('a host that answers 503 with Retry-After, then recovers: paused, lowered, then every link ok', async function () {
    this.timeout(30_000);
    // The first six requests are answered 503 (Retry-After: 1), every later one 200; the server
    // tracks when each arrived and how many were in flight at once.
    const arrivals: { at: number; status: number }[] = [];
    let inFlight = 0;
    let peak = 0;
    const site = await server({}, (_req, res) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      const status = arrivals.length < 6 ? 503 : 200;
      arrivals.push({ at: performance.now(), status });
      setTimeout(() => {
        inFlight--;
        if (status === 503) res.writeHead(503, { 'retry-after': '1', 'content-length': '0' }).end();
        else res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' }).end('ok');
      }, 5);
    });
    const throttle = new HostThrottle({
      globalLimit: 64,
      initialPerHost: 4,
      maxPerHost: 16,
      slowMs: 1000,
      timeoutsToGiveUp: 3,
      downForMs: 60_000,
    });
    const signal = new AbortController().signal;
    setMaxListeners(0, signal);
    const c = new LinkChecker(deps({ throttle }), signal, Date.now() + 25_000, { soft404: false });
    const outcomes = await Promise.all(Array.from({ length: 60 }, (_, i) => c.check(`${site.origin}/p/${i}`)));
    expect(outcomes.map((o) => o.status)).to.deep.equal(Array(60).fill(200));
    const host = new URL(site.origin).host;
    const stats = throttle.statsOf(host);
    // Never past the ceiling, not even while it grew back.
    expect(peak).to.be.at.most(16);
    expect(stats?.peakActive).to.be.at.most(16);
    // The Retry-After was honoured: after the last 503, nothing for (about) a second.
    const last503 = arrivals.findLastIndex((a) => a.status === 503);
    const next = arrivals[last503 + 1];
    expect(next && next.at - (arrivals[last503]?.at ?? 0)).to.be.at.least(900);
    // Lowered below where it started, then grown back past it once the host recovered.
    expect(stats?.lowestLimit).to.be.at.most(2);
    expect(stats?.limit).to.be.above(stats?.lowestLimit ?? Infinity);
    await site.close();
  });

  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(retryAfterMs('120')).to.equal(120_000);
    expect(retryAfterMs(new Date(Date.now() + 5_000).toUTCString())).to.be.within(3_000, 5_000);
    expect(retryAfterMs('soon')).to.equal(undefined);
    expect(retryAfterMs(undefined)).to.equal(undefined);
  });
});
