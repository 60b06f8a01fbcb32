import { type Logger, readGrpcError } from '@webutil/kit';
import type { Quota, RateWindow, RequestCount } from '@webutil/proto/webutil/billing/v1/billing';
import { type BillingClient, billingCall } from '../billing-client.js';

interface View {
  quota: Quota;
  /** Billing's window when it answered, counting on here. */
  rate: RateWindow;
  seenAt: number;
}

const MINUTE_MS = 60_000;
/** How often counted reads go to billing, and stale views are dropped. */
const REPORT_EVERY_MS = 250;

/** A free read answered from the view: the quota, and how long to wait when past the rate. */
export interface ViewRead {
  quota: Quota;
  rate: RateWindow;
  retryAfterSeconds?: number;
}

/**
 * The edge's short-lived view of each caller, keyed by credential: its quota and rate window as
 * billing last answered them (every authorization refreshes it). Free reads of the caller's own
 * quota, the call clients make most, are answered from it for at most `ttlMs` after billing last
 * spoke, without a billing round trip. They still count toward the caller's rate: counted here,
 * refused here past the limit, and reported to billing in batches, as Google's ESP caches Check
 * answers and aggregates Reports to Service Control. What this edge spends or returns moves the
 * view at once; what happens elsewhere (another edge, a top-up, a revoked key or ended session)
 * shows within `ttlMs`. Whatever spends credits always asks billing.
 */
