import type { FetchSettings } from '../config.js';
import { HostConcurrency, type HostConcurrencySettings, type HostSignal, type Sent } from './host-concurrency.js';

/**
 * How many outbound requests may run at once: a global bound for the process, and a per-host bound
 * that adapts to how the host answers (host-concurrency.ts, decision 0218). Waiting requests are
 * handed slots round robin over the hosts. Shared by every scan of the process, so two crawls of
 * one site do not double the load on it.
 */

export type { HostSignal } from './host-concurrency.js';

/**
 * Refusal to send more requests to a host that timed out several times in a row: every further
 * request would only wait out its own time-out too.
 */
export class HostNotAnsweringError extends Error {
  constructor(readonly host: string) {
    super(`${host} did not answer several requests in a row; not asked again for a while`);
    this.name = 'HostNotAnsweringError';
  }
}

/** Reports how the request went; `retryAfterMs` (a 429's or 503's Retry-After) pauses the host. */
export type Release = (signal: HostSignal, retryAfterMs?: number) => void;

/** Where a request waits for its slot: the process's throttle, or a host budget shared by replicas. */
export interface RequestSlots {
  /** Waits for a slot on `host`; the caller must call the returned release exactly once. */
  acquire(host: string, signal?: AbortSignal): Promise<Release>;
}

export interface ThrottleOptions {
  globalLimit: number;
  initialPerHost: number;
  maxPerHost: number;
  /** An answer slower than this lowers the host's limit (the checker judges it). */
  slowMs: number;
  /** Time-outs in a row after which a host is given up on for `downForMs`. */
  timeoutsToGiveUp: number;
  downForMs: number;
  /** Longest Retry-After pause honoured (default 30 s). */
  maxPauseMs?: number;
}

interface HostState {
  control: HostConcurrency;
  lastUsed: number;
  waiters: Waiter[];
}

interface Waiter {
  grant: (release: Release) => void;
  reject: (reason: unknown) => void;
  signal: AbortSignal | undefined;
  host: HostState;
}

/** What the throttle learned of a host (for tests, metrics and the benchmark). */
export interface HostStats {
  limit: number;
  /** The highest and the lowest limit reached. */
  peakLimit: number;
  lowestLimit: number;
  /** The most requests in flight at once. */
  peakActive: number;
}

/** A host idle this long loses its learned limit (and its memory). */
const FORGET_IDLE_MS = 5 * 60_000;

/**
 * The throttle a crawl process fetches through, from its fetch settings; `initialPerHost` defaults
 * to the settings' (the warm-up, on its own loopback site, starts at the maximum).
 */
export function throttleFor(f: FetchSettings, initialPerHost = f.hostConcurrencyInitial): HostThrottle {
  const host = hostConcurrencySettings(f);
  return new HostThrottle({
    globalLimit: f.checkConcurrency,
    initialPerHost,
    maxPerHost: host.ceiling,
    slowMs: f.slowAnswerMs,
    timeoutsToGiveUp: host.timeoutsToGiveUp,
    downForMs: host.downForMs,
    maxPauseMs: host.maxPauseMs,
  });
}

/** A host's adaptive limit from the fetch settings (also a host budget's shared by replicas). */
export function hostConcurrencySettings(f: FetchSettings): HostConcurrencySettings {
  return {
    initial: f.hostConcurrencyInitial,
    ceiling: f.hostConcurrencyMax,
    maxPauseMs: f.maxRetryAfterMs,
    // A host that times out three times in a row is left alone for a minute.
    timeoutsToGiveUp: 3,
    downForMs: 60_000,
  };
}

export class HostThrottle implements RequestSlots {
  private readonly hosts = new Map<string, HostState>();
  /** Waiters by the signal that may cancel them: one abort listener per scan, not per request. */
  private readonly bySignal = new WeakMap<AbortSignal, Set<Waiter>>();
  private active = 0;
  private lastSweep = Date.now();
  private pumpTimer: NodeJS.Timeout | undefined;
  private pumpAt = Infinity;

  constructor(private readonly options: ThrottleOptions) {}

  /** Current per-host limit (for tests and metrics). */
  limitOf(host: string): number {
    return this.hosts.get(host)?.control.limit ?? this.options.initialPerHost;
  }

  statsOf(host: string): HostStats | undefined {
    const control = this.hosts.get(host)?.control;
    return (
      control && {
        limit: control.limit,
        peakLimit: control.peak,
        lowestLimit: control.lowest,
        peakActive: control.peakActive,
      }
    );
  }

