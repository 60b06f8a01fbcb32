import type Database from 'better-sqlite3';
import type { SessionRecord, SessionStore, Sweeps } from './store.js';

interface SessionRow {
  id: string;
  account_id: string;
  csrf_token: string;
  created_at: number;
  expires_at: number;
}

/** Signed-in sessions in the embedded store. */
export function sqliteSessions(db: Database.Database): SessionStore & Sweeps {
  const q = {
    insertSession: db.prepare(
      `INSERT INTO sessions (id, account_id, csrf_token, created_at, expires_at)
       VALUES (@id, @accountId, @csrfToken, @createdAt, @expiresAt)`,
    ),
    sessionById: db.prepare<[string], SessionRow>('SELECT * FROM sessions WHERE id = ?'),
    deleteSession: db.prepare('DELETE FROM sessions WHERE id = ?'),
    deleteSessionsOf: db.prepare('DELETE FROM sessions WHERE account_id = ?'),
    sweepSessions: db.prepare('DELETE FROM sessions WHERE expires_at <= ?'),
  };

  return {
    async insertSession(session: SessionRecord): Promise<void> {
      q.insertSession.run(session);
    },

    async sessionById(id: string): Promise<SessionRecord | undefined> {
      const row = q.sessionById.get(id);
      return (
        row && {
          id: row.id,
          accountId: row.account_id,
          csrfToken: row.csrf_token,
          createdAt: row.created_at,
          expiresAt: row.expires_at,
        }
      );
    },

    async deleteSession(id: string): Promise<void> {
      q.deleteSession.run(id);
    },

    async deleteSessionsOf(accountId: string): Promise<void> {
      q.deleteSessionsOf.run(accountId);
    },

    async sweep(now: number): Promise<void> {
      q.sweepSessions.run(now);
    },
  };
}
