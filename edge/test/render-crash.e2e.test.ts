import { addRenderPages } from '@webutil/scripts/fixture-pages';
import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { RESTART_BACKOFF } from '@webutil/scripts/local-stack';
import { expect } from 'chai';
import { creditsHeader } from './billing-helpers.js';
import {
  expectNoOpenPages,
  expectRenderFailure,
  type RenderStack,
  render,
  startRenderStack,
} from './render-helpers.js';

async function until(condition: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Issue 22, item 1: what a page does fails only its own render, and a service that dies anyway is
 * replaced by the local runner (as Kubernetes would) while the edge answers 503 with Retry-After.
 */
describe('render crashes, through the REST edge, under the supervising runner', function () {
  this.timeout(90_000);
  let site: FixtureSite;
  let stack: RenderStack;

  before(async () => {
    site = await startFixtureSite();
    addRenderPages(site);
    // The first restart waits longer than npm start's, so the edge's own retries (about 1.5 s) end while it is down.
    stack = await startRenderStack({
      allowTargets: '127.0.0.1/32',
      supervise: { ...RESTART_BACKOFF, firstDelayMs: 6_000 },
    });
  });
  after(async () => {
    await stack?.stop();
    await site?.close();
  });

  it('renders a page whose pop-up closes itself, twenty at once, then a normal page, in the same process', async () => {
    const pid = stack.pid('render');
    const one = await render(stack, 'screenshot', { url: site.url('/page/self-closing-popup?n=0') });
    expect(one.res.status, JSON.stringify(one.body)).to.equal(200);
    const twenty = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        render(stack, 'screenshot', { url: site.url(`/page/self-closing-popup?n=${i + 1}`) }),
      ),
    );
    // Each one either rendered or was refused for room (a full queue, or past the caller's renders
    // in flight): none met a dead service.
    const outcomes = twenty.map((call) => call.body.error?.code ?? call.res.status);
    expect(outcomes.filter((o) => o === 200).length, JSON.stringify(outcomes)).to.be.at.least(10);
    expect(
      outcomes.filter((o) => o !== 200 && o !== 'render_busy' && o !== 'concurrency_limited'),
      JSON.stringify(outcomes),
    ).to.deep.equal([]);
    const normal = await render(stack, 'screenshot', { url: site.url('/page/simple?after-popups=1') });
    expect(normal.res.status, JSON.stringify(normal.body)).to.equal(200);
    expect(stack.pid('render'), 'the render process').to.equal(pid);
    expect(stack.logs.filter((line) => /exited|restarting/.test(line))).to.deep.equal([]);
    await expectNoOpenPages(stack);
  });

  it('answers 503 + Retry-After while a killed render service is down, free; the runner restarts it', async () => {
    const before = creditsHeader(await stack.api('/v1/quota'));
    const pid = stack.pid('render')!;
    const exited = (line: string) => line.startsWith('[runner] render exited (SIGKILL); restarting it in 6 s');
    process.kill(pid, 'SIGKILL');
    await until(() => stack.logs.some(exited), 10_000, 'the runner to see the render service exit');
    const down = await render(stack, 'screenshot', { url: site.url('/page/simple?while-down=1') });
    expectRenderFailure(down, 503, 'service_unavailable');
    expect(down.res.headers.get('retry-after')).to.equal('5');
    expect(creditsHeader(await stack.api('/v1/quota'))).to.equal(before);
    await until(() => stack.logs.includes('[runner] render restarted and ready'), 60_000, 'the restarted service');
    expect(stack.pid('render')).to.be.a('number').and.not.equal(pid);
    const next = await render(stack, 'screenshot', { url: site.url('/page/simple?after-restart=1') });
    expect(next.res.status, JSON.stringify(next.body)).to.equal(200);
    expect(creditsHeader(await stack.api('/v1/quota'))).to.equal(before - 2);
  });
});
