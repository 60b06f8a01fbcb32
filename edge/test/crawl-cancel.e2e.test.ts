import net from 'node:net';
import { type FixtureDns, startFixtureDns } from '@webutil/scripts/fixture-dns';
import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { creditsHeader, eventually } from './billing-helpers.js';

/**
 * Issue 8, item 5: a client that leaves early gets no work for free. If it leaves before the
 * service did the work, the call is really cancelled or withdrawn (nothing fetched, no job,
 * nothing spent); once the work is done (a job created), the credits are spent even though nobody
 * reads the answer. A slow resolver (the fixture DNS answering after 3 s) holds the service before
 * its work, so "before" does not depend on how fast the client's FIN travels.
 */
describe('clients that leave early', function () {
  this.timeout(90_000);
  let stack: TestStack;
  let site: FixtureSite;
  let dns: FixtureDns;
  /** Requests to /held/<i> that never get an answer: opened, and closed by the client. */
  const held = { opened: 0, closed: 0 };

  before(async () => {
    site = await startFixtureSite();
    dns = await startFixtureDns();
    site.route('/held-page', (_req, res) => {
      const links = Array.from({ length: 5 }, (_, i) => `<a href="/held/${i}">${i}</a>`).join('');
      res.writeHead(200, { 'content-type': 'text/html' }).end(links);
    });
    for (let i = 0; i < 5; i++) {
      site.route(`/held/${i}`, (req) => {
        held.opened++;
        req.socket.once('close', () => held.closed++);
      });
    }
    // Long enough that only a cancellation, never a time-out, closes a held request in this test.
    stack = await startTestStack({
      allowTargets: '127.0.0.0/8',
      env: { LINK_TIMEOUT_MS: '60000', PAGE_TIMEOUT_MS: '60000', PAGE_CHECK_BUDGET_MS: '120000' },
      envFor: { crawl: { CRAWL_DNS_SERVERS: dns.server } },
    });
  });
  after(async () => {
    await stack?.stop();
    await site?.close();
    await dns?.close();
  });

  const credits = async () => creditsHeader(await stack.api('/v1/quota'));
  const seen = (path: string) => site.requests.some((r) => r.path === path);

  /** Sends a JSON POST on a raw socket, which the caller ends whenever it likes. */
  function post(path: string, body: unknown): net.Socket {
    const edge = new URL(stack.edgeUrl);
    const payload = JSON.stringify(body);
    const socket = net.connect(Number(edge.port), edge.hostname);
    socket.on('error', () => undefined);
    socket.write(
      `POST ${path} HTTP/1.1\r\nHost: ${edge.host}\r\nAuthorization: Bearer ${stack.apiKey}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(payload)}\r\n\r\n${payload}`,
    );
    return socket;
  }

  /** Gives a cancelled call time to have done whatever it would wrongly do (past the slow resolver). */
  const settle = () => new Promise((resolve) => setTimeout(resolve, 4_500));
  /** The fixture site under a name the crawl service resolves only after 3 s. */
  const slowUrl = (name: string, path: string) => {
    dns.set(name, ['127.0.0.1'], { delayMs: 3_000 });
    return site.url(path).replace('127.0.0.1', name);
  };
  const logged = (text: string) => stack.logs.some((l) => l.startsWith('[edge]') && l.includes(text));

  for (const route of ['broken-links', 'link-extract']) {
    it(`${route} crawl start: a client gone before the job exists gets no job and spends nothing`, async () => {
      const before = await credits();
      const entry = `/ok?left-before=${route}`;
      post(`/v1/${route}/crawl`, { url: slowUrl(`slow-${route}.example.test`, entry) }).end();
      await settle();
      expect(seen(entry), 'the crawl ran').to.equal(false);
      expect(await credits()).to.equal(before);
      expect(logged('"status":499'), 'answered as a client gone').to.equal(true);
    });
  }

  it('crawl starts whose clients leave at any moment: a job exists exactly when its credits are spent', async () => {
    const before = await credits();
    const entries = Array.from({ length: 30 }, (_, i) => `/ok?left-any-time=${i}`);
    for (const [i, entry] of entries.entries()) {
      // Spaced out, each leaving a little later than the one before (0 to 12 ms after its
      // request): some before the start is made, some while it is made, some after its answer.
      await new Promise((resolve) => setTimeout(resolve, 20));
      const socket = post('/v1/broken-links/crawl', { url: site.url(entry) });
      const leaveAt = performance.now() + i * 0.4;
      const leave = () => (performance.now() >= leaveAt ? socket.destroy() : setImmediate(leave));
      leave();
    }
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const ran = await eventually(async () => {
      const count = entries.filter(seen).length;
      expect(before - (await credits())).to.equal(2 * count);
      return count;
    });
    expect(ran).to.be.within(0, entries.length);
  });

  it('broken-links crawl start: a client gone once the job exists is billed; the crawl runs to its end', async () => {
    const before = await credits();
    const entry = '/left-after';
    site.route(entry, (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<a href="/status/404?from=left-after">x</a>');
    });
    const socket = post('/v1/broken-links/crawl', { url: site.url(entry) });
    await eventually(async () => expect(seen(entry)).to.equal(true));
    socket.destroy();
    expect(await credits()).to.equal(before - 2);
    // The crawl goes on without its client: the entry page's link is checked too.
    await eventually(async () => expect(seen('/status/404?from=left-after')).to.equal(true));
  });

  it('single-page check: a client gone before the fetch gets nothing fetched and spends nothing', async () => {
    const before = await credits();
    post('/v1/broken-links', { url: slowUrl('slow-check.example.test', '/held-page?left-before=1') }).end();
    await settle();
    expect(seen('/held-page?left-before=1')).to.equal(false);
    expect(await credits()).to.equal(before);
  });

  it('single-page check: a client gone mid-check has every link request cancelled and spends nothing', async () => {
    const before = await credits();
    held.opened = 0;
    held.closed = 0;
    const socket = post('/v1/broken-links', { url: site.url('/held-page') });
    await eventually(async () => expect(held.opened).to.equal(5));
    expect(held.closed).to.equal(0);
    socket.end();
    // Each held request had a minute left: only the cancellation closes them this soon.
    await eventually(async () => expect(held.closed).to.equal(5), 20_000);
    expect(await credits()).to.equal(before);
  });
});
