import type { FetchSettings } from '../config.js';

/**
 * How many outbound requests may run at once: a global bound for the process, and a per-host
 * bound that adapts. A host starts at `initialPerHost` and, while it answers fast and clean,
 * grows by one per answer (slow start) and later by one per window of answers; a 429, a 503 or a
 * time-out halves it and ends slow start, and a Retry-After pauses the host. So a sturdy site is
 * checked fast and a fragile one is not hammered. Shared by every scan of the process, so two
 * crawls of one site do not double the load on it.
 */

/** What a finished request tells the throttle about its host. */
export type HostSignal = 'fast' | 'slow' | 'overloaded' | 'timeout' | 'failed';

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

export type Release = (signal: HostSignal) => void;

export interface ThrottleOptions {
  globalLimit: number;
  initialPerHost: number;
  maxPerHost: number;
  /** An answer slower than this does not grow the host's limit. */
  slowMs: number;
  /** Time-outs in a row after which a host is given up on for `downForMs`. */
  timeoutsToGiveUp: number;
  downForMs: number;
}

interface HostState {
  limit: number;
  active: number;
  slowStart: boolean;
  /** Clean answers since the limit last grew (congestion avoidance). */
  streak: number;
  pausedUntil: number;
  timeoutsInARow: number;
  downUntil: number;
  lastUsed: number;
  waiters: Waiter[];
}

interface Waiter {
  grant: (release: Release) => void;
  reject: (reason: unknown) => void;
  signal: AbortSignal | undefined;
  host: HostState;
}

/** A host idle this long loses its learned limit (and its memory). */
const FORGET_IDLE_MS = 5 * 60_000;

/**
 * The throttle a crawl process fetches through, from its fetch settings; `initialPerHost` defaults
 * to the settings' (the warm-up, on its own loopback site, starts at the maximum).
 */
export function throttleFor(f: FetchSettings, initialPerHost = f.hostConcurrencyInitial): HostThrottle {
  return new HostThrottle({
    globalLimit: f.checkConcurrency,
    initialPerHost,
    maxPerHost: f.hostConcurrencyMax,
    slowMs: f.slowAnswerMs,
    // A host that times out three times in a row is left alone for a minute.
    timeoutsToGiveUp: 3,
    downForMs: 60_000,
  });
}

export class HostThrottle {
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
    return this.hosts.get(host)?.limit ?? this.options.initialPerHost;
  }

  /** Waits for a slot on `host`; the caller must call the returned release exactly once. */
  acquire(host: string, signal?: AbortSignal): Promise<Release> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    const state = this.state(host);
    if (state.downUntil > Date.now()) return Promise.reject(new HostNotAnsweringError(host));
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

  /** Holds every new request to `host` back for `ms` (Retry-After). */
  pause(host: string, ms: number): void {
    const state = this.state(host);
    state.pausedUntil = Math.max(state.pausedUntil, Date.now() + ms);
    this.pump();
  }

  private state(host: string): HostState {
    const now = Date.now();
    let state = this.hosts.get(host);
    if (!state) {
      this.sweep(now);
      state = {
        limit: this.options.initialPerHost,
        active: 0,
        slowStart: true,
        streak: 0,
        pausedUntil: 0,
        timeoutsInARow: 0,
        downUntil: 0,
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
      if (
        state.active === 0 &&
        state.waiters.length === 0 &&
        now - state.lastUsed > FORGET_IDLE_MS &&
        Math.max(state.pausedUntil, state.downUntil) <= now
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
        if (state.waiters.length === 0 || state.active >= state.limit) continue;
        if (state.pausedUntil > now) {
          nextPauseEnd = Math.min(nextPauseEnd, state.pausedUntil);
          continue;
        }
        const waiter = state.waiters.shift() as Waiter;
        this.unwatch(waiter);
        state.active++;
        this.active++;
        granted = true;
        waiter.grant(this.releaser(host, state));
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

  private releaser(host: string, state: HostState): Release {
    let released = false;
    return (signal) => {
      if (released) return;
      released = true;
      state.active--;
      this.active--;
      state.lastUsed = Date.now();
      this.adapt(state, signal);
      if (state.downUntil > Date.now()) {
        for (const waiter of state.waiters.splice(0)) {
          this.unwatch(waiter);
          waiter.reject(new HostNotAnsweringError(host));
        }
      }
      this.pump();
    };
  }

  private adapt(state: HostState, signal: HostSignal): void {
    const { maxPerHost } = this.options;
    state.timeoutsInARow = signal === 'timeout' ? state.timeoutsInARow + 1 : 0;
    if (state.timeoutsInARow >= this.options.timeoutsToGiveUp) {
      state.downUntil = Date.now() + this.options.downForMs;
      state.timeoutsInARow = 0;
    }
    if (signal === 'overloaded' || signal === 'timeout') {
      state.limit = Math.max(1, Math.floor(state.limit / 2));
      state.slowStart = false;
      state.streak = 0;
    } else if (signal === 'slow') {
      state.slowStart = false;
      state.streak = 0;
    } else if (signal === 'fast') {
      if (state.slowStart) state.limit = Math.min(maxPerHost, state.limit + 1);
      else if (++state.streak >= state.limit) {
        state.limit = Math.min(maxPerHost, state.limit + 1);
        state.streak = 0;
      }
    }
  }
}
