import net from 'node:net';
import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import { account, quota } from './billing-helpers.js';

/** A raw HTTP/1.1 exchange: what the edge wrote until it closed the connection, and when. */
interface Exchange {
  socket: net.Socket;
  /** Resolves when the edge (or the client) closes the connection. */
  closed: Promise<{ text: string; ms: number }>;
}

function connect(port: number, localAddress = '127.0.0.1'): Exchange {
  const started = Date.now();
  const socket = net.connect({ host: '127.0.0.1', port, localAddress });
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
  socket.on('error', () => undefined); // a reset after the answer is part of being cut off
  const closed = new Promise<{ text: string; ms: number }>((resolve) =>
    socket.once('close', () => resolve({ text, ms: Date.now() - started })),
  );
  return { socket, closed };
}

/** Writes `text` one byte every `everyMs` until the socket closes. */
function trickle(socket: net.Socket, text: string, everyMs: number): void {
  let sent = 0;
  const timer = setInterval(() => {
    if (socket.destroyed || !socket.writable) return clearInterval(timer);
    socket.write(text[sent++ % text.length] ?? 'a');
  }, everyMs);
  socket.once('close', () => clearInterval(timer));
}

/** Status line, headers (lower-case names) and the JSON body of a raw response. */
function parse(text: string): { status: number; headers: Record<string, string>; body: any } {
  const [head = '', body = ''] = text.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers = Object.fromEntries(
    lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
  );
  return { status: Number(statusLine.split(' ')[1]), headers, body: body ? JSON.parse(body) : undefined };
}

/**
 * Slow and greedy clients through the REST edge: headers and bodies trickled byte by byte get a
 * 408 in the envelope when their time is up, idle connections close, and one client network
 * cannot hold more than its share of connections. Long routes are not cut short by any of it.
 */
describe('edge: slow clients', function () {
  this.timeout(120_000);
  let site: FixtureSite;
  let stack: TestStack;
  let port: number;

  before(async () => {
    site = await startFixtureSite();
    stack = await startTestStack({
      allowTargets: '127.0.0.0/8',
      envFor: {
        edge: {
          HEADERS_TIMEOUT_MS: '1000',
          REQUEST_TIMEOUT_MS: '2000',
          KEEP_ALIVE_TIMEOUT_MS: '1000',
          MAX_CONNECTIONS_PER_CLIENT: '4',
        },
      },
    });
    port = Number(new URL(stack.edgeUrl).port);
  });
  after(async () => {
    await stack?.stop();
    await site?.close();
  });

  const expectTimeout = (text: string) => {
    const { status, headers, body } = parse(text);
    expect(status, text).to.equal(408);
    expect(headers['content-type']).to.match(/^application\/json/);
    expect(headers['x-credits-remaining']).to.equal('0');
    expect(headers['x-request-id']).to.match(/^[\w-]{36}$/);
    expect(body.success).to.equal(false);
    expect(body.error.code).to.equal('request_timeout');
    expect(body.error.message).to.be.a('string').and.not.be.empty;
  };

  it('a body trickled byte by byte gets 408 in the envelope, the connection closes, and nothing is spent', async () => {
    const { apiKey } = await account(stack, 'STARTER', '--credits', '10');
    const seen = site.requests.length;
    const body = JSON.stringify({ url: site.url('/ok?trickled') });
    const { socket, closed } = connect(port);
    socket.write(
      `POST /v1/broken-links HTTP/1.1\r\nHost: edge\r\nAuthorization: Bearer ${apiKey}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`,
    );
    trickle(socket, body, 200);
    const { text, ms } = await closed;
    expectTimeout(text);
    expect(ms).to.be.within(1_900, 20_000);
    expect(await quota(stack, { apiKey })).to.include({ remaining: 10 });
    expect(site.requests.length, 'the target was not fetched').to.equal(seen);
  });

  it('headers trickled byte by byte, or never sent, get 408 as well', async () => {
    const silent = connect(port);
    const slow = connect(port);
    trickle(slow.socket, 'GET /v1/quota HTTP/1.1\r\nHost: edge\r\nX-Padding: ', 200);
    for (const { closed } of [silent, slow]) {
      const { text, ms } = await closed;
      expectTimeout(text);
      expect(ms).to.be.within(900, 20_000);
    }
  });

  it('a request received in time is answered however long its route takes', async () => {
    const res = await stack.api(`/v1/down-check?url=${encodeURIComponent(site.url('/slow?ms=4000'))}`);
    expect(res.status).to.equal(200);
    expect(((await res.json()) as { data: { httpsStatus: number } }).data.httpsStatus).to.equal(200);
  });

  it('an idle kept-alive connection is closed', async () => {
    const { socket, closed } = connect(port);
    socket.write('GET /healthz HTTP/1.1\r\nHost: edge\r\n\r\n');
    const { text, ms } = await closed;
    expect(parse(text).status).to.equal(200);
    expect(ms).to.be.within(900, 20_000);
  });

  it('one client network holds at most 4 connections: the next gets 429 and its request is not run', async () => {
    const slowCheck = (tag: string) =>
      `GET /v1/down-check?url=${encodeURIComponent(site.url(`/slow?ms=6000&${tag}`))} HTTP/1.1\r\n` +
      `Host: edge\r\nAuthorization: Bearer ${stack.apiKey}\r\nConnection: close\r\n\r\n`;
    // Four connections from 127.0.0.2, each waiting on a slow route (the test's own fetches come from 127.0.0.1).
    const held = Array.from({ length: 4 }, () => connect(port, '127.0.0.2'));
    held.forEach(({ socket }, i) => {
      socket.write(slowCheck(`held=${i}`));
    });
    try {
      await new Promise((r) => setTimeout(r, 500));
      const extra = connect(port, '127.0.0.2');
      extra.socket.write(slowCheck('refused'));
      const { text, ms } = await extra.closed;
      const refused = parse(text);
      expect(refused.status, text).to.equal(429);
      expect(refused.body.error.code).to.equal('too_many_connections');
      expect(Number(refused.headers['retry-after'])).to.be.at.least(1);
      expect(ms).to.be.below(5_000);

      // Another client is served meanwhile; a freed slot is taken again.
      const other = connect(port, '127.0.0.3');
      other.socket.write('GET /healthz HTTP/1.1\r\nHost: edge\r\nConnection: close\r\n\r\n');
      expect(parse((await other.closed).text).status).to.equal(200);
      const done = await held[0]!.closed;
      expect(parse(done.text).status).to.equal(200);
      const again = connect(port, '127.0.0.2');
      again.socket.write('GET /healthz HTTP/1.1\r\nHost: edge\r\nConnection: close\r\n\r\n');
      expect(parse((await again.closed).text).status).to.equal(200);
      expect(
        site.requests.some((r) => r.path.includes('refused')),
        'the refused request ran',
      ).to.equal(false);
    } finally {
      for (const { socket } of held) socket.destroy();
    }
  });
});
