import { readGrpcError, toGrpcError } from '@webutil/kit';
import { expect } from 'chai';
import puppeteer, { type Browser } from 'puppeteer-core';
import { chromiumArgs, chromiumSandbox } from '../src/browser-pool.js';
import { RenderStop } from '../src/render-stop.js';

const never = () => new Promise<never>(() => undefined);

describe('render stop (one real Chromium)', function () {
  this.timeout(30_000);
  let browser: Browser;

  beforeEach(async () => {
    browser = await puppeteer.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      headless: true,
      pipe: true,
      args: chromiumArgs(chromiumSandbox('auto')),
    });
  });
  afterEach(async () => browser?.close());

  it('leaves no listener on the browser once ended, stopped or not', async () => {
    const listening = () => browser.listenerCount('disconnected');
    const before = listening();
    for (let i = 0; i < 3; i++) {
      const caller = new AbortController();
      const stop = new RenderStop(browser, caller.signal, 10_000);
      expect(await stop.guard(Promise.resolve(i))).to.equal(i);
      if (i === 2) caller.abort(new Error('caller left'));
      stop.end();
    }
    // A render's listener holds the render (its result buffers too) for as long as the browser runs.
    expect(listening()).to.equal(before);
  });

  it(
    'ends the work at the budget, on the caller leaving, and when the browser dies ' +
      '(BROWSER_CRASHED, retry after 2 s)',
    async () => {
      const timedOut = new RenderStop(browser, new AbortController().signal, 50);
      const late = await timedOut.guard(never()).catch((err: unknown) => readGrpcError(toGrpcError(err)));
      expect(late).to.include({ reason: 'RENDER_TIMEOUT' });
      timedOut.end();

      const caller = new AbortController();
      const cancelled = new RenderStop(browser, caller.signal, 10_000);
      const left = new Error('caller left');
      const waiting = cancelled.guard(never()).catch((err: unknown) => err);
      caller.abort(left);
      expect(await waiting).to.equal(left);
      cancelled.end();

      const crashed = new RenderStop(browser, new AbortController().signal, 10_000);
      const dying = crashed.guard(never()).catch((err: unknown) => readGrpcError(toGrpcError(err)));
      browser.process()?.kill('SIGKILL');
      expect(await dying).to.include({ reason: 'BROWSER_CRASHED', retryAfterSeconds: 2 });
      crashed.end();
    },
  );
});
