import { invalidArgument, type ServiceError, targetFailure } from '@webutil/kit';
import { type BrowserContext, type HTTPResponse, type Page, TimeoutError } from 'puppeteer-core';
import type { Lease } from './browser-pool.js';
import { DEVICES, type Device } from './devices.js';
import { EgressProxy, type EgressProxyOptions, REFUSAL_HEADER } from './egress-proxy.js';
import { netFailure } from './net-errors.js';
import type { PdfOptions, ScreenshotOptions } from './options.js';
import { browserCrashed, RenderStop } from './render-stop.js';
import type { StageClock } from './stage-clock.js';

export interface PageLimits {
  /** The whole render once it has a browser; past it the render fails with RENDER_TIMEOUT (408). */
  timeoutMs: number;
  /** The network counts as settled after this long with no request in flight. */
  quietMs: number;
  /** Longest wait for the network to settle after navigating; a page that never does is captured after it. */
  netMaxMs: number;
  /** Longest the scroll through the page, and the lazy images it wakes, may take. */
  scrollMaxMs: number;
  /** Longest wait for fonts, images and two painted frames before capturing. */
  settleMaxMs: number;
  /** Tallest screenshot in device pixels; a taller page is clipped. Also how far PDFs are scrolled. */
  maxCapturePixels: number;
  /** Most PDF pages printed. */
  maxPdfPages: number;
}

export type RenderJob = { kind: 'screenshot'; options: ScreenshotOptions } | { kind: 'pdf'; options: PdfOptions };

export interface Rendered {
  body: Uint8Array;
  /** The page was taller than the capture cap. */
  clipped: boolean;
}

export interface PageDeps {
  egress: EgressProxyOptions;
  limits: PageLimits;
}

const IMAGE_QUALITY = 80;
/** Longest a context may take to close before its browser is considered broken. */
const CLOSE_BOUND_MS = 5_000;

const notRenderable = (message: string) => invalidArgument('NOT_RENDERABLE', message);

/**
 * One render in its own browser context, whose only way out is its own egress proxy: navigate,
 * let the network settle (bounded), scroll through the page to wake lazy content, settle, then
 * capture or print. Dialogs are dismissed, pop-ups closed, downloads refused. Whatever happens
 * (failure, time-out, cancel, crash), the context and the proxy are closed before this returns.
 */
export async function renderPage(
  lease: Lease,
  url: URL,
  job: RenderJob,
  deps: PageDeps,
  clock: StageClock,
  signal: AbortSignal,
): Promise<Rendered> {
  const { limits } = deps;
  const stop = new RenderStop(lease.browser, signal, limits.timeoutMs);
  const guard = <T>(work: Promise<T>) => stop.guard(work);

  let proxy: EgressProxy | undefined;
  let context: BrowserContext | undefined;
  try {
    proxy = await EgressProxy.open(deps.egress);
    context = await guard(
      lease.browser.createBrowserContext({
        proxyServer: proxy.url,
        // Chromium sends loopback directly unless told otherwise; everything goes through the proxy.
        proxyBypassList: ['<-loopback>'],
      }),
    );
    await guard(lease.refuseDownloads(context));
    const page = await guard(context.newPage());
    const device = DEVICES[job.options.device];
    const main = watchMainFrame(page, url.href, proxy, (reason) => stop.abort(reason));
    closePopups(context, lease);
    await guard(prepare(page, device, job));
    clock.end('page');

    const response = await guard(page.goto(url.href, { waitUntil: 'domcontentloaded', timeout: 0 })).catch(
      (err: unknown) => {
        throw stop.aborted ? stop.reason : main.navigationFailure(err);
      },
    );
    main.check(response);
    clock.end('nav');

    const idle = await guard(networkQuiet(page, limits.quietMs, limits.netMaxMs));
    const requestsBeforeScroll = main.requests();
    clock.end('net');

    const viewport = device.viewport;
    const captureCss =
      job.kind === 'screenshot'
        ? Math.floor(limits.maxCapturePixels / (viewport.deviceScaleFactor ?? 1))
        : limits.maxCapturePixels;
    const scrollStarted = performance.now();
    await guard(inPage(page, main, () => page.evaluate(scrollThrough, captureCss, limits.scrollMaxMs)));
    const left = Math.max(0, limits.scrollMaxMs - (performance.now() - scrollStarted));
    const imageLimit = job.kind === 'screenshot' ? captureCss : Number.MAX_SAFE_INTEGER;
    // Lazy content the scroll woke: its images, and its other requests unless there were none (or
    // the page never went quiet, which would only spend the budget again).
    const woke = idle && main.requests() > requestsBeforeScroll;
    await guard(
      Promise.all([
        inPage(page, main, () => page.evaluate(imagesLoaded, imageLimit, left)),
        woke ? networkQuiet(page, limits.quietMs, left) : undefined,
      ]),
    );
    clock.end('scroll');

    await guard(inPage(page, main, () => page.evaluate(settled, limits.settleMaxMs)));
    main.check(null);
    clock.end('settle');

    if (job.kind === 'pdf') {
      const body = await guard(
        page.pdf({
          format: job.options.pageFormat,
          landscape: job.options.landscape,
          printBackground: true,
          pageRanges: `1-${limits.maxPdfPages}`,
          timeout: 0,
        }),
      );
      clock.end('render');
      return { body, clipped: false };
    }
    const height = await guard(inPage(page, main, () => page.evaluate(pageHeight)));
    const clipped = height > captureCss;
    const format = job.options.format;
    const body = await guard(
      page.screenshot({
        type: format,
        ...(format === 'png' ? { optimizeForSpeed: true } : { quality: IMAGE_QUALITY }),
        clip: { x: 0, y: 0, width: viewport.width, height: Math.max(1, Math.min(height, captureCss)) },
        captureBeyondViewport: true,
      }),
    );
    clock.end('encode');
    return { body, clipped };
  } catch (err) {
    if (stop.aborted) throw stop.reason;
    // A killed browser fails the call in flight before puppeteer reports the disconnect.
    await new Promise((resolve) => setImmediate(resolve));
    if (!lease.browser.connected) throw browserCrashed();
    throw err;
  } finally {
    stop.end();
    if (context && lease.browser.connected && !(await closeWithin(context, CLOSE_BOUND_MS))) lease.discard();
    await proxy?.close();
  }
}

