import { counter, FairQueue, gauge, type Logger, resourceExhausted, type Sharer } from '@webutil/kit';
import puppeteer, { type Browser, type BrowserContext, type CDPSession } from 'puppeteer-core';

export interface BrowserPoolOptions {
  executablePath: string;
  /** Chromium's own sandbox (namespaces and seccomp-bpf) on; off adds --no-sandbox. */
  sandbox: boolean;
  /** Chromium processes kept running. */
  browsers: number;
  /** Renders one browser runs at once. */
  pagesPerBrowser: number;
  /**
   * Renders that may wait for a free browser, shared fairly among callers (FairQueue); a caller
   * past its share is refused at once (429), and so is everyone past twice the depth (503).
   */
  queueDepth: number;
  log: Logger;
}

/** A browser lent to one render; release it exactly once. */
export interface Lease {
  browser: Browser;
  /** Every download the context's pages start is refused (none reaches the disk) and counted. */
  refuseDownloads(context: BrowserContext): Promise<void>;
  /**
   * Closes a page (a pop-up) from the browser's side: a pop-up showing a dialog pauses the renderer
   * it shares with its opener, and would answer nothing sent to the page itself.
   */
  closeTarget(targetId: string): Promise<void>;
  release(): void;
  /** The browser misbehaved (a context would not close): replace it. */
  discard(): void;
}

interface Slot {
  browser?: Browser;
  /** The browser's own CDP session, which hears of downloads in every context. */
  control?: CDPSession;
  busy: number;
  /** Consecutive failed launches, for the back-off. */
  failures: number;
  launching?: Promise<void>;
}

interface Waiter {
  grant(lease: Lease): void;
  fail(err: unknown): void;
}

/**
 * Whether Chromium runs its own sandbox, from RENDER_CHROMIUM_SANDBOX. auto: on, except as root,
 * where Chromium refuses to start with it; a deployment says on or off.
 */
export function chromiumSandbox(setting: 'auto' | 'on' | 'off', uid = process.getuid?.()): boolean {
  return setting === 'auto' ? uid !== 0 : setting === 'on';
}

/**
 * Features whose renderer processes no render uses: headless Chromium is the whole browser, with a
 * window per context that preloads the omnibox's pop-up as a WebUI page in a renderer of its own,
 * and it starts a spare renderer for the next navigation, which a context closed after one page
 * never makes. Each render would start three renderers, two of them wasted: most of a render's
 * CPU (docs/decisions/0193-render-cpu-per-render.md). Unknown names are ignored by Chromium.
 */
export const UNUSED_RENDERER_FEATURES = [
  'WebUIOmniboxPopup',
  'WebUIOmniboxAimPopup',
  'WebUIOmniboxFullPopup',
  'SpareRendererForSitePerProcess',
];

/**
 * Chromium's flags. No debugging port (puppeteer talks over a pipe), so no page can reach the
 * browser's own control endpoint; the default context's proxy is a closed port, so only contexts
 * created with the render's egress proxy can fetch anything; WebRTC may not send UDP around it.
 */
export function chromiumArgs(sandbox: boolean): string[] {
  return [
    ...(sandbox ? [] : ['--no-sandbox']),
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-dev-shm-usage',
    `--disable-features=${['Translate', 'MediaRouter', 'OptimizationHints', ...UNUSED_RENDERER_FEATURES].join(',')}`,
    '--force-webrtc-ip-handling-policy=disable_non_proxied_udp',
    '--proxy-server=http://127.0.0.1:9',
    '--proxy-bypass-list=<-loopback>',
    '--no-first-run',
    '--no-default-browser-check',
  ];
}

/** A refusal to wait for a browser; a render takes about a second, so a retry after 2 s finds room. */
const busy = (message: string) => resourceExhausted('RENDER_BUSY', message, 2);
/** A caller's own waiting renders fill its share of the queue: its doing, so 429 (the edge's code for it). */
const overShare = () =>
  resourceExhausted(
    'CONCURRENCY_LIMITED',
    "this caller's renders fill its share of the render queue (every browser is busy and other callers wait " +
      'too); retry when one has finished',
    2,
  );

