import { setUpSqlite } from '@webutil/kit';
import Database from 'better-sqlite3';
import type {
  AttemptOutcome,
  AttemptRecord,
  ClaimBounds,
  DeliveryChange,
  DeliveryRecord,
  DeliveryState,
  NewDelivery,
  ReserveLimits,
  SigningSecret,
  WebhookStore,
} from './store.js';

interface DeliveryRow {
  id: string;
  subject: string;
  source: string;
  job_id: string | null;
  url: string;
  state: string;
  body_gzip: Buffer | null;
  ended_at: number | null;
  attempts: number;
  next_at: number;
  lease_owner: string | null;
  lease_until: number;
  created_at: number;
  expires_at: number;
}

interface AttemptRow {
  delivery_id: string;
  attempt: number;
  subject: string;
  job_id: string;
  url: string;
  at: number;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  outcome: string;
  next_at: number | null;
  expires_at: number;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS webhook_secrets (
  subject TEXT PRIMARY KEY,
  secret TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  previous TEXT,
  previous_until INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS webhook_deliveries (
  id TEXT PRIMARY KEY,
  subject TEXT NOT NULL,
  source TEXT NOT NULL,
  job_id TEXT,
  url TEXT NOT NULL,
  state TEXT NOT NULL,
  body_gzip BLOB,
  ended_at INTEGER,
  attempts INTEGER NOT NULL DEFAULT 0,
  next_at INTEGER NOT NULL,
  lease_owner TEXT,
  lease_until INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS webhook_deliveries_due ON webhook_deliveries (state, next_at);
CREATE INDEX IF NOT EXISTS webhook_deliveries_subject ON webhook_deliveries (subject, state);
CREATE INDEX IF NOT EXISTS webhook_deliveries_expiry ON webhook_deliveries (expires_at);
CREATE TABLE IF NOT EXISTS webhook_attempts (
  delivery_id TEXT NOT NULL,
  attempt INTEGER NOT NULL,
  subject TEXT NOT NULL,
  job_id TEXT NOT NULL,
  url TEXT NOT NULL,
  at INTEGER NOT NULL,
  status_code INTEGER,
  error TEXT,
  duration_ms INTEGER NOT NULL,
  outcome TEXT NOT NULL,
  next_at INTEGER,
  expires_at INTEGER NOT NULL,
  PRIMARY KEY (delivery_id, attempt)
);
CREATE INDEX IF NOT EXISTS webhook_attempts_subject ON webhook_attempts (subject, at);
CREATE INDEX IF NOT EXISTS webhook_attempts_expiry ON webhook_attempts (expires_at);
`;

/** Columns files made before them gain at start. */
const ADDED_COLUMNS = [
  { table: 'webhook_secrets', column: 'previous', type: 'TEXT' },
  { table: 'webhook_secrets', column: 'previous_until', type: 'INTEGER NOT NULL DEFAULT 0' },
];

/** The embedded webhook store: its own SQLite file beside billing's (WAL). */
export class SqliteWebhookStore implements WebhookStore {
  private readonly db: Database.Database;
  private readonly q;
  private readonly claimTx;
  private readonly updateTx;

  constructor(file: string) {
    this.db = setUpSqlite(new Database(file), { schema: SCHEMA, addedColumns: ADDED_COLUMNS });
    const db = this.db;
    this.q = {
      secretOf: db.prepare<
        [string],
        { secret: string; created_at: number; previous: string | null; previous_until: number }
      >('SELECT secret, created_at, previous, previous_until FROM webhook_secrets WHERE subject = ?'),
      setSecret: db.prepare(
        `INSERT INTO webhook_secrets (subject, secret, created_at, previous, previous_until)
         VALUES (@subject, @secret, @createdAt, @previous, @previousUntil)
         ON CONFLICT (subject) DO UPDATE SET secret = excluded.secret, created_at = excluded.created_at,
           previous = excluded.previous, previous_until = excluded.previous_until`,
      ),
      // One statement, so no other reservation comes between the count and the insert.
      reserve: db.prepare(
        `INSERT INTO webhook_deliveries (id, subject, source, url, state, next_at, created_at, expires_at)
         SELECT @id, @subject, @source, @url, 'reserved', @createdAt, @createdAt, @expiresAt
         WHERE (SELECT count(*) FROM webhook_deliveries
                WHERE subject = @subject AND state IN ('reserved', 'waiting', 'sending') AND expires_at > @now)
               < @maxOpen
           AND (@perMinute IS NULL OR (SELECT count(*) FROM webhook_deliveries
                WHERE subject = @subject AND created_at > @now - 60000) < @perMinute)`,
      ),
      attach: db.prepare(
        `UPDATE webhook_deliveries SET state = CASE WHEN @body IS NULL THEN 'waiting' ELSE 'sending' END,
         job_id = @jobId, next_at = @now, expires_at = @expiresAt, body_gzip = @body,
         ended_at = CASE WHEN @body IS NULL THEN NULL ELSE @now END
         WHERE id = @id AND state = 'reserved'`,
      ),
      delivery: db.prepare<[string], DeliveryRow>('SELECT * FROM webhook_deliveries WHERE id = ?'),
      drop: db.prepare(`DELETE FROM webhook_deliveries WHERE id = ? AND state = 'reserved'`),
      // Each subject's due deliveries numbered oldest first (its turn), after those it has under
      // lease: the first turn of every subject comes before any second one.
      due: db.prepare<{ now: number; perSubject: number; limit: number }, { id: string; body_bytes: number }>(
        `WITH leased AS (
           SELECT subject, count(*) AS n FROM webhook_deliveries
           WHERE state IN ('waiting', 'sending') AND lease_until > @now GROUP BY subject
         ), due AS (
           SELECT id, subject, next_at, coalesce(length(body_gzip), 0) AS body_bytes,
             row_number() OVER (PARTITION BY subject ORDER BY next_at, id) AS turn
           FROM webhook_deliveries
           WHERE state IN ('waiting', 'sending') AND next_at <= @now AND lease_until <= @now AND expires_at > @now
         )
         SELECT due.id, due.body_bytes FROM due LEFT JOIN leased ON leased.subject = due.subject
         WHERE due.turn + coalesce(leased.n, 0) <= @perSubject
         ORDER BY due.turn + coalesce(leased.n, 0), due.next_at LIMIT @limit`,
      ),
      lease: db.prepare('UPDATE webhook_deliveries SET lease_owner = ?, lease_until = ? WHERE id = ?'),
      update: db.prepare(
        `UPDATE webhook_deliveries SET state = @state,
           body_gzip = CASE WHEN @state IN ('delivered', 'failed') THEN NULL ELSE coalesce(body_gzip, @bodyGzip) END,
           ended_at = coalesce(ended_at, @endedAt), attempts = attempts + @counted, next_at = @nextAt,
           lease_owner = NULL, lease_until = 0
         WHERE id = @id AND lease_owner = @owner AND state IN ('waiting', 'sending')`,
      ),
      addAttempt: db.prepare(
        `INSERT OR IGNORE INTO webhook_attempts (delivery_id, attempt, subject, job_id, url, at, status_code, error,
           duration_ms, outcome, next_at, expires_at)
         VALUES (@deliveryId, @attempt, @subject, @jobId, @url, @at, @statusCode, @error, @durationMs, @outcome,
           @nextAt, @expiresAt)`,
      ),
      attempts: db.prepare<[string, number, number], AttemptRow>(
        `SELECT * FROM webhook_attempts WHERE subject = ? AND expires_at > ?
         ORDER BY at DESC, attempt DESC LIMIT ?`,
      ),
      sweepDeliveries: db.prepare('DELETE FROM webhook_deliveries WHERE expires_at <= ?'),
      sweepAttempts: db.prepare('DELETE FROM webhook_attempts WHERE expires_at <= ?'),
    };
    this.claimTx = db.transaction((owner: string, now: number, limit: number, leaseMs: number, bounds: ClaimBounds) => {
      const claimed: DeliveryRecord[] = [];
      let bytes = 0;
      for (const { id, body_bytes } of this.q.due.all({ now, perSubject: bounds.perSubject, limit })) {
        if (claimed.length > 0 && bytes + body_bytes > bounds.maxBytes) continue;
        bytes += body_bytes;
        this.q.lease.run(owner, now + leaseMs, id);
        const row = this.q.delivery.get(id);
        if (row) claimed.push(toDelivery(row));
      }
      return claimed;
    });
    this.updateTx = db.transaction((id: string, change: DeliveryChange) => {
      const applied =
        this.q.update.run({
          id,
          owner: change.owner,
          state: change.state,
          bodyGzip: change.bodyGzip ?? null,
          endedAt: change.endedAt ?? null,
          counted: change.attempt ? 1 : 0,
          nextAt: change.nextAt,
        }).changes === 1;
      if (applied && change.attempt) this.q.addAttempt.run(change.attempt);
      return applied;
    });
  }

  async secretOf(subject: string): Promise<SigningSecret | undefined> {
    const row = this.q.secretOf.get(subject);
    return (
      row && {
        secret: row.secret,
        createdAt: row.created_at,
        previous: row.previous,
        previousUntil: row.previous_until,
      }
    );
  }

  async setSecret(subject: string, secret: SigningSecret): Promise<void> {
    this.q.setSecret.run({ subject, ...secret });
  }

  async reserve(delivery: NewDelivery, limits: ReserveLimits, now: number): Promise<boolean> {
    return (
      this.q.reserve.run({ ...delivery, maxOpen: limits.maxOpen, perMinute: limits.perMinute ?? null, now }).changes ===
      1
    );
  }

  async attach(id: string, jobId: string, now: number, expiresAt: number, bodyGzip?: Buffer): Promise<boolean> {
    return this.q.attach.run({ id, jobId, now, expiresAt, body: bodyGzip ?? null }).changes === 1;
  }

  async delivery(id: string): Promise<DeliveryRecord | undefined> {
    const row = this.q.delivery.get(id);
    return row && toDelivery(row);
  }

  async drop(id: string): Promise<void> {
    this.q.drop.run(id);
  }

  async claim(
    owner: string,
    now: number,
    limit: number,
    leaseMs: number,
    bounds: ClaimBounds,
  ): Promise<DeliveryRecord[]> {
    return this.claimTx(owner, now, limit, leaseMs, bounds);
  }

  async update(id: string, change: DeliveryChange): Promise<boolean> {
    return this.updateTx(id, change);
  }

  async attempts(subject: string, limit: number, now: number): Promise<AttemptRecord[]> {
    return this.q.attempts.all(subject, now, limit).map(toAttempt);
  }

  async sweep(now: number): Promise<void> {
    this.q.sweepDeliveries.run(now);
    this.q.sweepAttempts.run(now);
  }

  async close(): Promise<void> {
    this.db.close();
  }
}

function toDelivery(row: DeliveryRow): DeliveryRecord {
  return {
    id: row.id,
    subject: row.subject,
    source: row.source,
    jobId: row.job_id,
    url: row.url,
    state: row.state as DeliveryState,
    bodyGzip: row.body_gzip,
    endedAt: row.ended_at,
    attempts: row.attempts,
    nextAt: row.next_at,
    leaseOwner: row.lease_owner,
    leaseUntil: row.lease_until,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  };
}

function toAttempt(row: AttemptRow): AttemptRecord {
  return {
    deliveryId: row.delivery_id,
    attempt: row.attempt,
    subject: row.subject,
    jobId: row.job_id,
    url: row.url,
    at: row.at,
    statusCode: row.status_code,
    error: row.error,
    durationMs: row.duration_ms,
    outcome: row.outcome as AttemptOutcome,
    nextAt: row.next_at,
    expiresAt: row.expires_at,
  };
}
