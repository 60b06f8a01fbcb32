/**
 * A monitor's slots: the instants its runs are due. Slot k of a monitor with interval I starts at
 * k * I + offset, where the offset is a hash of its id within the interval, so that monitors on one
 * interval spread over it instead of firing in the same millisecond (docs/decisions/0431).
 */
import { createHash } from 'node:crypto';

/** An interval's length in ms at this time scale (at least 1 ms). */
export const intervalMs = (intervalSeconds: number, timeScale = 1): number =>
  Math.max(1, Math.round((intervalSeconds * 1000) / timeScale));

/** The monitor's jitter: where in each interval its slots start, from its id alone (the same on every replica). */
export function slotOffsetMs(monitorId: string, intervalSeconds: number, timeScale = 1): number {
  const digest = createHash('sha256').update(monitorId).digest();
  return digest.readUInt32BE(0) % intervalMs(intervalSeconds, timeScale);
}

/** The start of the slot that `atMs` falls in (the latest slot start at or before it). */
export function slotAt(monitorId: string, intervalSeconds: number, atMs: number, timeScale = 1): number {
  const interval = intervalMs(intervalSeconds, timeScale);
  const offset = slotOffsetMs(monitorId, intervalSeconds, timeScale);
  return Math.floor((atMs - offset) / interval) * interval + offset;
}

/** The first slot start strictly after `atMs`. */
export function slotAfter(monitorId: string, intervalSeconds: number, atMs: number, timeScale = 1): number {
  return slotAt(monitorId, intervalSeconds, atMs, timeScale) + intervalMs(intervalSeconds, timeScale);
}

/** What a replica does with a monitor that is due: which slot it claims, and whether that run is late. */
export interface DueRun {
  /** The slot claimed: the one `now` falls in (slots missed before it are never run). */
  slotMs: number;
  /** Started past the grace after its slot, or standing in for slots missed in an outage. */
  late: boolean;
}

/**
 * The run due at `nowMs` for a monitor waiting for the slot at `dueMs`: the current slot, once,
 * however many were missed (no burst replay after an outage), late when slots were skipped or
 * the current one started more than `graceMs` ago.
 */
export function dueRun(
  monitorId: string,
  intervalSeconds: number,
  dueMs: number,
  nowMs: number,
  graceMs: number,
  timeScale = 1,
): DueRun | undefined {
  if (nowMs < dueMs) return undefined;
  const slotMs = slotAt(monitorId, intervalSeconds, nowMs, timeScale);
  return { slotMs, late: slotMs > dueMs || nowMs - slotMs > graceMs };
}
