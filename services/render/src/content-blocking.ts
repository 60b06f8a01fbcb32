import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { FiltersEngine, Request } from '@ghostery/adblocker';
import { type Logger, unavailable } from '@webutil/kit';
import type { HTTPRequest, Page } from 'puppeteer-core';

/**
 * blockAds and blockCookieBanners (docs/decisions/0192-content-blocking.md). Ads: EasyList and
 * EasyPrivacy as Debian's uBlock Origin package installs them, matched by Ghostery's filter engine:
 * matching requests are aborted in the browser and the lists' element-hiding rules for the page
 * are added. Cookie banners: DuckDuckGo's autoconsent with the rules its npm package ships, which
 * finds the consent manager and refuses consent or hides it. Nothing is downloaded at run time.
 */

/** The lists RENDER_FILTER_LISTS names by default: Debian's webext-ublock-origin-chromium. */
export const DEBIAN_FILTER_LISTS = [
  '/usr/share/chromium/extensions/ublock-origin/assets/thirdparties/easylist/easylist.txt',
  '/usr/share/chromium/extensions/ublock-origin/assets/thirdparties/easylist/easyprivacy.txt',
];

/** Longest a render waits for a consent manager it found to be refused or hidden. */
const CONSENT_DONE_MAX_MS = 3_000;

const require = createRequire(import.meta.url);