/** Who a render is for when its request names no caller (an internal consumer): all such share one place. */
const UNNAMED: Sharer = { subject: '', weight: 1 };

/** Pools of this process, read by the gauges when scraped. */
const pools = new Set<BrowserPool>();
const sum = (read: (pool: BrowserPool) => number) => [...pools].reduce((n, pool) => n + read(pool), 0);

gauge({
  name: 'webutil_render_open_pages',
  help: 'Browser pages open for renders (popups included), read from Chromium when scraped',
  collect() {
    this.set(sum((pool) => pool.openPages()));
  },
});
gauge({
  name: 'webutil_render_open_contexts',
  help: 'Browser contexts open for renders, read from Chromium when scraped',
  collect() {
    this.set(sum((pool) => pool.openContexts()));
  },
});
gauge({
  name: 'webutil_render_queue_length',
  help: 'Renders waiting for a browser',
  collect() {
    this.set(sum((pool) => pool.queueLength()));
  },
});
const downloadsRefused = counter({
  name: 'webutil_render_downloads_refused_total',
  help: 'Downloads pages started (a script, a link, a URL that is a file) that Chromium refused',
});
const restarts = counter({
  name: 'webutil_render_browser_restarts_total',
  help: 'Chromium processes launched again after one crashed, was killed or misbehaved',
});

/**
 * Long-lived Chromium processes and the queue in front of them. A render leases a browser with a
 * free page slot (the least busy one); when none is free it waits until a slot frees or its wait
 * ends. The queue is fair among callers (FairQueue): a freed page goes to the waiting caller
 * holding the fewest pages for its plan's weight, and a caller past its share of the queue is
 * refused at once. A browser that disconnects (crashed, killed) is launched again, with a back-off
 * while launches keep failing.
 */
export class BrowserPool {
  private readonly slots: Slot[];
  private readonly waiters: FairQueue<Waiter>;
  private closed = false;

  private constructor(private readonly options: BrowserPoolOptions) {
    this.slots = Array.from({ length: options.browsers }, () => ({ busy: 0, failures: 0 }));
    this.waiters = new FairQueue(options.queueDepth);
  }

  static async start(options: BrowserPoolOptions): Promise<BrowserPool> {
    const pool = new BrowserPool(options);
    await Promise.all(pool.slots.map((slot) => pool.launch(slot)));
    pools.add(pool);
    return pool;
  }

  /** Browser pages of render contexts across every browser (the default context's excluded). */
  openPages(): number {
    let count = 0;
    for (const { browser } of this.slots) {
      if (!browser?.connected) continue;
      const fallback = browser.defaultBrowserContext();
      count += browser.targets().filter((t) => t.type() === 'page' && t.browserContext() !== fallback).length;
    }
    return count;
  }

  queueLength(): number {
    return this.waiters.length;
  }

  openContexts(): number {
    return this.slots.reduce(
      (n, { browser }) => n + (browser?.connected ? browser.browserContexts().length - 1 : 0),
      0,
    );
  }

  /** Pages `subject` holds now. */
  heldBy(subject: string): number {
    return this.waiters.heldBy(subject);
  }

