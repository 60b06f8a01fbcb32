import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { type StoreUnderTest, T0 } from './fixtures.js';

/** Named counters. */
export function counterCases(t: StoreUnderTest): void {
  describe('counters', () => {
    it('increments without losing counts (concurrently where the server is atomic), and goes down', async () => {
      const key = `rate|${randomUUID()}`;
      expect(await t.store.counter(key)).to.equal(0);
      const increment = () => t.store.increment(key, 1, T0 + 60_000);
      // jongodb (see atomicGuards) once answered two of 50 concurrent increments with the same
      // count under load: there the same increments go one at a time.
      const values: number[] = [];
      if (t.harness.atomicGuards) values.push(...(await Promise.all(Array.from({ length: 50 }, increment))));
      else for (let i = 0; i < 50; i++) values.push(await increment());
      expect([...values].sort((x, y) => x - y)).to.deep.equal(Array.from({ length: 50 }, (_, i) => i + 1));
      expect(await t.store.increment(key, -1, T0)).to.equal(49);
      expect(await t.store.counter(key)).to.equal(49);
    });

    it('sweep keeps what has not expired', async () => {
      const key = `keep|${randomUUID()}`;
      await t.store.increment(key, 2, T0 + 60_000);
      await t.store.insertSession({
        id: 'live',
        accountId: 'a',
        csrfToken: 'c',
        createdAt: T0,
        expiresAt: T0 + 60_000,
      });
      await t.store.sweep(T0);
      expect(await t.store.counter(key)).to.equal(2);
      expect(await t.store.sessionById('live')).to.not.equal(undefined);
    });
  });
}
