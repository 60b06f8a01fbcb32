import type http from 'node:http';
import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { expect } from 'chai';
import { AddressPolicy } from '../src/address-policy.js';
import { SafeHttp } from '../src/safe-http.js';

/**
 * A caller's headers for one origin (docs/decisions/0216-scoped-request-headers.md): sent on hops
 * to that origin, never to another, nor after a redirect has left it. Two real servers on
 * 127.0.0.1 and 127.0.0.2 record what they received.
 */
describe('SafeHttp originHeaders', () => {
  let own: FixtureSite;
  let other: FixtureSite;
  let client: SafeHttp;
  const seen: { origin: string; path: string; auth?: string; custom?: string }[] = [];
  const record = (site: () => FixtureSite) => (req: http.IncomingMessage, url: URL) =>
    seen.push({
      origin: site().origin,
      path: url.pathname,
      auth: req.headers.authorization,
      custom: req.headers['x-staging'] as string | undefined,
    });

  before(async () => {
    [own, other] = await Promise.all([startFixtureSite(), startFixtureSite({ host: '127.0.0.2' })]);
    for (const site of [own, other]) {
      const log = record(() => site);
      site.route('*', (req, res, url) => {
        log(req, url);
        const hop = /^\/to-(own|other)(\/.*)$/.exec(url.pathname);
        if (hop) {
          res.writeHead(302, { location: `${(hop[1] === 'own' ? own : other).origin}${hop[2]}` });
          res.end();
          return;
        }
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('ok');
      });
    }
    client = new SafeHttp({ policy: new AddressPolicy(['127.0.0.0/8']) });
  });
  after(async () => {
    await client.close();
    await Promise.all([own.close(), other.close()]);
  });
  beforeEach(() => {
    seen.length = 0;
  });

  const scoped = () => ({ origin: own.origin, headers: { authorization: 'Basic c2VjcmV0', 'x-staging': '1' } });
  const get = async (url: string) => (await client.fetch(url, { originHeaders: scoped() })).dump();

  it('sends them to the origin, and on a redirect that stays on it', async () => {
    await get(own.url('/to-own/page'));
    expect(seen).to.deep.equal([
      { origin: own.origin, path: '/to-own/page', auth: 'Basic c2VjcmV0', custom: '1' },
      { origin: own.origin, path: '/page', auth: 'Basic c2VjcmV0', custom: '1' },
    ]);
  });

  it('never sends them to another origin, nor back on the origin after a redirect left it', async () => {
    await get(own.url('/to-other/to-own/back'));
    expect(seen.map((s) => [s.origin, s.path, s.auth, s.custom])).to.deep.equal([
      [own.origin, '/to-other/to-own/back', 'Basic c2VjcmV0', '1'],
      [other.origin, '/to-own/back', undefined, undefined],
      [own.origin, '/back', undefined, undefined],
    ]);
    await get(other.url('/to-own/x'));
    expect(seen.slice(3).every((s) => s.auth === undefined && s.custom === undefined)).to.equal(true);
  });

  it('does not send them to the same host on another port or scheme', async () => {
    const sibling = await startFixtureSite();
    try {
      const log = record(() => sibling);
      sibling.route('*', (req, res, url) => {
        log(req, url);
        res.end('ok');
      });
      await get(sibling.url('/x'));
      expect(seen).to.deep.equal([{ origin: sibling.origin, path: '/x', auth: undefined, custom: undefined }]);
    } finally {
      await sibling.close();
    }
  });
});
