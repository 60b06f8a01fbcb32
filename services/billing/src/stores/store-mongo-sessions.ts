import type { SessionRecord, SessionStore } from './store.js';
import type { Models, SessionDoc } from './store-mongo-schema.js';

/** Signed-in sessions in MongoDB (a TTL index deletes the expired). */
export function mongoSessions({ sessions }: Models): SessionStore {
  return {
    async insertSession({ id, expiresAt, ...session }: SessionRecord): Promise<void> {
      await sessions.create({ _id: id, ...session, expiresAt: new Date(expiresAt) });
    },

    async sessionById(id: string): Promise<SessionRecord | undefined> {
      const doc = await sessions.findById(id).lean<SessionDoc>();
      if (!doc) return undefined;
      const { _id, expiresAt, ...rest } = doc;
      return { id: _id, ...rest, expiresAt: expiresAt.getTime() };
    },

    async deleteSession(id: string): Promise<void> {
      await sessions.deleteOne({ _id: id });
    },

    async deleteSessionsOf(accountId: string): Promise<void> {
      await sessions.deleteMany({ accountId });
    },
  };
}
