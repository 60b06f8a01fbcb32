import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { addRenderPages } from '@webutil/scripts/fixture-pages';
import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { freePort, REPO_ROOT } from '@webutil/scripts/local-stack';
import { expect } from 'chai';
import { account, creditsHeader, type Envelope, json } from './billing-helpers.js';
import { post } from './crawl-helpers.js';
import { expectNoOpenPages, type RenderRoute, type RenderStack, startRenderStack } from './render-helpers.js';

/**
 * Renders in flight are bounded per caller (an account, all its keys together; or a client
 * network): a failed render is free, so without the bound one caller's pages that never settle
 * would hold every browser of the pool.
 */
describe('renders in flight per caller, through the REST edge', function () {
  this.timeout(120_000);
  let site: FixtureSite;
  let stack: RenderStack;
  // Long enough that the flood's renders are still held while the other key's render runs on a busy machine.
  const budgetMs = 20_000;

  before(async () => {
    site = await startFixtureSite();
    addRenderPages(site);
    // Room for six pages and four waiting: a flood the edge let through would take all of them.
    stack = await startRenderStack({
      allowTargets: '127.0.0.1/32',
      render: {
        RENDER_BROWSERS: '1',
        RENDER_PAGES_PER_BROWSER: '6',
        RENDER_QUEUE_DEPTH: '4',
        RENDER_TIMEOUT_MS: String(budgetMs),
      },
    });
  });
  after(async () => {
    await stack?.stop();
    await site?.close();
  });

  async function call(apiKey: string, route: RenderRoute, url: string) {
    const res = await stack.api(`/v1/${route}`, { ...post({ url }), apiKey });
    return { res, body: (await json(res)) as Envelope & Record<string, unknown> };
  }

  it(
    'a Starter key flooding 24 never-settling renders holds 4 browsers, the rest refused at once with ' +
      '429 concurrency_limited and nothing spent; another key renders meanwhile',
    async () => {
      const flooder = await account(stack, 'STARTER');
      const other = await account(stack, 'STARTER');
      // Chromium is started and warm before the flood, so the render beside it is a normal one.
      const warm = await call(other.apiKey, 'screenshot', site.url('/page/simple?warm=1'));
      expect(warm.res.status, JSON.stringify(warm.body)).to.equal(200);
      const before = creditsHeader(await stack.api('/v1/quota', { apiKey: flooder.apiKey }));
      let answered = 0;
      const flood = Array.from({ length: 24 }, (_, i) =>
        call(flooder.apiKey, i % 2 ? 'screenshot' : 'url-to-pdf', site.url(`/hang?flood=${i}`)).then((r) => {
          answered++;
          return r;
        }),
      );
      // The refusals come at once; the four admitted renders hang until the render budget ends them.
      const deadline = Date.now() + budgetMs / 2;
      while (answered < 20 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(answered, 'answers before the budget ended any render').to.equal(20);

      // Another account's key is served while the flood holds its four browsers.
      const shot = await call(other.apiKey, 'screenshot', site.url('/page/simple?beside-flood=1'));
      expect(shot.res.status, JSON.stringify(shot.body)).to.equal(200);
      expect(answered, 'the flood still holds its renders').to.equal(20);
      // The bound is the account's, whichever of its keys calls.
      const minted = await stack.admin('mint-key', '--email', flooder.email, '--name', 'second');
      const sameAccount = await call(minted.apiKey!, 'screenshot', site.url('/page/simple?same-account=1'));
      expect(sameAccount.res.status, JSON.stringify(sameAccount.body)).to.equal(429);
      expect(sameAccount.body.error?.code).to.equal('concurrency_limited');

      const results = await Promise.all(flood);
      const limited = results.filter((r) => r.res.status === 429);
      expect(limited).to.have.length(20);
      for (const { res, body } of limited) {
        expect(body.error?.code).to.equal('concurrency_limited');
        expect(body.error?.message).to.match(/allows 4 at a time/);
        expect(res.headers.get('retry-after')).to.match(/^\d+$/);
      }
      const admitted = results.filter((r) => r.res.status !== 429);
      expect(admitted.map((r) => r.body.error?.code)).to.deep.equal(Array(4).fill('render_timeout'));
      // Failed and refused renders cost nothing.
      expect(creditsHeader(await stack.api('/v1/quota', { apiKey: flooder.apiKey }))).to.equal(before);
      // The slots are free again once the renders have ended.
      const after = await call(flooder.apiKey, 'screenshot', site.url('/page/simple?after-flood=1'));
      expect(after.res.status, JSON.stringify(after.body)).to.equal(200);
      await expectNoOpenPages(stack);
    },
  );

  it('the render service bounds a caller across edges: a second edge cannot add renders past the plan', async () => {
    const second = await startSecondEdge(stack);
    try {
      const flooder = await account(stack, 'STARTER');
      let answered = 0;
      // Four never-settling renders through the stack's edge: the plan's bound, all admitted.
      const held = Array.from({ length: 4 }, (_, i) =>
        call(flooder.apiKey, 'screenshot', site.url(`/hang?edges=${i}`)).then((r) => {
          answered++;
          return r;
        }),
      );
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      expect(answered, 'the four renders are still held').to.equal(0);
      // The second edge has counted none of them; the render service has.
      const res = await fetch(`${second.url}/v1/screenshot`, {
        ...post({ url: site.url('/hang?edges=second') }),
        headers: { authorization: `Bearer ${flooder.apiKey}`, 'content-type': 'application/json' },
      });
      const body = (await json(res)) as Envelope;
      expect(res.status, JSON.stringify(body)).to.equal(429);
      expect(body.error?.code).to.equal('concurrency_limited');
      expect(res.headers.get('retry-after')).to.match(/^\d+$/);
      for (const r of await Promise.all(held)) expect(r.body.error?.code).to.equal('render_timeout');
    } finally {
      second.stop();
    }
  });
});

/** Another edge in front of the same services, as a cluster runs several. */
async function startSecondEdge(stack: RenderStack): Promise<{ url: string; stop(): void }> {
  const port = await freePort();
  const addr = (name: string) => `127.0.0.1:${stack.ports[name]}`;
  const child: ChildProcess = spawn(process.execPath, [path.join(REPO_ROOT, 'edge/dist/main.js')], {
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: String(port),
      LOG_LEVEL: 'warn',
      BILLING_ADDR: addr('billing'),
      META_SCAN_ADDR: addr('meta-scan'),
      CRAWL_ADDR: addr('crawl'),
      RENDER_ADDR: addr('render'),
      BOOKMARK_ADDR: addr('bookmark'),
      TLS_SCAN_ADDR: addr('tls-scan'),
    },
    stdio: 'ignore',
  });
  const url = `http://127.0.0.1:${port}`;
  const stop = () => void child.kill('SIGKILL');
  for (let i = 0; i < 200; i++) {
    const up = await fetch(`${url}/v1/openapi.json`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) return { url, stop };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  stop();
  throw new Error('the second edge did not start');
}