/** Viewport, user agent, colour scheme and media, set before the page loads. */
async function prepare(page: Page, device: Device, job: RenderJob): Promise<void> {
  page.on('dialog', (dialog) => void dialog.dismiss().catch(() => undefined));
  const userAgent = device.userAgent ?? (await page.browser().userAgent()).replace('HeadlessChrome', 'Chrome');
  // One call for the media type and the colour scheme: each of puppeteer's emulateMediaType and
  // emulateMediaFeatures sends the whole emulated media, clearing what the other set.
  const media = await page.createCDPSession();
  await Promise.all([
    page.setViewport(device.viewport),
    page.setUserAgent(userAgent),
    media.send('Emulation.setEmulatedMedia', {
      // A PDF shows the page as a visitor sees it, not its print style sheet.
      media: job.kind === 'pdf' ? 'screen' : '',
      features: [{ name: 'prefers-color-scheme', value: job.options.colorScheme }],
    }),
  ]);
}

/**
 * Pages the render's page opens (window.open, target=_blank) are closed as they appear, each by
 * the browser (Lease.closeTarget), never through a puppeteer page of the pop-up: making one waits
 * for the pop-up's renderer, which a dialog in the pop-up pauses (and with it the opener sharing
 * it). The render's own page was created before this listens. A close that fails (the pop-up
 * closed itself first, or the render ended and took the context with it) fails only that close.
 */
function closePopups(context: BrowserContext, lease: Lease): void {
  context.on('targetcreated', (target) => {
    if (target.type() !== 'page') return;
    target
      .createCDPSession()
      .then(async (session) => {
        const { targetInfo } = await session.send('Target.getTargetInfo');
        await session.detach().catch(() => undefined);
        await lease.closeTarget(targetInfo.targetId);
      })
      .catch(() => undefined);
  });
}

/**
 * Follows the main frame: where its navigations failed, whether its document is one of the
 * proxy's refusals, and whether the renderer crashed. check() fails the render when the page
 * the capture would show is not the site's (a refusal, or Chromium's error page after a later
 * navigation, such as a script sending it to 169.254.169.254).
 */
function watchMainFrame(page: Page, url: string, proxy: EgressProxy, abort: (reason: unknown) => void) {
  let failedUrl: string | undefined;
  let failedText = '';
  let lastResponse: HTTPResponse | undefined;
  let requests = 0;
  const isMain = (frame: unknown) => frame === page.mainFrame();
  page.on('request', () => {
    requests++;
  });
  page.on('requestfailed', (request) => {
    if (!request.isNavigationRequest() || !isMain(request.frame())) return;
    failedUrl = request.url();
    failedText = request.failure()?.errorText ?? '';
  });
  page.on('response', (response) => {
    if (response.request().isNavigationRequest() && isMain(response.frame())) lastResponse = response;
  });
  page.on('error', () => abort(notRenderable('the page crashed the browser tab rendering it')));

  /**
   * `errorText`: Chromium's net error, from the failed request or else from the error thrown. The
   * proxy's record comes first: it knows why it refused a connection or could not make one.
   */
  const failure = (target: string | undefined, errorText: string): ServiceError => {
    const known = target ? proxy.failureFor(target) : undefined;
    if (known) return targetFailure(known);
    if (errorText === 'net::ERR_ABORTED')
      return notRenderable('the URL answered with no page to render (a download or an empty response)');
    return targetFailure(netFailure(errorText, target ?? url));
  };
  return {
    /** Requests the page has made so far. */
    requests: () => requests,
    navigationFailure(err: unknown): ServiceError {
      // goto can reject before the request's failure event arrives.
      const thrown = /net::ERR_[A-Z_]+/.exec(String(err))?.[0] ?? '';
      return failure(failedUrl ?? url, failedText || thrown);
    },
    check(response: HTTPResponse | null): void {
      const shown = response ?? lastResponse;
      if (shown && shown.headers()[REFUSAL_HEADER] === proxy.token) throw failure(shown.url(), '');
      if (page.url().startsWith('chrome-error:')) throw failure(failedUrl, failedText);
    },
  };
}

