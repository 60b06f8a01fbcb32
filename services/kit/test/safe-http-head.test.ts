import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { AddressPolicy } from '../src/address-policy.js';
import { OutboundError, SafeHttp } from '../src/safe-http.js';

/** HEADs keep their keep-alive connection (undici closes it after a HEAD by default). */
describe('SafeHttp HEAD', () => {
  let server: http.Server;
  let origin: string;
  let connections = 0;
  const seen: string[] = [];

  before(async () => {
    server = http.createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      if (req.url === '/hop') return void res.writeHead(302, { location: 'http://169.254.169.254/latest' }).end();
      if (req.url === '/hang') return;
      res.writeHead(200, { 'content-type': 'text/html', 'content-length': 12 }).end('<p>hello</p>');
    });
    server.on('connection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(() => {
    server.closeAllConnections();
    server.close();
  });
  beforeEach(() => {
    seen.length = 0;
    connections = 0;
  });

  it('keeps the connection alive across HEADs', async () => {
    const client = new SafeHttp({ policy: new AddressPolicy(['127.0.0.0/8']) });
    for (let i = 0; i < 10; i++) {
      const res = await client.fetch(`${origin}/page`, { method: 'HEAD' });
      expect(res.status).to.equal(200);
      await res.dump();
    }
    await client.close();
    expect(seen).to.have.length(10);
    // undici retires the very first connection after its HEAD, then reuses the next one.
    expect(connections).to.be.at.most(2);
  });

  it('refuses a blocked IP literal and a name resolving to one, sending nothing', async () => {
    const client = new SafeHttp({ policy: new AddressPolicy([]) });
    const port = new URL(origin).port;
    for (const url of [`${origin}/page`, `http://localhost:${port}/page`]) {
      const err = await client.fetch(url, { method: 'HEAD' }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).to.be.instanceOf(OutboundError);
      expect((err as OutboundError).kind).to.equal('blocked');
    }
    await client.close();
    expect(seen).to.deep.equal([]);
  });

  it('checks every redirect hop', async () => {
    const client = new SafeHttp({ policy: new AddressPolicy(['127.0.0.0/8']) });
    const err = await client.fetch(`${origin}/hop`, { method: 'HEAD' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    await client.close();
    expect((err as OutboundError).kind).to.equal('blocked');
  });

  it('times out when the answer never comes', async () => {
    const client = new SafeHttp({ policy: new AddressPolicy(['127.0.0.0/8']) });
    const err = await client.fetch(`${origin}/hang`, { method: 'HEAD', timeoutMs: 300 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    await client.close();
    expect((err as OutboundError).kind).to.equal('timeout');
  });
});
