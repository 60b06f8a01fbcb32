/**
 * Account mail's books (docs/decisions/0422-email-verification.md, 0423-password-reset.md,
 * 0424-account-notices.md), beside billing's store (SQLite embedded, MongoDB in the cluster): which
 * accounts wait for their address to be verified, the single-use links mailed out (their SHA-256
 * only), each account's notice settings, and the notices sent once per cycle. An account without a
 * verification record made its address count before verification existed (or an operator made it):
 * it is verified. Times are epoch ms.
 */

/** What a mailed link lets its holder do, once. */
export type TokenPurpose = 'verify-email' | 'password-reset';

export interface MailToken {
  /** SHA-256 (hex) of the token in the link; the token itself is never stored. */
  hash: string;
  accountId: string;
  purpose: TokenPurpose;
  /** The address it was mailed to: a link is good only while the account still has it. */
  email: string;
  createdAt: number;
  expiresAt: number;
}

/** What an account is mailed beyond its own requests (all on unless turned off). */
export interface NoticeSettings {
  /** A receipt for each payment. */
  receipts: boolean;
  /** A renewal that failed (the plan's grace period is running). */
  renewals: boolean;
  /** 80 % and 100 % of the cycle's credits spent. */
  credits: boolean;
}

export const DEFAULT_NOTICES: NoticeSettings = { receipts: true, renewals: true, credits: true };

export interface Verification {
  email: string;
  /** null: waiting for the link to be followed. */
  verifiedAt: number | null;
}

export interface MailStore {
  /** Records a new account's address as waiting for verification (before the account is stored). */
  addUnverified(accountId: string, email: string, at: number): Promise<void>;
  /** The account's address is verified (idempotent). */
  markVerified(accountId: string, at: number): Promise<void>;
  /** Undefined: no record, so verified (an account from before verification, or an operator's). */
  verification(accountId: string): Promise<Verification | undefined>;
  /** Forgets an account's record (its sign-up failed after the record was made). */
  dropVerification(accountId: string): Promise<void>;

  insertToken(token: MailToken): Promise<void>;
  /** Spends a live token once: its record, or undefined when unknown, spent already or expired. */
  useToken(hash: string, purpose: TokenPurpose, now: number): Promise<MailToken | undefined>;
  /** Deletes the account's unspent tokens for a purpose (a newer link replaces them). */
  dropTokens(accountId: string, purpose: TokenPurpose): Promise<void>;

  /** Undefined: the account never changed them (DEFAULT_NOTICES). */
  noticeSettings(accountId: string): Promise<NoticeSettings | undefined>;
  setNoticeSettings(accountId: string, settings: NoticeSettings): Promise<void>;
  /** Records a notice as sent under `key` (e.g. the account, kind and cycle); false if it was before. */
  claimNotice(key: string, accountId: string, expiresAt: number): Promise<boolean>;

  /** Deletes expired tokens and notice records. */
  sweep(now: number): Promise<void>;
  close(): Promise<void>;
}

/** The embedded SQLite file under the data directory (beside billing.sqlite), or MongoDB when MONGO_URL is set. */
export async function openMailStore(config: { dataDir: string; mongoUrl?: string }): Promise<MailStore> {
  if (config.mongoUrl) {
    const { MongoMailStore } = await import('./store-mongo.js');
    return MongoMailStore.connect(config.mongoUrl);
  }
  const { SqliteMailStore } = await import('./store-sqlite.js');
  const { mkdirSync } = await import('node:fs');
  const path = await import('node:path');
  mkdirSync(config.dataDir, { recursive: true });
  return new SqliteMailStore(path.join(config.dataDir, 'mail.sqlite'));
}
