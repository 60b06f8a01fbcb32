/**
 * How many requests one host is sent at once, learned from how it answers (decision 0218,
 * docs/crawling.md): additive increase, multiplicative decrease, as TCP does with its window.
 *
 * - Start at `initial`. Slow start: every fast, clean answer adds one (the limit doubles per round of
 *   answers) until the first trouble; after it, one per `limit` fast answers (a window).
 * - Growth only while the host is busy: an answer to a request sent while fewer than half the
 *   limit were in flight or queued tested nothing, so it adds nothing.
 * - A 429 or 503, a time-out or a connection error halves the limit at once; a slow answer (past
 *   `slowMs`) takes a quarter off. One decrease per window: answers to requests sent before the last
 *   decrease (still in flight when it came) do not decrease it again.
 * - A Retry-After (on a 429 or 503) holds every new request back until it has passed, up to `maxPauseMs`.
 * - Never below 1 nor above `ceiling`. `timeoutsToGiveUp` time-outs in a row mark the host down for
 *   `downForMs`.
 *
 * Pure: time comes from the injected clock, so tests replay any sequence of answers exactly.
 */

/**
 * What a finished request tells the controller about its host: answered fast (under `slowMs`) or
 * slowly; overloaded (429, 503); timed out; failed to connect (refused, reset); or nothing about
 * its load (a DNS or TLS failure, a request cancelled).
 */
export type HostSignal = 'fast' | 'slow' | 'overloaded' | 'timeout' | 'failed' | 'neutral';

export interface HostConcurrencySettings {
  initial: number;
  ceiling: number;
  /** Longest Retry-After pause honoured. */
  maxPauseMs: number;
  /** Time-outs in a row after which the host is given up on for `downForMs`. */
  timeoutsToGiveUp: number;
  downForMs: number;
}

/** Multiplicative decreases. */
export const DECREASE = { trouble: 0.5, slow: 0.75 } as const;

/** A request as the controller saw it sent: its place in the host's sequence and the load it went out under. */
export interface Sent {
  seq: number;
  /** Requests in flight to the host once this one was sent (itself included), and those queued behind it. */
  inFlight: number;
}

/** What a controller learned of its host, for a budget kept outside the process (shared by replicas). */
export interface HostConcurrencyState {
  limit: number;
  slowStart: boolean;
  streak: number;
  seq: number;
  decreasedAtSeq: number;
  timeoutsInARow: number;
  pausedUntil: number;
  downUntil: number;
}

export class HostConcurrency {
  /** Requests allowed in flight. */
  limit: number;
  /** The highest and the lowest limit reached. */
  peak: number;
  lowest: number;
  active = 0;
  /** The most requests in flight at once. */
  peakActive = 0;
  pausedUntil = 0;
  downUntil = 0;
  private slowStart = true;
  private streak = 0;
  private seq = 0;
  /** Requests sent before this one were in flight at the last decrease. */
  private decreasedAtSeq = 0;
  private timeoutsInARow = 0;

  constructor(
    private readonly settings: HostConcurrencySettings,
    private readonly now: () => number = Date.now,
  ) {
    this.limit = Math.max(1, Math.min(settings.initial, settings.ceiling));
    this.peak = this.limit;
    this.lowest = this.limit;
  }

  /** What it learned, to be kept elsewhere and restored. */
  state(): HostConcurrencyState {
    const { limit, slowStart, streak, seq, decreasedAtSeq, timeoutsInARow, pausedUntil, downUntil } = this;
    return { limit, slowStart, streak, seq, decreasedAtSeq, timeoutsInARow, pausedUntil, downUntil };
  }

  /** Takes up a state kept elsewhere, with the requests in flight to the host now. */
  restore(state: HostConcurrencyState, active: number): void {
    ({
      limit: this.limit,
      slowStart: this.slowStart,
      streak: this.streak,
      seq: this.seq,
      decreasedAtSeq: this.decreasedAtSeq,
      timeoutsInARow: this.timeoutsInARow,
      pausedUntil: this.pausedUntil,
      downUntil: this.downUntil,
    } = state);
    this.active = active;
    this.peak = Math.max(this.peak, state.limit);
    this.lowest = Math.min(this.lowest, state.limit);
  }

  /** Whether a request may be sent now. */
  canSend(): boolean {
    return this.active < this.limit && this.pausedUntil <= this.now() && !this.isDown();
  }

  isDown(): boolean {
    return this.downUntil > this.now();
  }

  /**
   * Records a request sent; its answer is reported with answered(). `waiting`: requests to the host
   * queued behind it, which count as load too (a burst's first request tests the limit as its last does).
   */
  send(waiting = 0): Sent {
    this.active++;
    this.peakActive = Math.max(this.peakActive, this.active);
    return { seq: ++this.seq, inFlight: this.active + waiting };
  }

  /** Adapts the limit to an answer (or its absence); `retryAfterMs` pauses the host. */
  answered(sent: Sent, signal: HostSignal, retryAfterMs?: number): void {
    this.active = Math.max(0, this.active - 1);
    const now = this.now();
    if (retryAfterMs !== undefined && retryAfterMs > 0)
      this.pausedUntil = Math.max(this.pausedUntil, now + Math.min(retryAfterMs, this.settings.maxPauseMs));
    this.timeoutsInARow = signal === 'timeout' ? this.timeoutsInARow + 1 : 0;
    if (this.timeoutsInARow >= this.settings.timeoutsToGiveUp) {
      this.downUntil = now + this.settings.downForMs;
      this.timeoutsInARow = 0;
    }
    if (signal === 'fast') {
      this.grow(sent);
      return;
    }
    if (signal === 'neutral') return;
    this.slowStart = false;
    this.streak = 0;
    // Sent before the last decrease: its trouble is already answered for.
    if (sent.seq <= this.decreasedAtSeq) return;
    const factor = signal === 'slow' ? DECREASE.slow : DECREASE.trouble;
    this.limit = Math.max(1, Math.floor(this.limit * factor));
    this.lowest = Math.min(this.lowest, this.limit);
    this.decreasedAtSeq = this.seq;
  }

  private grow(sent: Sent): void {
    if (sent.inFlight * 2 < this.limit) return;
    if (!this.slowStart && ++this.streak < this.limit) return;
    this.streak = 0;
    this.limit = Math.min(this.settings.ceiling, this.limit + 1);
    this.peak = Math.max(this.peak, this.limit);
  }
}
