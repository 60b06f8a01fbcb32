/**
 * The audits kept for comparison (decision 0477): for each account and start URL, its last two
 * finished audits as their findings (issue type and URL), so the next audit of the site lists what
 * is new and what was fixed. Apart from the job store: jobs expire within the hour, a site is
 * audited again days later. SQLite on one machine, MongoDB (collection site_audit_history) in a
 * cluster, as the job store.
 */
import zlib from 'node:zlib';
import { setUpSqlite } from '@webutil/kit';
import Database from 'better-sqlite3';
import type { Connection, Model } from 'mongoose';

/** A finished audit as the next one compares with it. */
export interface KeptAudit {
  jobId: string;
  scannedAt: string;
  /** `<issue id>\t<url>`, each once. */
  findings: string[];
}

export interface AuditHistory {
  /** The latest audit kept for the site other than `jobId` (a retried job never compares with itself). */
  previous(site: string, jobId: string): Promise<KeptAudit | undefined>;
  /** Keeps the audit as the site's latest, and drops what is older than the one before it. */
  keep(site: string, audit: KeptAudit): Promise<void>;
  close(): Promise<void>;
}

/** The findings travel gzip'd: a large site's list compresses many times. */
const pack = (findings: string[]) => zlib.gzipSync(findings.join('\n'), { level: 1 });
const unpack = (bytes: Buffer | Uint8Array) => {
  const text = zlib.gunzipSync(bytes).toString('utf8');
  return text ? text.split('\n') : [];
};

const SCHEMA = `
CREATE TABLE IF NOT EXISTS site_audit_history (
  site TEXT NOT NULL,
  job_id TEXT NOT NULL,
  scanned_at TEXT NOT NULL,
  findings BLOB NOT NULL,
  PRIMARY KEY (site, job_id)
);
CREATE INDEX IF NOT EXISTS site_audit_history_latest ON site_audit_history (site, scanned_at);
`;

interface Row {
  job_id: string;
  scanned_at: string;
  findings: Buffer;
}

export class SqliteAuditHistory implements AuditHistory {
  private readonly db: Database.Database;

  constructor(file: string) {
    this.db = setUpSqlite(new Database(file), { schema: SCHEMA });
  }

  async previous(site: string, jobId: string): Promise<KeptAudit | undefined> {
    const row = this.db
      .prepare<[string, string], Row>(
        'SELECT job_id, scanned_at, findings FROM site_audit_history WHERE site = ? AND job_id != ? ' +
          'ORDER BY scanned_at DESC LIMIT 1',
      )
      .get(site, jobId);
    return row && { jobId: row.job_id, scannedAt: row.scanned_at, findings: unpack(row.findings) };
  }

  async keep(site: string, audit: KeptAudit): Promise<void> {
    const before = await this.previous(site, audit.jobId);
    this.db.transaction(() => {
      this.db
        .prepare('INSERT OR REPLACE INTO site_audit_history (site, job_id, scanned_at, findings) VALUES (?, ?, ?, ?)')
        .run(site, audit.jobId, audit.scannedAt, pack(audit.findings));
      if (before)
        this.db.prepare('DELETE FROM site_audit_history WHERE site = ? AND scanned_at < ?').run(site, before.scannedAt);
    })();
  }

  async close(): Promise<void> {
    this.db.close();
  }
}

interface KeptDoc {
  _id: string;
  site: string;
  jobId: string;
  scannedAt: string;
  findings: Buffer;
}

export class MongoAuditHistory implements AuditHistory {
  private constructor(
    private readonly connection: Connection,
    private readonly kept: Model<KeptDoc>,
  ) {}

  static async connect(url: string, collection = 'site_audit_history'): Promise<MongoAuditHistory> {
    const mongoose = (await import('mongoose')).default;
    const connection = await mongoose
      .createConnection(url, { autoCreate: false, autoIndex: false, serverSelectionTimeoutMS: 10_000 })
      .asPromise();
    const schema = new mongoose.Schema<KeptDoc>(
      {
        _id: String,
        site: { type: String, required: true },
        jobId: { type: String, required: true },
        scannedAt: { type: String, required: true },
        findings: { type: Buffer, required: true },
      },
      { versionKey: false },
    );
    schema.index({ site: 1, scannedAt: -1 });
    const kept = connection.model<KeptDoc>('SiteAuditKept', schema, collection);
    await kept.createIndexes();
    return new MongoAuditHistory(connection, kept);
  }

  async previous(site: string, jobId: string): Promise<KeptAudit | undefined> {
    const docs = await this.kept.find({ site }).sort({ scannedAt: -1 }).limit(3).lean();
    const doc = docs.find((d) => d.jobId !== jobId);
    if (!doc) return undefined;
    const bytes = doc.findings as unknown as Buffer | { buffer: Uint8Array };
    return {
      jobId: doc.jobId,
      scannedAt: doc.scannedAt,
      findings: unpack(Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer)),
    };
  }

  async keep(site: string, audit: KeptAudit): Promise<void> {
    const before = await this.previous(site, audit.jobId);
    await this.kept.collection.updateOne(
      { _id: `${site}\n${audit.jobId}` as never },
      { $set: { site, jobId: audit.jobId, scannedAt: audit.scannedAt, findings: pack(audit.findings) } },
      { upsert: true },
    );
    if (before) await this.kept.deleteMany({ site, scannedAt: { $lt: before.scannedAt } });
  }

  async close(): Promise<void> {
    await this.connection.close();
  }
}
