import type Database from 'better-sqlite3';
import type { IdempotencyClaim, IdempotencyRecord, IdempotencyStore, IdempotentAnswer, Sweeps } from './store.js';
import { returned } from './store-sqlite-schema.js';

interface IdempotencyRow {
  id: string;
  fingerprint: string;
  expires_at: number;
  status: number | null;
  body: string | null;
  headers: string | null;
}

/** Idempotency keys and their kept answers in the embedded store. */
export function sqliteIdempotency(db: Database.Database): IdempotencyStore & Sweeps {
  const q = {
    dropExpiredIdempotency: db.prepare('DELETE FROM idempotency WHERE id = ? AND expires_at <= ?'),
    claimIdempotency: db.prepare(
      `INSERT INTO idempotency (id, fingerprint, expires_at) VALUES (@id, @fingerprint, @expiresAt)
       ON CONFLICT (id) DO NOTHING`,
    ),
    idempotencyById: db.prepare<[string], IdempotencyRow>('SELECT * FROM idempotency WHERE id = ?'),
    completeIdempotency: db.prepare(
      `UPDATE idempotency SET status = @status, body = @body, headers = @headers, expires_at = @expiresAt
       WHERE id = @id AND fingerprint = @fingerprint AND status IS NULL`,
    ),
    releaseIdempotency: db.prepare('DELETE FROM idempotency WHERE id = ? AND fingerprint = ? AND status IS NULL'),
    sweepIdempotency: db.prepare('DELETE FROM idempotency WHERE expires_at <= ?'),
  };
  const claim = db.transaction((claim: IdempotencyClaim, now: number): IdempotencyRecord | undefined => {
    q.dropExpiredIdempotency.run(claim.id, now);
    if (q.claimIdempotency.run(claim).changes === 1) return undefined;
    const row = returned(q.idempotencyById.get(claim.id));
    const record: IdempotencyRecord = { id: row.id, fingerprint: row.fingerprint, expiresAt: row.expires_at };
    if (row.status !== null) record.answer = { status: row.status, body: row.body ?? '', headers: row.headers ?? '{}' };
    return record;
  });

  return {
    async claimIdempotency(claimed: IdempotencyClaim, now: number): Promise<IdempotencyRecord | undefined> {
      return claim(claimed, now);
    },

    async completeIdempotency(
      id: string,
      fingerprint: string,
      answer: IdempotentAnswer,
      expiresAt: number,
    ): Promise<boolean> {
      return q.completeIdempotency.run({ id, fingerprint, ...answer, expiresAt }).changes === 1;
    },

    async releaseIdempotency(id: string, fingerprint: string): Promise<void> {
      q.releaseIdempotency.run(id, fingerprint);
    },

    async sweep(now: number): Promise<void> {
      q.sweepIdempotency.run(now);
    },
  };
}