/** Parses the lists off the event loop (several seconds of CPU) and hands the engine over serialized. */
function parseInWorker(text: string): Promise<Uint8Array> {
  const worker = new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
     const { FiltersEngine } = require(workerData.module);
     const engine = FiltersEngine.parse(workerData.text, { loadNetworkFilters: true, loadCosmeticFilters: true });
     parentPort.postMessage(engine.serialize());`,
    { eval: true, workerData: { text, module: require.resolve('@ghostery/adblocker') } },
  );
  return new Promise((resolve, reject) => {
    worker.once('message', (bytes: Uint8Array) => {
      resolve(bytes);
      void worker.terminate();
    });
    worker.once('error', reject);
  });
}

export class ContentBlocking {
  private engine: FiltersEngine | undefined;
  private readonly engineReady: Promise<FiltersEngine | undefined>;
  private readonly consentScript: string;
  private readonly consentRules: unknown;

  /** Starts parsing the lists at once; a render that needs them waits for the parse. */
  constructor(listPaths: readonly string[], log: Logger) {
    // The package exports its rules but not the content script built for Puppeteer and Playwright.
    const rules = require.resolve('@duckduckgo/autoconsent/rules/rules.json');
    this.consentScript = readFileSync(path.join(path.dirname(rules), '../dist/autoconsent.playwright.js'), 'utf8');
    this.consentRules = JSON.parse(readFileSync(rules, 'utf8'));
    let text: string | undefined;
    try {
      text = listPaths.map((path) => readFileSync(path, 'utf8')).join('\n');
    } catch (err) {
      log.warn(
        { err, listPaths },
        'filter lists not found: blockAds is refused (install webext-ublock-origin-chromium)',
      );
    }
    this.engineReady = text
      ? parseInWorker(text).then(
          (bytes) => {
            this.engine = FiltersEngine.deserialize(bytes);
            log.info({ lists: listPaths.length }, 'ad filter lists loaded');
            return this.engine;
          },
          (err: unknown) => {
            log.error({ err }, 'ad filter lists could not be parsed: blockAds is refused');
            return undefined;
          },
        )
      : Promise.resolve(undefined);
  }

  /** Whether the filter lists are loaded (or failed to), for tests and readiness. */
  ready(): Promise<unknown> {
    return this.engineReady;
  }

  /**
   * Arms a page before it navigates: request blocking for ads, autoconsent for banners. Returns what
   * to do once the page has loaded (element hiding, waiting for a consent manager to be handled).
   */
  async arm(page: Page, options: { ads: boolean; cookies: boolean }): Promise<{ settle(): Promise<void> }> {
    const engine = options.ads ? await this.engineReady : undefined;
    if (options.ads && !engine) {
      throw unavailable('ADS_LISTS_UNAVAILABLE', 'blockAds is not available: the filter lists are not installed');
    }
    if (engine) {
      await page.setRequestInterception(true);
      page.on('request', (request) => void this.decide(engine, request));
    }
    const consent = options.cookies ? await this.armConsent(page) : undefined;
    return {
      settle: async () => {
        if (engine) await this.hideAds(engine, page);
        await consent?.();
      },
    };
  }

  private async decide(engine: FiltersEngine, request: HTTPRequest): Promise<void> {
    if (request.isInterceptResolutionHandled()) return;
    const frame = request.frame();
    const { match } = engine.match(
      Request.fromRawDetails({
        url: request.url(),
        sourceUrl: frame?.url() || request.url(),
        type: request.resourceType() as Parameters<typeof Request.fromRawDetails>[0]['type'],
      }),
    );
    // The page's own document is never blocked: a caller asked for it.
    const blocked = match && !(request.isNavigationRequest() && frame === frame?.page().mainFrame());
    await (blocked ? request.abort('blockedbyclient') : request.continue()).catch(() => undefined);
  }

  /** The lists' element-hiding rules for the page's host. */
  private async hideAds(engine: FiltersEngine, page: Page): Promise<void> {
    const url = new URL(page.url());
    const { styles } = engine.getCosmeticsFilters({
      url: url.href,
      hostname: url.hostname,
      domain: url.hostname,
      getBaseRules: true,
      getInjectionRules: false,
      getExtendedRules: false,
      getRulesFromHostname: true,
      getRulesFromDOM: false,
    });
    if (styles) await page.addStyleTag({ content: styles });
  }

  /**
   * autoconsent's content script in every document of the page, answered from here with the
   * bundled rules; it refuses consent (or hides the banner) when it finds a consent manager.
   * The returned wait lasts until that is done, CONSENT_DONE_MAX_MS at most, and only if one was found.
   */
  private async armConsent(page: Page): Promise<() => Promise<void>> {
    let found = false;
    let finish: () => void = () => undefined;
    const done = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const send = (message: unknown) =>
      page
        .evaluate(
          (m) =>
            (window as unknown as { autoconsentReceiveMessage?(m: unknown): unknown }).autoconsentReceiveMessage?.(m),
          message,
        )
        .catch(() => undefined);
    await page.exposeFunction(
      'autoconsentSendMessage',
      async (message: { type?: string; id?: string; code?: string }) => {
        switch (message?.type) {
          case 'init':
            return send({ type: 'initResp', config: CONSENT_CONFIG, rules: this.consentRules });
          case 'eval': {
            // The rules' own snippets (bundled), run in the page like the content script itself.
            const result = await page.evaluate(String(message.code)).catch(() => false);
            return send({ type: 'evalResp', id: message.id, result });
          }
          case 'cmpDetected':
          case 'popupFound':
            found = true;
            return;
          case 'autoconsentDone':
          case 'autoconsentError':
          case 'optOutResult':
            finish();
            return;
        }
      },
    );
    await page.evaluateOnNewDocument(this.consentScript);
    return async () => {
      if (!found) return;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([done, new Promise((resolve) => (timer = setTimeout(resolve, CONSENT_DONE_MAX_MS)))]);
      clearTimeout(timer);
    };
  }
}

/** autoconsent's settings: refuse consent, hide what it cannot refuse, no logging. */
const CONSENT_CONFIG = {
  enabled: true,
  autoAction: 'optOut',
  disabledCmps: [],
  enablePrehide: true,
  enableCosmeticRules: true,
  enableGeneratedRules: true,
  detectRetries: 20,
  isMainWorld: false,
  prehideTimeout: 2000,
  enableHeuristicDetection: true,
  heuristicMode: 'tier2',
  logs: {
    lifecycle: false,
    rulesteps: false,
    detectionsteps: false,
    evals: false,
    errors: false,
    messages: false,
    waits: false,
  },
};
