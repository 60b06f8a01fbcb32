import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { status } from '@grpc/grpc-js';
import { invalidArgument, notFound, ServiceError } from '@webutil/kit';
import type { ApiKey } from '@webutil/proto/webutil/billing/v1/billing';
import type { Clock } from './clock.js';
import { PLANS } from './plans.js';
import type { Account, ApiKeyRecord, BillingStore, KeyMode } from './stores/store.js';

/** The fixed live-key prefix; 24 random bytes (192 bits) follow, base64url. */
export const KEY_PREFIX = 'wu_live_';
/** A sandbox key's prefix (decision 0207); the same entropy follows. */
export const TEST_KEY_PREFIX = 'wu_test_';
const KEY_SHAPE = /^wu_(live|test)_[A-Za-z0-9_-]{32}$/;
/** Random characters of the key kept for listings, after its prefix. */
const SHOWN_RANDOM_CHARS = 4;
const KEY_MODES: readonly KeyMode[] = ['live', 'test'];
/** last_used_at is written at most once a minute per key, not on every request. */
const TOUCH_EVERY_MS = 60_000;
const MAX_NAME_LENGTH = 100;
/** Bounds of a key's own limits: a credit limit is a positive count; operations are route ids. */
const MAX_CREDIT_LIMIT = 100_000_000;
const MAX_OPERATIONS = 64;
const OPERATION_SHAPE = /^[a-z][a-z0-9-]{0,63}$/;

/** What a new key may be limited to (decision 0203); each absent: no such limit. */
export interface KeyLimits {
  creditLimit?: number;
  /** ISO 8601. */
  expiresAt?: string;
  allowedOperations?: readonly string[];
  /** live (default) or test: a sandbox key, which spends nothing, so it takes no creditLimit. */
  mode?: string;
}

/** Keys are high-entropy, so a fast hash is enough (a KDF protects guessable passwords). */
const hashKey = (secret: string) => createHash('sha256').update(secret).digest('hex');

export type KeyLookup =
  | { key: ApiKeyRecord; account: Account }
  | { failure: 'INVALID_API_KEY' | 'REVOKED_API_KEY' | 'KEY_EXPIRED'; key?: ApiKeyRecord };

export class ApiKeys {
  constructor(
    private readonly store: BillingStore,
    private readonly clock: Clock,
  ) {}

  /** Creates a key; the full secret is returned once and only its hash is stored. */
  async mint(account: Account, name: string, limits: KeyLimits = {}): Promise<{ key: ApiKeyRecord; secret: string }> {
    if (!keyAllowed(account))
      throw new ServiceError(status.PERMISSION_DENIED, 'PLAN_REQUIRED', 'API keys need the Starter plan or higher');
    const label = name.trim();
    if (!label) throw invalidArgument('INVALID_NAME', 'name is required');
    if (label.length > MAX_NAME_LENGTH)
      throw invalidArgument('INVALID_NAME', `name must have at most ${MAX_NAME_LENGTH} characters`);
    const mode = modeOf(limits);
    const own = this.limitsOf(limits);
    const prefix = mode === 'test' ? TEST_KEY_PREFIX : KEY_PREFIX;
    const secret = prefix + randomBytes(24).toString('base64url');
    const key: ApiKeyRecord = {
      id: randomUUID(),
      accountId: account.id,
      name: label,
      prefix: secret.slice(0, prefix.length + SHOWN_RANDOM_CHARS),
      hash: hashKey(secret),
      createdAt: this.clock(),
      lastUsedAt: null,
      revokedAt: null,
      ...own,
      mode,
    };
    await this.store.insertApiKey(key);
    return { key, secret };
  }

