import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { AddressPolicy, SafeHttp, type SafeResponse } from '@webutil/kit';
import { expect } from 'chai';
import { LinkCollector } from '../src/page/links.js';
import { parseStream, type TextSink } from '../src/page/parse-stream.js';

const ANCHORS = 3_000;
/** About 80 KB of nothing but links: thousands of URLs to resolve per socket chunk. */
const anchor = (i: number) => `<a href="/p/${i}">${i}</a>`;
const DENSE = `<!doctype html><body>${Array.from({ length: ANCHORS }, (_, i) => anchor(i)).join('')}`;
/** A 4-byte character whose UTF-16 halves sit on both sides of the 16 K-character piece boundary. */
const ACROSS = `${'x'.repeat(16 * 1024 - 1)}😀${'y'.repeat(100)}`;

describe('parseStream (reading a page body in turns)', () => {
  let server: http.Server;
  let origin: string;
  // A connection per page, so every body can wait unread in its socket at once.
  const client = new SafeHttp({ policy: new AddressPolicy(['127.0.0.1/32']), connectionsPerOrigin: 32 });

  before(async () => {
    server = http.createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(req.url === '/across' ? ACROSS : DENSE);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(async () => {
    await client.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('lets timers run while many pages already received are parsed, their first pieces too', async () => {
    // Thirty bodies wait in their sockets before parsing starts, as when many pages of several
    // crawls arrive in one turn. Parsed where each arrived, they held a timer for a second or more.
    const responses = await Promise.all(Array.from({ length: 30 }, () => client.fetch(`${origin}/dense`)));
    let longestGap = 0;
    let last = performance.now();
    const ticker = setInterval(() => {
      const now = performance.now();
      longestGap = Math.max(longestGap, now - last);
      last = now;
    }, 1);
    const collectors = await Promise.all(
      responses.map(async (res) => {
        const collector = new LinkCollector(new URL(res.url), 5_000);
        await parseStream(res, collector);
        return collector;
      }),
    );
    clearInterval(ticker);
    for (const collector of collectors) expect(collector.links).to.have.length(ANCHORS);
    expect(longestGap).to.be.below(250);
  });

  it('feeds at most 16 K characters at a time, never splitting a character, and samples the start', async () => {
    const pieces: string[] = [];
    const sink: TextSink = { write: (text) => void pieces.push(text), end: () => undefined };
    const res: SafeResponse = await client.fetch(`${origin}/across`);
    const sample = await parseStream(res, sink, 20);
    expect(pieces.join('')).to.equal(ACROSS);
    expect(Math.max(...pieces.map((p) => p.length))).to.be.at.most(16 * 1024 + 1);
    expect(pieces.some((p) => p.endsWith('x😀'))).to.equal(true);
    expect(sample).to.equal('x'.repeat(20));
  });
});
