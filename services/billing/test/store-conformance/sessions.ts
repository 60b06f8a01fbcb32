import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { type StoreUnderTest, T0 } from './fixtures.js';

/** Sessions, and the named secrets. */
export function sessionCases(t: StoreUnderTest): void {
  describe('sessions and secrets', () => {
    it('stores, finds and deletes a session', async () => {
      const session = {
        id: randomUUID(),
        accountId: 'acct',
        csrfToken: 'csrf',
        createdAt: T0,
        expiresAt: T0 + 1_000,
      };
      await t.store.insertSession(session);
      expect(await t.store.sessionById(session.id)).to.deep.equal(session);
      await t.store.deleteSession(session.id);
      expect(await t.store.sessionById(session.id)).to.equal(undefined);
    });

    it("deletes every session of one account, and only that account's", async () => {
      const of = (accountId: string) => ({
        id: randomUUID(),
        accountId,
        csrfToken: 'csrf',
        createdAt: T0,
        expiresAt: T0 + 1_000,
      });
      const [a1, a2, b] = [of('acct-a'), of('acct-a'), of('acct-b')];
      for (const session of [a1, a2, b]) await t.store.insertSession(session);
      await t.store.deleteSessionsOf('acct-a');
      expect(await t.store.sessionById(a1.id)).to.equal(undefined);
      expect(await t.store.sessionById(a2.id)).to.equal(undefined);
      expect(await t.store.sessionById(b.id)).to.deep.equal(b);
    });

    it('keeps the first value of a secret, even when racing', async () => {
      const values = await Promise.all(['a', 'b', 'c', 'd'].map((v) => t.store.secret('hmac', v)));
      expect(new Set(values).size).to.equal(1);
      expect(await t.store.secret('hmac', 'z')).to.equal(values[0]);
    });
  });
}
