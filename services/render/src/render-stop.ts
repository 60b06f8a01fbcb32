import { status } from '@grpc/grpc-js';
import { deadlineExceeded, ServiceError } from '@webutil/kit';
import type { Browser } from 'puppeteer-core';

export const renderTimeout = (ms: number) =>
  deadlineExceeded('RENDER_TIMEOUT', `the page did not finish rendering within ${Math.round(ms / 1000)} s`);
/** The pool launches a lost browser again at once (about a second), so a retry after 2 s finds one. */
export const browserCrashed = () =>
  new ServiceError(status.ABORTED, 'BROWSER_CRASHED', 'the browser rendering this page stopped; retry the request', 2);

/**
 * What ends one render early: its time budget, the caller cancelling, the browser going away, or
 * the render itself (a crashed tab). end() lets go of the timer and every listener; it must run
 * for every render, since a listener left on the long-lived browser keeps the finished render
 * (its result buffers included) alive for as long as the browser runs.
 */
export class RenderStop {
  private readonly controller = new AbortController();
  private readonly stopped: Promise<never>;
  private readonly timer: NodeJS.Timeout;
  private readonly onCancel = () => this.abort(this.caller.reason);
  private readonly onDisconnect = () => this.abort(browserCrashed());

  constructor(
    private readonly browser: Browser,
    private readonly caller: AbortSignal,
    timeoutMs: number,
  ) {
    this.timer = setTimeout(() => this.abort(renderTimeout(timeoutMs)), timeoutMs);
    caller.addEventListener('abort', this.onCancel, { once: true });
    // on, not once: puppeteer's once() registers a wrapper that off(onDisconnect) cannot remove.
    browser.on('disconnected', this.onDisconnect);
    const signal = this.controller.signal;
    this.stopped = new Promise<never>((_, reject) =>
      signal.addEventListener('abort', () => reject(signal.reason), { once: true }),
    );
    this.stopped.catch(() => undefined);
  }

  get aborted(): boolean {
    return this.controller.signal.aborted;
  }

  /** Why the render stopped, once it has. */
  get reason(): unknown {
    return this.controller.signal.reason;
  }

  abort(reason: unknown): void {
    this.controller.abort(reason);
  }

  /** The work, or the render's stop, whichever comes first. */
  guard<T>(work: Promise<T>): Promise<T> {
    work.catch(() => undefined);
    return Promise.race([work, this.stopped]);
  }

  end(): void {
    clearTimeout(this.timer);
    this.caller.removeEventListener('abort', this.onCancel);
    this.browser.off('disconnected', this.onDisconnect);
  }
}
