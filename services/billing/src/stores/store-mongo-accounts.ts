import type mongoose from 'mongoose';
import { type Account, type AccountStore, type ApiKeyRecord, EmailTakenError, type PlanChange } from './store.js';
import { type AccountDoc, type ApiKeyDoc, isDuplicateKey, type Models, toAccount } from './store-mongo-schema.js';

/** An account as the ledger reads it: a busy account's holds (hundreds) and key spend are not part of it. */
const WITHOUT_HOLDS = { holds: 0, keySpend: 0 } as const;

const toApiKey = ({ _id, creditLimit, expiresAt, allowedOperations, mode, ...rest }: ApiKeyDoc): ApiKeyRecord => ({
  id: _id,
  ...rest,
  // A key stored before sandbox keys is a live key.
  mode: mode ?? 'live',
  // A key stored before keys had limits has none.
  creditLimit: creditLimit ?? null,
  expiresAt: expiresAt ?? null,
  allowedOperations: allowedOperations ?? null,
});

/** Accounts and their API keys in MongoDB. */
export function mongoAccounts({ accounts, apiKeys }: Models): AccountStore {
  const updateAccount = async (id: string, update: mongoose.UpdateQuery<AccountDoc>): Promise<Account | undefined> => {
    const doc = await accounts.findOneAndUpdate({ _id: id }, update, { returnDocument: 'after' }).lean<AccountDoc>();
    return doc ? toAccount(doc) : undefined;
  };

  return {
    async insertAccount({ id, ...account }: Account): Promise<void> {
      try {
        await accounts.create({ _id: id, ...account });
      } catch (err) {
        if (isDuplicateKey(err)) throw new EmailTakenError(account.email);
        throw err;
      }
    },

    async accountById(id: string): Promise<Account | undefined> {
      const doc = await accounts.findById(id, WITHOUT_HOLDS).lean<AccountDoc>();
      return doc ? toAccount(doc) : undefined;
    },

    async accountByEmail(email: string): Promise<Account | undefined> {
      const doc = await accounts.findOne({ email }, WITHOUT_HOLDS).lean<AccountDoc>();
      return doc ? toAccount(doc) : undefined;
    },

    async changePlan(id: string, change: PlanChange): Promise<Account | undefined> {
      return updateAccount(id, { $set: change });
    },

    async setPasswordHash(id: string, passwordHash: string): Promise<Account | undefined> {
      return updateAccount(id, { $set: { passwordHash } });
    },

    async replacePasswordHash(id: string, current: string, next: string): Promise<boolean> {
      const replaced = await accounts.updateOne({ _id: id, passwordHash: current }, { $set: { passwordHash: next } });
      return replaced.modifiedCount === 1;
    },

    async addTopUp(id: string, credits: number): Promise<Account | undefined> {
      return updateAccount(id, { $inc: { topUpCredits: credits } });
    },

    async renewCycle(id: string, expected: number, next: { cycleEnd: number; cycleCredits: number }): Promise<void> {
      await accounts.updateOne({ _id: id, cycleEnd: expected }, { $set: next });
    },

    async insertApiKey({ id, ...key }: ApiKeyRecord): Promise<void> {
      await apiKeys.create({ _id: id, ...key });
    },

    async apiKeyByHash(hash: string): Promise<ApiKeyRecord | undefined> {
      const doc = await apiKeys.findOne({ hash }).lean<ApiKeyDoc>();
      return doc ? toApiKey(doc) : undefined;
    },

    async apiKeysOf(accountId: string): Promise<ApiKeyRecord[]> {
      const docs = await apiKeys.find({ accountId }).sort({ createdAt: 1, _id: 1 }).lean<ApiKeyDoc[]>();
      return docs.map(toApiKey);
    },

    async revokeApiKey(accountId: string, keyId: string, at: number): Promise<ApiKeyRecord | undefined> {
      await apiKeys.updateOne({ _id: keyId, accountId, revokedAt: null }, { $set: { revokedAt: at } });
      const doc = await apiKeys.findOne({ _id: keyId, accountId }).lean<ApiKeyDoc>();
      return doc ? toApiKey(doc) : undefined;
    },

    async touchApiKey(keyId: string, at: number, everyMs: number): Promise<void> {
      await apiKeys.updateOne(
        { _id: keyId, $or: [{ lastUsedAt: null }, { lastUsedAt: { $lte: at - everyMs } }] },
        { $set: { lastUsedAt: at } },
      );
    },
  };
}
