import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { type StoreUnderTest, T0 } from './fixtures.js';

/** Idempotency keys. */
export function idempotencyCases(t: StoreUnderTest): void {
  describe('idempotency keys', () => {
    const claim = (id: string = randomUUID(), fingerprint = 'f1', expiresAt = T0 + 60_000) => ({
      id,
      fingerprint,
      expiresAt,
    });
    const answer = { status: 202, body: '{"success":true}', headers: '{"Location":"/v1/jobs/1"}' };

    it('one claim of a key wins, even racing; the others see it running with its fingerprint', async () => {
      const id = `caller|${randomUUID()}`;
      const results = await Promise.all(Array.from({ length: 8 }, () => t.store.claimIdempotency(claim(id), T0)));
      expect(results.filter((r) => r === undefined)).to.have.length(1);
      for (const running of results.filter((r) => r !== undefined))
        expect(running).to.deep.equal({ id, fingerprint: 'f1', expiresAt: T0 + 60_000 });
    });

    it('keeps the completed answer until it expires, across a restart; then the key is free again', async () => {
      const id = `caller|${randomUUID()}`;
      expect(await t.store.claimIdempotency(claim(id), T0)).to.equal(undefined);
      expect(await t.store.completeIdempotency(id, 'other', answer, T0 + 86_400_000)).to.equal(false);
      expect(await t.store.completeIdempotency(id, 'f1', answer, T0 + 86_400_000)).to.equal(true);
      expect(await t.store.completeIdempotency(id, 'f1', answer, T0 + 86_400_000)).to.equal(false);
      await t.store.close();
      t.store = await t.reopen();
      expect(await t.store.claimIdempotency(claim(id, 'f2'), T0 + 1000)).to.deep.equal({
        id,
        fingerprint: 'f1',
        expiresAt: T0 + 86_400_000,
        answer,
      });
      // Released or completed, a key is never released by a late failure.
      await t.store.releaseIdempotency(id, 'f1');
      expect((await t.store.claimIdempotency(claim(id), T0 + 2000))?.answer).to.deep.equal(answer);
      expect(await t.store.claimIdempotency(claim(id, 'f2'), T0 + 86_400_000)).to.equal(undefined);
    });

    it('a released claim frees the key; a running claim past its time counts as absent', async () => {
      const id = `caller|${randomUUID()}`;
      expect(await t.store.claimIdempotency(claim(id), T0)).to.equal(undefined);
      await t.store.releaseIdempotency(id, 'f2');
      expect(await t.store.claimIdempotency(claim(id), T0)).to.not.equal(undefined);
      await t.store.releaseIdempotency(id, 'f1');
      expect(await t.store.claimIdempotency(claim(id, 'f1', T0 + 1000), T0)).to.equal(undefined);
      expect(await t.store.claimIdempotency(claim(id, 'f3', T0 + 9000), T0 + 1000)).to.equal(undefined);
      expect((await t.store.claimIdempotency(claim(id), T0 + 2000))?.fingerprint).to.equal('f3');
    });
  });
}