export class CallerViews {
  private readonly views = new Map<string, View>();
  /** Reads answered here and not yet reported, by rate key and minute. */
  private readonly unreported = new Map<string, RequestCount>();
  /** Requests of each caller on their way to billing, which will count them: a view counts them too. */
  private readonly asking = new Map<string, number>();
  /** Credits this edge has given back to each caller so far (failed calls, ended leases). */
  private readonly returned = new Map<string, number>();
  /** Reads of each caller's credits on their way to billing, which count on `returned` staying. */
  private readonly reading = new Map<string, number>();
  private readonly timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly ttlMs: number,
    private readonly billing: BillingClient,
    private readonly log: Logger,
  ) {
    if (ttlMs > 0) this.timer = setInterval(() => void this.tick(), Math.min(REPORT_EVERY_MS, ttlMs)).unref();
  }

  /**
   * A request of the caller goes to billing: until it is answered, views count it as used (it is
   * counted there), so reads answered here meanwhile cannot take the caller past its rate.
   * `answered` returns the credits this edge gave back to the caller meanwhile, which billing's
   * answer may not include yet.
   */
  asks(key: string): () => number {
    this.asking.set(key, (this.asking.get(key) ?? 0) + 1);
    const returned = this.returnedSince(key);
    return () => {
      const left = (this.asking.get(key) ?? 1) - 1;
      if (left > 0) this.asking.set(key, left);
      else this.asking.delete(key);
      return returned();
    };
  }

  /**
   * A read of the caller's credits goes to billing, counting nothing: the returned function, called
   * once its answer is in, gives the credits this edge gave back to the caller meanwhile, which
   * billing's answer may not include. Until then the caller's count of them is kept.
   */
  returnedSince(key: string): () => number {
    const returnedBefore = this.returned.get(key) ?? 0;
    this.reading.set(key, (this.reading.get(key) ?? 0) + 1);
    let meanwhile: number | undefined;
    return () => {
      if (meanwhile !== undefined) return meanwhile;
      meanwhile = Math.max(0, (this.returned.get(key) ?? 0) - returnedBefore);
      const left = (this.reading.get(key) ?? 1) - 1;
      if (left > 0) this.reading.set(key, left);
      else this.reading.delete(key);
      return meanwhile;
    };
  }

  /** Billing's latest answer for the caller. */
  remember(key: string, quota: Quota | undefined, rate: RateWindow | undefined): void {
    if (!this.timer || !quota || !rate) return;
    // Billing has not heard of the reads counted here since the last report, and an answer to an
    // earlier request may arrive after a later one's: the window's count only grows.
    const unreported = this.unreported.get(`${rate.key}|${rate.minute}`)?.requests ?? 0;
    const earlier = this.views.get(key)?.rate;
    const counted = earlier?.minute === rate.minute ? earlier.used : 0;
    const used = Math.max(counted, rate.used + unreported);
    this.views.set(key, { quota, rate: { ...rate, used }, seenAt: Date.now() });
  }

  /** The caller's credits left as billing last answered, however old; undefined if it is not known here. */
  remaining(key: string): number | undefined {
    return this.views.get(key)?.quota.remaining;
  }

  /** Drops the views of every caller of the rate subject (an account); returns their keys. */
  forgetSubject(subject: string): string[] {
    const keys = [...this.views].filter(([, view]) => view.rate.key === subject).map(([key]) => key);
    for (const key of keys) this.views.delete(key);
    return keys;
  }

  /** Drops the caller's view: the next request asks billing. */
  forget(key: string): void {
    this.views.delete(key);
  }

  /** Billing refused the caller for its rate again: its view (past the limit) stands for another `ttlMs`. */
  stillLimited(key: string): void {
    const view = this.views.get(key);
    if (view) view.seenAt = Date.now();
  }

  /**
   * Credits given back (a failed call's, an ended lease's unused ones): billing has them once the
   * settlement lands; an answer to a request sent before then may be short of them (see `asks`).
   */
  refund(key: string, credits: number): void {
    this.returned.set(key, (this.returned.get(key) ?? 0) + credits);
    const view = this.views.get(key);
    if (view) view.quota = { ...view.quota, remaining: view.quota.remaining + credits };
  }

  /**
   * A request of the caller, against its fresh view: past the caller's rate it is refused here;
   * a free read of its quota (`answer`) is answered here; both are counted. Undefined: billing
   * decides (and counts).
   */
  check(key: string, answer: boolean): ViewRead | undefined {
    const view = this.views.get(key);
    const now = Date.now();
    if (!view || now - view.seenAt >= this.ttlMs) return undefined;
    const minute = Math.floor(now / MINUTE_MS);
    // A new window is billing's to open.
    if (minute !== Number(view.rate.minute)) return undefined;
    const over = view.rate.used + (this.asking.get(key) ?? 0) >= view.rate.perMinute;
    if (!over && !answer) return undefined;
    view.rate.used++;
    this.count(view.rate.key, view.rate.minute);
    if (!over) return { quota: view.quota, rate: view.rate };
    return {
      quota: view.quota,
      rate: view.rate,
      retryAfterSeconds: Math.max(1, Math.ceil(((minute + 1) * MINUTE_MS - now) / 1000)),
    };
  }

  /** The caller's fresh view, counting nothing (reads held to a bound of their own). */
  peek(key: string): ViewRead | undefined {
    const view = this.views.get(key);
    if (!view || Date.now() - view.seenAt >= this.ttlMs) return undefined;
    return { quota: view.quota, rate: view.rate };
  }

  /** Billing's name of the caller behind a credential (its rate window's key), while its view is kept. */
  subjectOf(key: string): string | undefined {
    return this.views.get(key)?.rate.key;
  }

  /** Reports what is counted (on shutdown too). */
  async flush(): Promise<void> {
    if (this.unreported.size === 0) return;
    const counts = [...this.unreported.values()];
    this.unreported.clear();
    try {
      await this.billing.countRequests({ counts }, billingCall('count-requests'));
    } catch (err) {
      // Best effort: a lost report undercounts a rate for one window, nothing else.
      this.log.warn({ counts: counts.length, err: readGrpcError(err) }, 'reporting counted requests failed');
    }
  }

  close(): void {
    clearInterval(this.timer);
  }

  private count(key: string, minute: string): void {
    const id = `${key}|${minute}`;
    const counted = this.unreported.get(id);
    if (counted) counted.requests++;
    else this.unreported.set(id, { key, minute, requests: 1 });
  }

  private async tick(): Promise<void> {
    const stale = Date.now() - this.ttlMs;
    for (const [key, view] of this.views) if (view.seenAt < stale) this.views.delete(key);
    for (const key of this.returned.keys())
      if (!this.views.has(key) && !this.reading.has(key)) this.returned.delete(key);
    await this.flush();
  }
}
