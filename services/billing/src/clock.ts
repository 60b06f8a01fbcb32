import { readFileSync } from 'node:fs';
import { env } from '@webutil/kit';

/** Epoch milliseconds. Every time-dependent rule (cycles, days, expiries) reads this, never Date.now(). */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();

/**
 * The system clock plus an offset (milliseconds) read from a file on every call, so end-to-end
 * tests can move the billing process's time (day and cycle rollovers, expiries) from outside.
 * A missing or empty file means no offset.
 */
export function offsetClock(file: string): Clock {
  return () => {
    let text = '';
    try {
      text = readFileSync(file, 'utf8').trim();
    } catch {
      // No file yet: no offset.
    }
    const offset = Number(text || 0);
    if (!Number.isFinite(offset)) throw new Error(`clock offset file ${file} does not hold a number`);
    return Date.now() + offset;
  };
}

/** CLOCK_OFFSET_FILE: set only by tests; the service and the admin CLI then share the moved time. */
export const clockEnv = { CLOCK_OFFSET_FILE: env.optionalString() };

export const clockFrom = (offsetFile: string | undefined): Clock =>
  offsetFile ? offsetClock(offsetFile) : systemClock;
