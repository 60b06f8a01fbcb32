import { invalidArgument, type ServiceError, targetFailure } from '@webutil/kit';
import { type BrowserContext, type HTTPResponse, type Page, TimeoutError, type Viewport } from 'puppeteer-core';
import type { Lease } from './browser-pool.js';
import { boundCapture, type Clip } from './capture-bounds.js';
import type { ContentBlocking } from './content-blocking.js';
import { DEVICES, type Device } from './devices.js';
import { EgressProxy, type EgressProxyOptions, REFUSAL_HEADER } from './egress-proxy.js';
import { netFailure } from './net-errors.js';
import { BOUNDS, EMPTY_TEMPLATE, type PagePrep, type PdfOptions, type ScreenshotOptions } from './options.js';
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
  /** Largest screenshot in device pixels (width × height); a larger capture loses height until it fits. */
  maxCaptureArea: number;
  /** Most PDF pages printed. */
  maxPdfPages: number;
  /** Longest a render waits for its waitForSelector before answering selector_not_found. */
  selectorWaitMaxMs: number;
}

export type RenderJob = { kind: 'screenshot'; options: ScreenshotOptions } | { kind: 'pdf'; options: PdfOptions };

export interface Rendered {
  body: Uint8Array;
  /** The capture was cut to its bounds (capture-bounds.ts): a page or element too tall, too wide or too large. */
  clipped: boolean;
}

export interface PageDeps {
  egress: EgressProxyOptions;
  limits: PageLimits;
  /** blockAds and blockCookieBanners. */
  blocking: ContentBlocking;
}

/** Longest a context may take to close before its browser is considered broken. */
const CLOSE_BOUND_MS = 5_000;