  /**
   * A browser for one render of `caller`. Refuses at once when the caller's renders fill its share
   * of the queue (CONCURRENCY_LIMITED) or the queue is full (RENDER_BUSY); otherwise waits until
   * `waitUntil` (epoch ms) at most, or until the signal aborts.
   */
  acquire(signal: AbortSignal, waitUntil: number, caller: Sharer = UNNAMED): Promise<Lease> {
    const free = this.freeLease(caller.subject);
    if (free) return Promise.resolve(free);
    const admission = this.waiters.admission(caller);
    if (admission === 'over-share') return Promise.reject(overShare());
    if (admission === 'full') {
      return Promise.reject(busy('every browser is busy and the render queue is full; retry shortly'));
    }
    return new Promise<Lease>((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        this.waiters.remove(waiter);
      };
      const waiter: Waiter = {
        grant: (lease) => {
          done();
          resolve(lease);
        },
        fail: (err) => {
          done();
          reject(err);
        },
      };
      const onAbort = () => waiter.fail(signal.reason);
      const timer = setTimeout(
        () => waiter.fail(busy('no browser became free in time; retry shortly')),
        Math.max(0, waitUntil - Date.now()),
      );
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(caller, waiter);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    pools.delete(this);
    for (let waiter = this.waiters.next(); waiter; waiter = this.waiters.next()) {
      waiter.item.fail(busy('the service is stopping'));
    }
    await Promise.all(this.slots.map((slot) => slot.browser?.close().catch(() => undefined)));
  }

  /** A lease on the least busy browser with a free page, counted as held by `subject`. */
  private freeLease(subject: string): Lease | undefined {
    let best: Slot | undefined;
    for (const slot of this.slots) {
      if (!slot.browser?.connected || slot.busy >= this.options.pagesPerBrowser) continue;
      if (!best || slot.busy < best.busy) best = slot;
    }
    if (!best?.browser || !best.control) return undefined;
    const slot = best;
    const browser = best.browser;
    const control = best.control;
    slot.busy++;
    const unhold = this.waiters.hold(subject);
    let returned = false;
    const giveBack = () => {
      if (returned) return;
      returned = true;
      slot.busy--;
      unhold();
      this.serveWaiters();
    };
    return {
      browser,
      refuseDownloads: async (context) => {
        await control.send('Browser.setDownloadBehavior', {
          behavior: 'deny',
          ...(context.id === undefined ? {} : { browserContextId: context.id }),
          eventsEnabled: true,
        });
      },
      closeTarget: async (targetId) => {
        await control.send('Target.closeTarget', { targetId });
      },
      release: giveBack,
      discard: () => {
        this.options.log.warn('a browser stopped answering: replacing it');
        // Disconnecting ends the process and triggers the relaunch below.
        browser.process()?.kill('SIGKILL');
        giveBack();
      },
    };
  }

  /** Free pages go to waiters, each to the waiting caller holding the fewest for its weight. */
  private serveWaiters(): void {
    while (this.waiters.length > 0 && this.hasFreePage()) {
      const waiter = this.waiters.next();
      const lease = waiter && this.freeLease(waiter.sharer.subject);
      if (waiter && lease) waiter.item.grant(lease);
    }
  }

  private hasFreePage(): boolean {
    return this.slots.some((s) => s.browser?.connected && s.control && s.busy < this.options.pagesPerBrowser);
  }

  private launch(slot: Slot): Promise<void> {
    slot.launching ??= (async () => {
      try {
        const browser = await puppeteer.launch({
          executablePath: this.options.executablePath,
          headless: true,
          pipe: true,
          args: chromiumArgs(this.options.sandbox),
          defaultViewport: null,
          handleSIGINT: false,
          handleSIGTERM: false,
          handleSIGHUP: false,
        });
        // The window Chromium opens at start serves no render.
        for (const page of await browser.pages()) await page.close().catch(() => undefined);
        const control = await browser.target().createCDPSession();
        control.on('Browser.downloadProgress', (event) => {
          if (event.state === 'canceled') downloadsRefused.inc();
        });
        slot.control = control;
        slot.browser = browser;
        slot.failures = 0;
        browser.once('disconnected', () => this.lost(slot, browser));
        this.serveWaiters();
      } catch (err) {
        slot.failures++;
        this.options.log.error({ err, failures: slot.failures }, 'Chromium did not start');
        if (slot.failures === 1 && this.slots.every((s) => !s.browser)) throw err;
        this.relaunchLater(slot);
      } finally {
        slot.launching = undefined;
      }
    })();
    return slot.launching;
  }

  private lost(slot: Slot, browser: Browser): void {
    if (slot.browser !== browser) return;
    slot.browser = undefined;
    slot.control = undefined;
    // Renders on it fail on their own (their CDP calls reject); their leases still count until released.
    if (this.closed) return;
    this.options.log.warn('Chromium disconnected (crashed or killed): launching it again');
    restarts.inc();
    void this.launch(slot).catch(() => undefined);
  }

  private relaunchLater(slot: Slot): void {
    if (this.closed) return;
    const delay = Math.min(10_000, 250 * 2 ** Math.min(slot.failures, 6));
    setTimeout(() => void this.launch(slot).catch(() => undefined), delay).unref();
  }
}
