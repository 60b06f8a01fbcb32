import { addRenderPages } from '@webutil/scripts/fixture-pages';
import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { expect } from 'chai';
import { creditsHeader } from './billing-helpers.js';
import {
  expectNoOpenPages,
  expectRenderFailure,
  type RenderStack,
  render,
  startRenderStack,
} from './render-helpers.js';

const isRunning = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

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
    stack = await startRenderStack({ allowTargets: '127.0.0.1/32', supervise: true });
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
    // Each one either rendered or was refused for room (a full queue): none met a dead service.
    const outcomes = twenty.map((call) => call.body.error?.code ?? call.res.status);
    expect(
      outcomes.filter((o) => o !== 200 && o !== 'render_busy'),
      JSON.stringify(outcomes),
    ).to.deep.equal([]);
    const normal = await render(stack, 'screenshot', { url: site.url('/page/simple?after-popups=1') });
    expect(normal.res.status, JSON.stringify(normal.body)).to.equal(200);
    expect(stack.pid('render'), 'the render process').to.equal(pid);
    expect(stack.logs.filter((line) => /exited|restarting/.test(line))).to.deep.equal([]);
    await expectNoOpenPages(stack);
  });
});