const notRenderable = (message: string) => invalidArgument('NOT_RENDERABLE', message);
const selectorNotFound = (message: string) => invalidArgument('SELECTOR_NOT_FOUND', message);
/** Room Chromium's header or footer gets when the caller set no margin on that side. */
const HEADER_FOOTER_MARGIN = '15mm';

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
    const viewport = viewportOf(job);
    const prep = job.options.prep;
    const main = watchMainFrame(page, url.href, proxy, (reason) => stop.abort(reason));
    closePopups(context, lease);
    await guard(prepare(page, DEVICES[job.options.device], viewport, job));
    const blocking =
      prep.blockAds || prep.blockCookieBanners
        ? await guard(deps.blocking.arm(page, { ads: prep.blockAds, cookies: prep.blockCookieBanners }))
        : undefined;
    clock.end('page');

    const response = await guard(page.goto(url.href, { waitUntil: 'domcontentloaded', timeout: 0 })).catch(
      (err: unknown) => {
        throw stop.aborted ? stop.reason : main.navigationFailure(err);
      },
    );
    main.check(response);
    clock.end('nav');

    const idle = await guard(networkQuiet(page, limits.quietMs, limits.netMaxMs));
    if (prep.waitForSelector) await guard(waitForElement(page, main, prep.waitForSelector, limits.selectorWaitMaxMs));
    if (prep.css || prep.hideSelectors.length > 0) await guard(inPage(page, main, () => addStyle(page, prep)));
    const requestsBeforeScroll = main.requests();
    clock.end('net');

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
    if (blocking) await guard(inPage(page, main, () => blocking.settle()));
    if (prep.delayMs > 0) await guard(new Promise((resolve) => setTimeout(resolve, prep.delayMs)));
    main.check(null);
    clock.end('settle');

    if (job.kind === 'pdf') {
      const body = await guard(printPdf(page, job.options)).catch((err: unknown) => {
        // Chromium refuses ranges that start past the document's last page.
        if (/page range/i.test(String(err))) {
          throw invalidArgument('INVALID_OPTION', 'pageRanges: the page has fewer pages than the ranges ask for');
        }
        throw err;
      });
      clock.end('render');
      return { body, clipped: false };
    }
    const { options } = job;
    let want: Clip;
    if (options.selector) {
      const selector = options.selector;
      const box = await guard(inPage(page, main, () => page.evaluate(elementBox, selector)));
      if (!box) throw selectorNotFound(`selector: no element with a visible box matches ${JSON.stringify(selector)}`);
      want = box;
    } else if (!options.fullPage) {
      want = { x: 0, y: 0, width: viewport.width, height: viewport.height };
    } else {
      const height = await guard(inPage(page, main, () => page.evaluate(pageHeight)));
      want = { x: 0, y: 0, width: viewport.width, height };
    }
    const { clip, clipped } = boundCapture(want, viewport.deviceScaleFactor ?? 1, {
      maxWidthCss: BOUNDS.viewportWidth[1],
      maxHeightPx: limits.maxCapturePixels,
      maxAreaPx: limits.maxCaptureArea,
    });
    const format = options.format;
    const body = await guard(
      page.screenshot({
        type: format,
        ...(format === 'png' ? { optimizeForSpeed: true } : { quality: options.quality }),
        clip,
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

/** The device's viewport, with the size and scale factor a screenshot asked for instead. */
function viewportOf(job: RenderJob): Viewport {
  const viewport = DEVICES[job.options.device].viewport;
  if (job.kind === 'pdf') return viewport;
  const { viewport: size, deviceScaleFactor } = job.options;
  return { ...viewport, ...size, ...(deviceScaleFactor === undefined ? {} : { deviceScaleFactor }) };
}

/**
 * Viewport, user agent, colour scheme and media, set before the page loads; the caller's selectors
 * are checked on the blank page first, so a malformed one fails before any navigation.
 */
async function prepare(page: Page, device: Device, viewport: Viewport, job: RenderJob): Promise<void> {
  page.on('dialog', (dialog) => void dialog.dismiss().catch(() => undefined));
  const prep = job.options.prep;
  const selectors: [string, string][] = [
    ...prep.hideSelectors.map((selector, i): [string, string] => [`hideSelectors[${i}]`, selector]),
    ...(prep.waitForSelector ? [['waitForSelector', prep.waitForSelector] as [string, string]] : []),
    ...(job.kind === 'screenshot' && job.options.selector
      ? [['selector', job.options.selector] as [string, string]]
      : []),
  ];
  if (selectors.length > 0) {
    const bad = await page.evaluate(
      firstInvalidSelector,
      selectors.map(([, selector]) => selector),
    );
    const name = selectors[bad]?.[0];
    if (name) throw invalidArgument('INVALID_SELECTOR', `${name} is not a valid CSS selector`);
  }
  const userAgent = device.userAgent ?? (await page.browser().userAgent()).replace('HeadlessChrome', 'Chrome');
  // One call for the media type and the colour scheme: each of puppeteer's emulateMediaType and
  // emulateMediaFeatures sends the whole emulated media, clearing what the other set.
  const media = await page.createCDPSession();
  await Promise.all([
    page.setViewport(viewport),
    page.setUserAgent(userAgent),
    // The caller's style sheet is added even where the page's Content-Security-Policy forbids inline styles.
    prep.css || prep.hideSelectors.length > 0 ? page.setBypassCSP(true) : undefined,
    media.send('Emulation.setEmulatedMedia', {
      // A PDF shows the page as a visitor sees it (unless asked for print), not its print style sheet.
      media: job.kind === 'pdf' ? job.options.mediaType : '',
      features: [{ name: 'prefers-color-scheme', value: job.options.colorScheme }],
    }),
  ]);
}

/** The caller's style sheet, and its hidden selectors as display: none, as one style element. */
async function addStyle(page: Page, prep: PagePrep): Promise<void> {
  const hidden = prep.hideSelectors.map((selector) => `${selector} { display: none !important; }`).join('\n');
  await page.addStyleTag({ content: `${prep.css}\n${hidden}` });
}

/** Waits, for `maxMs` at most, until an element matches; else selector_not_found. */
async function waitForElement(page: Page, main: MainFrame, selector: string, maxMs: number): Promise<void> {
  try {
    await inPage(page, main, () => page.waitForSelector(selector, { timeout: maxMs }));
  } catch (err) {
    if (!(err instanceof TimeoutError)) throw err;
    throw selectorNotFound(`waitForSelector: no element matched ${JSON.stringify(selector)} within ${maxMs / 1000} s`);
  }
}

/** Prints the page with the caller's layout; a header or footer gets room unless its margin was set. */
function printPdf(page: Page, options: PdfOptions): Promise<Uint8Array> {
  const { headerTemplate, footerTemplate } = options;
  const headerFooter = headerTemplate !== undefined || footerTemplate !== undefined;
  return page.pdf({
    format: options.pageFormat,
    landscape: options.landscape,
    printBackground: options.printBackground,
    scale: options.scale,
    pageRanges: options.pageRanges,
    preferCSSPageSize: options.preferCssPageSize,
    outline: options.outline,
    margin: {
      ...(headerTemplate === undefined ? {} : { top: HEADER_FOOTER_MARGIN }),
      ...(footerTemplate === undefined ? {} : { bottom: HEADER_FOOTER_MARGIN }),
      ...options.margin,
    },
    ...(headerFooter
      ? {
          displayHeaderFooter: true,
          headerTemplate: headerTemplate ?? EMPTY_TEMPLATE,
          footerTemplate: footerTemplate ?? EMPTY_TEMPLATE,
        }
      : {}),
    timeout: 0,
  });
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

/** The index of the first selector the browser cannot parse, or -1. */
function firstInvalidSelector(selectors: string[]): number {
  const fragment = document.createDocumentFragment();
  return selectors.findIndex((selector) => {
    try {
      fragment.querySelector(selector);
      return false;
    } catch {
      return true;
    }
  });
}

/** The first matching element's box in page coordinates (whole pixels), or null when none has one. */
function elementBox(selector: string): { x: number; y: number; width: number; height: number } | null {
  const element = document.querySelector(selector);
  const rect = element?.getBoundingClientRect();
  if (!rect || rect.width < 1 || rect.height < 1) return null;
  const x = Math.floor(rect.left + window.scrollX);
  const y = Math.floor(rect.top + window.scrollY);
  return {
    x,
    y,
    width: Math.ceil(rect.right + window.scrollX) - x,
    height: Math.ceil(rect.bottom + window.scrollY) - y,
  };
}

function pageHeight(): number {
  return Math.max(document.documentElement.scrollHeight, document.body?.scrollHeight ?? 0, 1);
}
