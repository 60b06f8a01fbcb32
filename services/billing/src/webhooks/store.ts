/**
 * Where webhook books are kept (docs/decisions/0206-webhooks.md): each account's signing secret,
 * the deliveries under way with their schedule, and every attempt, in billing's store (SQLite
 * embedded, MongoDB in the cluster). A delivery is worked on by the edge process that claimed it,
 * under a lease; a process that dies leaves it to another once the lease runs out. Times are epoch ms.
 */

export interface SigningSecret {
  secret: string;
  createdAt: number;
  /** The secret this one replaced: it signs beside it until `previousUntil` (0: none). */
  previous: string | null;
  previousUntil: number;
}

/** What one claim stays within. */
export interface ClaimBounds {
  /** Deliveries of one subject under lease at once, across all claimers. */
  perSubject: number;
  /** The claimed bodies' bytes together. */
  maxBytes: number;
}

/** What a reservation must stay within, counted per subject (its webhook books). */
export interface ReserveLimits {
  /** Deliveries under way (not expired), this one included. */
  maxOpen: number;
  /** Deliveries reserved in the last minute, this one included (sandbox books only). */
  perMinute?: number;
}

/**
 * reserved: a job is about to be started (not claimable; swept if never attached).
 * waiting: the job runs; the edge looks at it when due. sending: the job ended; an attempt is due.
 * delivered, failed: over.
 */
export type DeliveryState = 'reserved' | 'waiting' | 'sending' | 'delivered' | 'failed';

/** The states a delivery is under way in (what the per-account bound counts). */
export const OPEN_STATES: readonly DeliveryState[] = ['reserved', 'waiting', 'sending'];

export interface DeliveryRecord {
  id: string;
  subject: string;
  source: string;
  jobId: string | null;
  url: string;
  state: DeliveryState;
  bodyGzip: Buffer | null;
  endedAt: number | null;
  attempts: number;
  nextAt: number;
  leaseOwner: string | null;
  leaseUntil: number;
  createdAt: number;
  expiresAt: number;
}

export type NewDelivery = Pick<DeliveryRecord, 'id' | 'subject' | 'source' | 'url' | 'createdAt' | 'expiresAt'>;

export type AttemptOutcome = 'delivered' | 'retrying' | 'failed';

export interface AttemptRecord {
  deliveryId: string;
  /** 1 for the first attempt of the delivery. */
  attempt: number;
  subject: string;
  jobId: string;
  url: string;
  at: number;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  outcome: AttemptOutcome;
  nextAt: number | null;
  expiresAt: number;
}

/** What a claimed delivery's worker reports; only the lease's owner may. */
export interface DeliveryChange {
  owner: string;
  state: DeliveryState;
  /** Kept the first time (the job's ended envelope); later changes leave it. */
  bodyGzip?: Buffer;
  endedAt?: number;
  nextAt: number;
  /** Recorded with the change (and counted in `attempts`). */
  attempt?: AttemptRecord;
}

export interface WebhookStore {
  secretOf(subject: string): Promise<SigningSecret | undefined>;
  setSecret(subject: string, secret: SigningSecret): Promise<void>;
  /**
   * Adds a delivery in state `reserved`, unless its subject would pass a limit (`maxOpen`
   * deliveries under way, `perMinute` reserved in the minute before `now`): false then, and nothing
   * stored.
   */
  reserve(delivery: NewDelivery, limits: ReserveLimits, now: number): Promise<boolean>;
  /**
   * reserved -> waiting for `jobId`, due at `now`, kept until `expiresAt`; with `bodyGzip`, sending
   * that body (ended at `now`) instead. False when not reserved.
   */
  attach(id: string, jobId: string, now: number, expiresAt: number, bodyGzip?: Buffer): Promise<boolean>;
  /** A delivery by id (expired or not). */
  delivery(id: string): Promise<DeliveryRecord | undefined>;
  /** Deletes a reservation (its start failed). */
  drop(id: string): Promise<void>;
  /**
   * Leases up to `limit` due deliveries (waiting or sending, next_at <= now, lease over) to `owner`,
   * in turns across subjects (each one's oldest, then each one's second, ...), leaving out a subject
   * once `perSubject` of its deliveries are leased (to anyone), and stopping before the bodies pass
   * `maxBytes` (the first always taken).
   */
  claim(owner: string, now: number, limit: number, leaseMs: number, bounds: ClaimBounds): Promise<DeliveryRecord[]>;
  /** Applies a worker's change if `owner` still holds the lease; true if applied. */
  update(id: string, change: DeliveryChange): Promise<boolean>;
  /** The subject's most recent attempts, newest first. */
  attempts(subject: string, limit: number, now: number): Promise<AttemptRecord[]>;
  /** Deletes expired deliveries and attempts. */
  sweep(now: number): Promise<void>;
  close(): Promise<void>;
}

/** The embedded SQLite file under the data directory (beside billing.sqlite), or MongoDB when MONGO_URL is set. */
export async function openWebhookStore(config: { dataDir: string; mongoUrl?: string }): Promise<WebhookStore> {
  if (config.mongoUrl) {
    const { MongoWebhookStore } = await import('./store-mongo.js');
    return MongoWebhookStore.connect(config.mongoUrl);
  }
  const { SqliteWebhookStore } = await import('./store-sqlite.js');
  const { mkdirSync } = await import('node:fs');
  const path = await import('node:path');
  mkdirSync(config.dataDir, { recursive: true });
  return new SqliteWebhookStore(path.join(config.dataDir, 'webhooks.sqlite'));
}
