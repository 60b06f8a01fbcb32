import { unavailable } from '@webutil/kit';
import type { IdempotencyClaim, IdempotencyRecord, IdempotencyStore, IdempotentAnswer } from './store.js';
import { type IdempotencyDoc, isDuplicateKey, type Models } from './store-mongo-schema.js';

/** Idempotency keys and their kept answers in MongoDB (a TTL index deletes the expired). */
export function mongoIdempotency({ idempotency }: Models): IdempotencyStore {
  return {
    /**
     * An expired record is deleted first (the TTL monitor runs only once a minute); then the insert
     * of the claim either lands or meets the record that holds the key. Deleted meanwhile by its
     * first caller's release: the claim tries again.
     */
    async claimIdempotency(claim: IdempotencyClaim, now: number): Promise<IdempotencyRecord | undefined> {
      for (let attempt = 0; attempt < 3; attempt++) {
        await idempotency.deleteOne({ _id: claim.id, expiresAt: { $lte: new Date(now) } });
        try {
          await idempotency.create({
            _id: claim.id,
            fingerprint: claim.fingerprint,
            expiresAt: new Date(claim.expiresAt),
            status: null,
            body: null,
            headers: null,
          });
          return undefined;
        } catch (err) {
          if (!isDuplicateKey(err)) throw err;
        }
        const doc = await idempotency.findById(claim.id).lean<IdempotencyDoc>();
        if (!doc) continue;
        const record: IdempotencyRecord = {
          id: doc._id,
          fingerprint: doc.fingerprint,
          expiresAt: doc.expiresAt.getTime(),
        };
        if (doc.status !== null && doc.status !== undefined)
          record.answer = { status: doc.status, body: doc.body ?? '', headers: doc.headers ?? '{}' };
        return record;
      }
      throw unavailable('IDEMPOTENCY_CONTENDED', 'the idempotency key is contended; retry');
    },

    async completeIdempotency(
      id: string,
      fingerprint: string,
      answer: IdempotentAnswer,
      expiresAt: number,
    ): Promise<boolean> {
      const result = await idempotency.updateOne(
        { _id: id, fingerprint, status: null },
        { $set: { ...answer, expiresAt: new Date(expiresAt) } },
      );
      return result.modifiedCount === 1;
    },

    async releaseIdempotency(id: string, fingerprint: string): Promise<void> {
      await idempotency.deleteOne({ _id: id, fingerprint, status: null });
    },
  };
}
