import { setUpSqlite } from '@webutil/kit';
import Database from 'better-sqlite3';
import type { MailStore, MailToken, NoticeSettings, TokenPurpose, Verification } from './store.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS email_verifications (
  account_id TEXT PRIMARY KEY,
  email TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  verified_at INTEGER
);
CREATE TABLE IF NOT EXISTS mail_tokens (
  hash TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  purpose TEXT NOT NULL,
  email TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS mail_tokens_account ON mail_tokens (account_id, purpose);
CREATE INDEX IF NOT EXISTS mail_tokens_expiry ON mail_tokens (expires_at);
CREATE TABLE IF NOT EXISTS notice_settings (
  account_id TEXT PRIMARY KEY,
  receipts INTEGER NOT NULL,
  renewals INTEGER NOT NULL,
  credits INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS notices_sent (
  key TEXT PRIMARY KEY,
  account_id TEXT NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS notices_sent_expiry ON notices_sent (expires_at);
`;

interface TokenRow {
  hash: string;
  account_id: string;
  purpose: string;
  email: string;
  created_at: number;
  expires_at: number;
}

const token = (row: TokenRow): MailToken => ({
  hash: row.hash,
  accountId: row.account_id,
  purpose: row.purpose as TokenPurpose,
  email: row.email,
  createdAt: row.created_at,
  expiresAt: row.expires_at,
});

/** The embedded mail store: one SQLite file, opened by every billing replica and the admin CLI. */
export class SqliteMailStore implements MailStore {
  private readonly db: Database.Database;
  private readonly q;

  constructor(file: string) {
    this.db = setUpSqlite(new Database(file), { schema: SCHEMA });
    const db = this.db;
    this.q = {
      addUnverified: db.prepare(
        `INSERT INTO email_verifications (account_id, email, created_at, verified_at) VALUES (?, ?, ?, NULL)
         ON CONFLICT (account_id) DO NOTHING`,
      ),
      markVerified: db.prepare(
        'UPDATE email_verifications SET verified_at = ? WHERE account_id = ? AND verified_at IS NULL',
      ),
      verification: db.prepare<[string], { email: string; verified_at: number | null }>(
        'SELECT email, verified_at FROM email_verifications WHERE account_id = ?',
      ),
      dropVerification: db.prepare('DELETE FROM email_verifications WHERE account_id = ?'),
      insertToken: db.prepare(
        `INSERT INTO mail_tokens (hash, account_id, purpose, email, created_at, expires_at)
         VALUES (@hash, @accountId, @purpose, @email, @createdAt, @expiresAt)`,
      ),
      // DELETE ... RETURNING: the one statement that finds the token spends it, so two uses cannot both win.
      useToken: db.prepare<[string, string, number], TokenRow>(
        'DELETE FROM mail_tokens WHERE hash = ? AND purpose = ? AND expires_at > ? RETURNING *',
      ),
      dropTokens: db.prepare('DELETE FROM mail_tokens WHERE account_id = ? AND purpose = ?'),
      noticeSettings: db.prepare<[string], { receipts: number; renewals: number; credits: number }>(
        'SELECT receipts, renewals, credits FROM notice_settings WHERE account_id = ?',
      ),
      setNoticeSettings: db.prepare(
        `INSERT INTO notice_settings (account_id, receipts, renewals, credits)
         VALUES (@accountId, @receipts, @renewals, @credits)
         ON CONFLICT (account_id) DO UPDATE SET receipts = @receipts, renewals = @renewals, credits = @credits`,
      ),
      claimNotice: db.prepare(
        'INSERT INTO notices_sent (key, account_id, expires_at) VALUES (?, ?, ?) ON CONFLICT (key) DO NOTHING',
      ),
      sweepTokens: db.prepare('DELETE FROM mail_tokens WHERE expires_at <= ?'),
      sweepNotices: db.prepare('DELETE FROM notices_sent WHERE expires_at <= ?'),
    };
  }

  async addUnverified(accountId: string, email: string, at: number): Promise<void> {
    this.q.addUnverified.run(accountId, email, at);
  }

  async markVerified(accountId: string, at: number): Promise<void> {
    this.q.markVerified.run(at, accountId);
  }

  async verification(accountId: string): Promise<Verification | undefined> {
    const row = this.q.verification.get(accountId);
    return row && { email: row.email, verifiedAt: row.verified_at };
  }

  async dropVerification(accountId: string): Promise<void> {
    this.q.dropVerification.run(accountId);
  }

  async insertToken(record: MailToken): Promise<void> {
    this.q.insertToken.run(record);
  }

  async useToken(hash: string, purpose: TokenPurpose, now: number): Promise<MailToken | undefined> {
    const row = this.q.useToken.get(hash, purpose, now);
    return row && token(row);
  }

  async dropTokens(accountId: string, purpose: TokenPurpose): Promise<void> {
    this.q.dropTokens.run(accountId, purpose);
  }

  async noticeSettings(accountId: string): Promise<NoticeSettings | undefined> {
    const row = this.q.noticeSettings.get(accountId);
    return row && { receipts: row.receipts === 1, renewals: row.renewals === 1, credits: row.credits === 1 };
  }

  async setNoticeSettings(accountId: string, settings: NoticeSettings): Promise<void> {
    this.q.setNoticeSettings.run({
      accountId,
      receipts: Number(settings.receipts),
      renewals: Number(settings.renewals),
      credits: Number(settings.credits),
    });
  }

  async claimNotice(key: string, accountId: string, expiresAt: number): Promise<boolean> {
    return this.q.claimNotice.run(key, accountId, expiresAt).changes === 1;
  }

  async sweep(now: number): Promise<void> {
    this.q.sweepTokens.run(now);
    this.q.sweepNotices.run(now);
  }

  async close(): Promise<void> {
    this.db.close();
  }
}
