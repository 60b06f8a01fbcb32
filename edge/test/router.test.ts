import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import Koa from 'koa';
import { EdgeRouter } from '../src/router.js';

describe('the edge router (remembers matches of paths without parameters)', () => {
  let server: ReturnType<Koa['listen']>;
  let base: string;
  let router: EdgeRouter;
  let patternTests = 0;

  before(async () => {
    router = new EdgeRouter();
    router.get('/v1/quota', (ctx) => {
      ctx.body = { route: 'quota', matched: (ctx as { _matchedRoute?: string })._matchedRoute };
    });
    router.get('/v1/crawls/:id', (ctx) => {
      ctx.body = { route: 'crawl', id: ctx.params.id };
    });
    router.post('/v1/crawls', (ctx) => {
      ctx.body = { route: 'start' };
    });
    for (const layer of router.stack) {
      const match = layer.match.bind(layer);
      layer.match = (path: string) => {
        patternTests++;
        return match(path);
      };
    }
    const app = new Koa();
    app.use(router.routes());
    app.use(router.allowedMethods());
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(() => new Promise((resolve) => server.close(resolve)));

  const get = async (path: string, method = 'GET') => {
    const res = await fetch(`${base}${path}`, { method });
    return { status: res.status, body: res.status === 200 ? await res.json() : undefined };
  };

  it('tests no route pattern the second time a path without parameters is asked for', async () => {
    expect(await get('/v1/quota')).to.deep.equal({ status: 200, body: { route: 'quota', matched: '/v1/quota' } });
    const before = patternTests;
    expect(await get('/v1/quota')).to.deep.equal({ status: 200, body: { route: 'quota', matched: '/v1/quota' } });
    expect(patternTests).to.equal(before);
  });

  it('remembers one entry for every spelling of a path, as routing ignores case', async () => {
    await get('/v1/quota');
    const before = patternTests;
    expect(await get('/V1/Quota')).to.deep.equal({ status: 200, body: { route: 'quota', matched: '/v1/quota' } });
    expect(patternTests).to.equal(before);
  });

  it('keeps the method: a remembered GET does not answer a POST, and 405 still names the methods', async () => {
    await get('/v1/crawls', 'POST');
    expect(await get('/v1/crawls', 'POST')).to.deep.equal({ status: 200, body: { route: 'start' } });
    expect((await get('/v1/crawls', 'GET')).status).to.equal(405);
    expect((await get('/v1/quota', 'DELETE')).status).to.equal(405);
  });

  it('matches paths with parameters afresh, each with its own parameters', async () => {
    expect(await get('/v1/crawls/a')).to.deep.equal({ status: 200, body: { route: 'crawl', id: 'a' } });
    const before = patternTests;
    expect(await get('/v1/crawls/b')).to.deep.equal({ status: 200, body: { route: 'crawl', id: 'b' } });
    expect(patternTests).to.be.greaterThan(before);
  });

  it('gives each request its own list of matched layers', () => {
    const first = router.match('/v1/quota', 'GET');
    first.path.length = 0;
    expect(router.match('/v1/quota', 'GET').path).to.have.length(1);
  });

  it('still answers 404 for unknown paths', async () => {
    expect((await get('/v1/nothing')).status).to.equal(404);
    expect((await get('/v1/nothing')).status).to.equal(404);
  });
});