type MainFrame = ReturnType<typeof watchMainFrame>;

/**
 * Runs a step inside the page. When the page navigates away meanwhile (a script redirect), the
 * step's document is gone: the new document is checked (a refused target fails the render) and
 * the step runs once more on it; a page that keeps navigating is not renderable.
 */
async function inPage<T>(page: Page, main: MainFrame, step: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await step();
    } catch (err) {
      if (!/Execution context was destroyed|Cannot find context|navigat/i.test(String(err))) throw err;
      await page.waitForNavigation({ waitUntil: 'domcontentloaded', timeout: 2_000 }).catch(() => undefined);
      main.check(null);
      if (attempt >= 2) throw notRenderable('the page kept navigating away while it was being rendered');
    }
  }
}

/**
 * Resolves once no request has been in flight for quietMs (true), or after maxMs whatever the
 * network does (false).
 */
async function networkQuiet(page: Page, quietMs: number, maxMs: number): Promise<boolean> {
  if (maxMs <= 0) return false;
  try {
    await page.waitForNetworkIdle({ idleTime: quietMs, concurrency: 0, timeout: maxMs });
    return true;
  } catch (err) {
    if (err instanceof TimeoutError) return false;
    throw err;
  }
}

async function closeWithin(context: BrowserContext, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const closed = await Promise.race([
    context.close().then(
      () => true,
      () => !context.browser().connected,
    ),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    }),
  ]);
  clearTimeout(timer);
  return closed;
}

// The functions below run inside the page (puppeteer sends their source): no outside references.

/**
 * Scrolls down one viewport at a time, so scroll handlers and intersection observers wake lazy
 * content, until the bottom, `limitPx` or `budgetMs`; then back to the top. A step lasts one
 * frame: a task queued from the frame's callback runs after that frame's rendering, which is
 * where intersections are computed, so every position is observed.
 * At the bottom of a page taller than the window it waits a few frames for content that loads on
 * arrival; an infinite-scroll page stops at the limit.
 */
async function scrollThrough(limitPx: number, budgetMs: number): Promise<void> {
  const started = performance.now();
  const frame = () => new Promise<void>((resolve) => requestAnimationFrame(() => resolve()));
  const rendered = () => new Promise<void>((resolve) => requestAnimationFrame(() => setTimeout(() => resolve(), 0)));
  const step = Math.max(200, window.innerHeight);
  let y = 0;
  let framesAtBottom = 0;
  while (performance.now() - started < budgetMs) {
    const height = document.documentElement.scrollHeight;
    const lastY = Math.max(0, Math.min(height, limitPx) - window.innerHeight);
    if (y < lastY) {
      framesAtBottom = 0;
      y = Math.min(y + step, lastY);
      window.scrollTo(0, y);
      await rendered();
    } else if (lastY > 0 && height < limitPx && framesAtBottom++ < 4) {
      await frame();
    } else {
      break;
    }
  }
  window.scrollTo(0, 0);
  await frame();
}

/** Waits until every image that starts above `limitPx` has loaded or failed, for `budgetMs` at most. */
async function imagesLoaded(limitPx: number, budgetMs: number): Promise<void> {
  const pending = [...document.images].filter(
    (img) => !img.complete && img.getBoundingClientRect().top + window.scrollY < limitPx,
  );
  const loads = pending.map(
    (img) =>
      new Promise<void>((resolve) => {
        img.addEventListener('load', () => resolve(), { once: true });
        img.addEventListener('error', () => resolve(), { once: true });
      }),
  );
  await Promise.race([Promise.all(loads), new Promise((resolve) => setTimeout(resolve, budgetMs))]);
}

/** Fonts loaded and two frames painted, for `budgetMs` at most. */
async function settled(budgetMs: number): Promise<void> {
  const frame = () => new Promise<void>((resolve) => requestAnimationFrame(() => resolve()));
  const ready = (async () => {
    await document.fonts.ready;
    await frame();
    await frame();
  })();
  await Promise.race([ready, new Promise((resolve) => setTimeout(resolve, budgetMs))]);
}

function pageHeight(): number {
  return Math.max(document.documentElement.scrollHeight, document.body?.scrollHeight ?? 0, 1);
}