  /** Waits for a slot on `host`; the caller must call the returned release exactly once. */
  acquire(host: string, signal?: AbortSignal): Promise<Release> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const state = this.state(host);
    if (state.control.isDown()) return Promise.reject(new HostNotAnsweringError(host));
    return new Promise<Release>((resolve, reject) => {
      const waiter: Waiter = { grant: resolve, reject, signal, host: state };
      if (signal) this.watch(signal).add(waiter);
      state.waiters.push(waiter);
      this.pump();
    });
  }

  private watch(signal: AbortSignal): Set<Waiter> {
    let waiters = this.bySignal.get(signal);
    if (!waiters) {
      const watched = new Set<Waiter>();
      waiters = watched;
      this.bySignal.set(signal, watched);
      signal.addEventListener(
        'abort',
        () => {
          for (const waiter of watched) {
            waiter.host.waiters.splice(waiter.host.waiters.indexOf(waiter), 1);
            waiter.reject(signal.reason);
          }
          watched.clear();
        },
        { once: true },
      );
    }
    return waiters;
  }

  private unwatch(waiter: Waiter): void {
    if (waiter.signal) this.bySignal.get(waiter.signal)?.delete(waiter);
  }

  /** Holds every new request to `host` back for `ms` (a Retry-After read outside a release). */
  pause(host: string, ms: number): void {
    const control = this.state(host).control;
    control.pausedUntil = Math.max(control.pausedUntil, Date.now() + ms);
    this.pump();
  }

  private state(host: string): HostState {
    const now = Date.now();
    let state = this.hosts.get(host);
    if (!state) {
      this.sweep(now);
      const o = this.options;
      state = {
        control: new HostConcurrency({
          initial: o.initialPerHost,
          ceiling: o.maxPerHost,
          maxPauseMs: o.maxPauseMs ?? 30_000,
          timeoutsToGiveUp: o.timeoutsToGiveUp,
          downForMs: o.downForMs,
        }),
        lastUsed: now,
        waiters: [],
      };
      this.hosts.set(host, state);
    }
    state.lastUsed = now;
    return state;
  }

  private sweep(now: number): void {
    if (now - this.lastSweep < FORGET_IDLE_MS) return;
    this.lastSweep = now;
    for (const [host, state] of this.hosts) {
      const { control } = state;
      if (
        control.active === 0 &&
        state.waiters.length === 0 &&
        now - state.lastUsed > FORGET_IDLE_MS &&
        Math.max(control.pausedUntil, control.downUntil) <= now
      ) {
        this.hosts.delete(host);
      }
    }
  }

  /** Hands free slots to waiting hosts, round robin, so one busy host cannot starve the others. */
  private pump(): void {
    const now = Date.now();
    let nextPauseEnd = Infinity;
    let granted = true;
    while (granted && this.active < this.options.globalLimit) {
      granted = false;
      for (const [host, state] of this.hosts) {
        if (this.active >= this.options.globalLimit) break;
        const { control } = state;
        if (state.waiters.length === 0 || control.active >= control.limit) continue;
        if (control.pausedUntil > now) {
          nextPauseEnd = Math.min(nextPauseEnd, control.pausedUntil);
          continue;
        }
        const waiter = state.waiters.shift() as Waiter;
        this.unwatch(waiter);
        const sent = control.send(state.waiters.length);
        this.active++;
        granted = true;
        waiter.grant(this.releaser(host, state, sent));
      }
    }
    if (nextPauseEnd < Infinity) this.wakeAt(nextPauseEnd);
  }

  private wakeAt(at: number): void {
    if (this.pumpTimer && this.pumpAt <= at) return;
    clearTimeout(this.pumpTimer);
    this.pumpAt = at;
    this.pumpTimer = setTimeout(
      () => {
        this.pumpTimer = undefined;
        this.pumpAt = Infinity;
        this.pump();
      },
      Math.max(0, at - Date.now()),
    );
    this.pumpTimer.unref();
  }

  private releaser(host: string, state: HostState, sent: Sent): Release {
    let released = false;
    return (signal, retryAfterMs) => {
      if (released) return;
      released = true;
      this.active--;
      state.lastUsed = Date.now();
      state.control.answered(sent, signal, retryAfterMs);
      if (state.control.isDown()) {
        for (const waiter of state.waiters.splice(0)) {
          this.unwatch(waiter);
          waiter.reject(new HostNotAnsweringError(host));
        }
      }
      this.pump();
    };
  }
}
