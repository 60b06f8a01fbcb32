import { expect } from 'chai';
import {
  MAX_RETRY_DELAY_MS,
  nextAttemptAt,
  RETRY_WINDOW_MS,
  retryAfterMs,
  retryableStatus,
} from '../src/areas/webhooks/retry.js';

/** The documented schedule (docs/decisions/0206-webhooks.md), with the default 5 s base. */
describe('webhook retry schedule', () => {
  it('doubles from 5 s, at most 10 minutes apart, within 30 minutes of the job’s end: 9 attempts', () => {
    const ended = 0;
    const times = [0];
    for (;;) {
      const next = nextAttemptAt(ended, times.length, times.at(-1) as number, 5_000);
      if (next === undefined) break;
      times.push(next);
    }
    expect(times.map((t) => t / 1000)).to.deep.equal([0, 5, 15, 35, 75, 155, 315, 635, 1235]);
    expect(times.at(-1)).to.be.at.most(RETRY_WINDOW_MS);
  });

  it('retries network-like answers only: 408, 429 and 5xx', () => {
    expect([408, 429, 500, 502, 503, 599].every(retryableStatus)).to.equal(true);
    expect([200, 204, 301, 302, 400, 401, 404, 410, 422].some(retryableStatus)).to.equal(false);
  });

  it('honours a longer Retry-After, within the cap', () => {
    expect(nextAttemptAt(0, 1, 0, 5_000, 60_000)).to.equal(60_000);
    expect(nextAttemptAt(0, 1, 0, 5_000, 3_600_000)).to.equal(MAX_RETRY_DELAY_MS);
    expect(retryAfterMs('120', 0)).to.equal(120_000);
    expect(retryAfterMs(new Date(30_000).toUTCString(), 0)).to.equal(30_000);
    expect(retryAfterMs('soon', 0)).to.equal(0);
  });
});
