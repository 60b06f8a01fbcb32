import {
  HostConcurrency,
  type HostConcurrencySettings,
  type HostConcurrencyState,
  type HostSignal,
  type Sent,
} from '../../checking/host-concurrency.js';
import type { RequestSlots } from '../../checking/throttle.js';

/**
 * A host's politeness budget held for every replica (decision 0494): the adaptive per-host limit
 * (host-concurrency.ts) with its Retry-After pause, the permits in flight under it, and each
 * origin's Crawl-delay turn. Pure: the record is kept by whoever shares it (host-budget-nats.ts),
 * one compare-and-set per round, and time comes from the caller.
 */

/** Where a distributed audit's replica waits before a request and before a page's Crawl-delay turn. */
export interface HostBudget extends RequestSlots {
  /** Waits for the origin's next Crawl-delay turn, taken in turn with every replica. */
  turn(origin: string, delayMs: number, signal: AbortSignal): Promise<void>;
}

/** A host's record: the controller's state and the permits in flight, each with when it expires. */
export interface HostBudgetRecord extends HostConcurrencyState {
  /** Permit id to its expiry (epoch ms): a replica that dies without giving a permit back loses it then. */
  permits: Record<string, number>;
}

/** A request's end, reported to the host's record on the next round. */
export interface BudgetAnswer {
  permit: string;
  sent: Sent;
  signal: HostSignal;
  retryAfterMs?: number;
}

export interface BudgetRoundInput {
  record: HostBudgetRecord | undefined;
  settings: HostConcurrencySettings;
  answers: readonly BudgetAnswer[];
  /** Requests of this replica waiting for a permit. */
  wanted: number;
  /** Names a new permit (unique across replicas). */
  permitId: () => string;
  /** How long a permit stays held without being given back. */
  permitMs: number;
  now: number;
}

export interface BudgetRound {
  record: HostBudgetRecord;
  /** Permits granted, in the order of the waiting requests. */
  granted: { permit: string; sent: Sent }[];
  /** Whether the record must be written (else nothing happened to it). */
  changed: boolean;
  /** The host gave up answering: waiting requests are refused. */
  down: boolean;
  /** When a waiting request may next get a permit without anyone giving one back (a pause's end, an expiry). */
  retryAt: number;
}

/**
 * One round on a host's record: expired permits dropped, this replica's answers applied to the
 * adaptive limit (a permit given back, the limit grown or cut, a Retry-After pausing the host for
 * everyone), then as many permits granted as the limit leaves free.
 */
export function budgetRound(input: BudgetRoundInput): BudgetRound {
  const { settings, now } = input;
  const control = new HostConcurrency(settings, () => now);
  const permits: Record<string, number> = {};
  let changed = input.record === undefined;
  for (const [id, expiresAt] of Object.entries(input.record?.permits ?? {})) {
    if (expiresAt > now) permits[id] = expiresAt;
    else changed = true;
  }
  if (input.record) control.restore(input.record, Object.keys(permits).length);
  for (const answer of input.answers) {
    changed = true;
    control.answered(answer.sent, answer.signal, answer.retryAfterMs);
    delete permits[answer.permit];
    control.active = Object.keys(permits).length;
  }
  const granted: BudgetRound['granted'] = [];
  while (granted.length < input.wanted && control.canSend()) {
    const permit = input.permitId();
    const sent = control.send(input.wanted - granted.length - 1);
    permits[permit] = now + input.permitMs;
    granted.push({ permit, sent });
    changed = true;
  }
  const pauseEnd = control.pausedUntil > now ? control.pausedUntil : Infinity;
  return {
    record: { ...control.state(), permits },
    granted,
    changed,
    down: control.isDown(),
    retryAt: Math.min(pauseEnd, ...Object.values(permits)),
  };
}

/** An origin's Crawl-delay turn: when this page fetch may start, and when the one after it may. */
export function crawlDelayTurn(nextAt: number | undefined, delayMs: number, now: number) {
  const at = Math.max(now, nextAt ?? 0);
  return { at, nextAt: at + delayMs };
}
