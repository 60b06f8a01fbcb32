import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { status } from '@grpc/grpc-js';
import { invalidArgument, notFound, ServiceError } from '@webutil/kit';
import type { ApiKey } from '@webutil/proto/webutil/billing/v1/billing';
import type { Clock } from './clock.js';
import { PLANS } from './plans.js';
import type { Account, ApiKeyRecord, BillingStore } from './stores/store.js';

/** The fixed live-key prefix; 24 random bytes (192 bits) follow, base64url. */
export const KEY_PREFIX = 'wu_live_';
const KEY_SHAPE = /^wu_live_[A-Za-z0-9_-]{32}$/;
/** Characters of the key kept for listings: the live prefix and four random characters. */
const SHOWN_CHARS = KEY_PREFIX.length + 4;
/** last_used_at is written at most once a minute per key, not on every request. */
const TOUCH_EVERY_MS = 60_000;
const MAX_NAME_LENGTH = 100;

/** Keys are high-entropy, so a fast hash is enough (a KDF protects guessable passwords). */
const hashKey = (secret: string) => createHash('sha256').update(secret).digest('hex');

export type KeyLookup = { key: ApiKeyRecord; account: Account } | { failure: 'INVALID_API_KEY' | 'REVOKED_API_KEY' };

export class ApiKeys {
  constructor(
    private readonly store: BillingStore,
    private readonly clock: Clock,
  ) {}

  /** Creates a key; the full secret is returned once and only its hash is stored. */
  async mint(account: Account, name: string): Promise<{ key: ApiKeyRecord; secret: string }> {
    if (!keyAllowed(account))
      throw new ServiceError(status.PERMISSION_DENIED, 'PLAN_REQUIRED', 'API keys need the Starter plan or higher');
    const label = name.trim();
    if (!label) throw invalidArgument('INVALID_NAME', 'name is required');
    if (label.length > MAX_NAME_LENGTH)
      throw invalidArgument('INVALID_NAME', `name must have at most ${MAX_NAME_LENGTH} characters`);
    const secret = KEY_PREFIX + randomBytes(24).toString('base64url');
    const key: ApiKeyRecord = {
      id: randomUUID(),
      accountId: account.id,
      name: label,
      prefix: secret.slice(0, SHOWN_CHARS),
      hash: hashKey(secret),
      createdAt: this.clock(),
      lastUsedAt: null,
      revokedAt: null,
    };
    await this.store.insertApiKey(key);
    return { key, secret };
  }

  list(account: Account): Promise<ApiKeyRecord[]> {
    return this.store.apiKeysOf(account.id);
  }

  async revoke(account: Account, keyId: string): Promise<ApiKeyRecord> {
    const key = await this.store.revokeApiKey(account.id, keyId, this.clock());
    if (!key) throw notFound('API_KEY_NOT_FOUND', 'this account has no API key with that id');
    return key;
  }

  /** The key and its account, or why the secret is refused. Records the use. */
  async lookup(secret: string): Promise<KeyLookup> {
    if (!KEY_SHAPE.test(secret)) return { failure: 'INVALID_API_KEY' };
    const key = await this.store.apiKeyByHash(hashKey(secret));
    if (!key) return { failure: 'INVALID_API_KEY' };
    if (key.revokedAt !== null) return { failure: 'REVOKED_API_KEY' };
    const account = await this.store.accountById(key.accountId);
    if (!account) return { failure: 'INVALID_API_KEY' };
    // Last use is recorded at most once a minute, and not even attempted in between (no write per request).
    const now = this.clock();
    if (key.lastUsedAt === null || now - key.lastUsedAt >= TOUCH_EVERY_MS)
      await this.store.touchApiKey(key.id, now, TOUCH_EVERY_MS);
    return { key, account };
  }
}

/** A stored key as the key routes show it: never the hash, never the secret. */
export function keyMessage(key: ApiKeyRecord): ApiKey {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    createdAt: new Date(key.createdAt).toISOString(),
    lastUsedAt: key.lastUsedAt === null ? undefined : new Date(key.lastUsedAt).toISOString(),
    revokedAt: key.revokedAt === null ? undefined : new Date(key.revokedAt).toISOString(),
  };
}

/** Keys need Starter or higher; a key whose account fell back to Free stops working. */
export function keyAllowed(account: Account): boolean {
  return PLANS[account.plan].apiKeys;
}