  /** The new key's limits as stored, or the INVALID_ARGUMENT naming the first one out of bounds. */
  private limitsOf(limits: KeyLimits): Pick<ApiKeyRecord, 'creditLimit' | 'expiresAt' | 'allowedOperations'> {
    const { creditLimit, expiresAt, allowedOperations } = limits;
    if (
      creditLimit !== undefined &&
      (!Number.isInteger(creditLimit) || creditLimit < 1 || creditLimit > MAX_CREDIT_LIMIT)
    )
      throw invalidArgument('INVALID_CREDIT_LIMIT', `creditLimit must be a whole number from 1 to ${MAX_CREDIT_LIMIT}`);
    let expires: number | null = null;
    if (expiresAt !== undefined) {
      expires = Date.parse(expiresAt);
      if (!Number.isFinite(expires)) throw invalidArgument('INVALID_EXPIRES_AT', 'expiresAt must be an ISO 8601 time');
      if (expires <= this.clock()) throw invalidArgument('INVALID_EXPIRES_AT', 'expiresAt must be in the future');
    }
    let operations: string[] | null = null;
    if (allowedOperations !== undefined && allowedOperations.length > 0) {
      operations = [...new Set(allowedOperations)];
      if (operations.length > MAX_OPERATIONS || !operations.every((op) => OPERATION_SHAPE.test(op)))
        throw invalidArgument('INVALID_ALLOWED_OPERATIONS', 'allowedOperations must list operation ids');
    }
    return { creditLimit: creditLimit ?? null, expiresAt: expires, allowedOperations: operations };
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
    const now = this.clock();
    if (key.expiresAt !== null && now >= key.expiresAt) return { failure: 'KEY_EXPIRED', key };
    const account = await this.store.accountById(key.accountId);
    if (!account) return { failure: 'INVALID_API_KEY' };
    // Last use is recorded at most once a minute, and not even attempted in between (no write per request).
    if (key.lastUsedAt === null || now - key.lastUsedAt >= TOUCH_EVERY_MS)
      await this.store.touchApiKey(key.id, now, TOUCH_EVERY_MS);
    return { key, account };
  }
}

/** The new key's mode, or the INVALID_ARGUMENT saying why it cannot be had. */
function modeOf({ mode, creditLimit }: KeyLimits): KeyMode {
  const chosen = mode === undefined || mode === '' ? 'live' : KEY_MODES.find((known) => known === mode);
  if (!chosen) throw invalidArgument('INVALID_MODE', 'mode must be live or test');
  if (chosen === 'test' && creditLimit !== undefined)
    throw invalidArgument('INVALID_CREDIT_LIMIT', 'a test key spends no credits, so it takes no creditLimit');
  return chosen;
}

/** A stored key as the key routes show it: never the hash, never the secret. */
export function keyMessage(key: ApiKeyRecord, creditsSpentThisCycle = 0): ApiKey {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    createdAt: new Date(key.createdAt).toISOString(),
    lastUsedAt: key.lastUsedAt === null ? undefined : new Date(key.lastUsedAt).toISOString(),
    revokedAt: key.revokedAt === null ? undefined : new Date(key.revokedAt).toISOString(),
    creditLimit: key.creditLimit ?? undefined,
    expiresAt: key.expiresAt === null ? undefined : new Date(key.expiresAt).toISOString(),
    allowedOperations: key.allowedOperations ?? [],
    creditsSpentThisCycle,
    mode: key.mode,
  };
}

/**
 * The key has limits of its own, or is a sandbox key: billing decides each of its calls (no view,
 * no lease at the edge), so the limits hold on every call and a sandbox call is never paid from a
 * lease. A live key without limits costs nothing extra.
 */
export function keyRestricted(key: ApiKeyRecord): boolean {
  return keyHasLimits(key) || key.mode === 'test';
}

/** The key has a limit of its own (credits, expiry or operations): it is not the account's owner. */
export function keyHasLimits(key: ApiKeyRecord): boolean {
  return key.creditLimit !== null || key.expiresAt !== null || key.allowedOperations !== null;
}

/** Keys need Starter or higher; a key whose account fell back to Free stops working. */
export function keyAllowed(account: Account): boolean {
  return PLANS[account.plan].apiKeys;
}
