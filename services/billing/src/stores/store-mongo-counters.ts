import type { CounterStore } from './store.js';
import { type CounterDoc, type Models, type SecretDoc, upsert } from './store-mongo-schema.js';

/** Named counters and secrets in MongoDB (a TTL index deletes expired counters). */
export function mongoCounters({ counters, secrets }: Models): CounterStore {
  return {
    async increment(key: string, by: number, expiresAt: number): Promise<number> {
      const doc = await upsert(
        counters,
        { _id: key },
        { $inc: { value: by }, $setOnInsert: { expiresAt: new Date(expiresAt) } },
      );
      if (!doc) throw new Error(`counter ${key} could not be incremented`);
      return doc.value;
    },

    async counter(key: string): Promise<number> {
      return (await counters.findById(key).lean<CounterDoc>())?.value ?? 0;
    },

    async secret(name: string, candidate: string): Promise<string> {
      const doc = await upsert(secrets, { _id: name }, { $setOnInsert: { value: candidate } });
      const stored = doc ?? (await secrets.findById(name).lean<SecretDoc>());
      if (!stored) throw new Error(`secret ${name} is neither stored nor insertable`);
      return stored.value;
    },
  };
}
