/** The embedded (SQLite) store of status page settings (decision 0438). */
import { setUpSqlite } from '@webutil/kit';
import type Database from 'better-sqlite3';
import { SlugTakenError, type StatusPageRecord, type StatusPageStore } from './store.js';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS monitor_status_pages (
  owner TEXT PRIMARY KEY,
  slug TEXT NOT NULL UNIQUE,
  title TEXT NOT NULL,
  monitor_ids TEXT NOT NULL,
  enabled INTEGER NOT NULL,
  updated_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS monitor_status_page_monitors (
  monitor_id TEXT NOT NULL,
  owner TEXT NOT NULL,
  PRIMARY KEY (monitor_id, owner)
);`;

interface Row {
  owner: string;
  slug: string;
  title: string;
  monitor_ids: string;
  enabled: number;
  updated_at: number;
}

const fromRow = (row: Row | undefined): StatusPageRecord | undefined =>
  row && {
    owner: row.owner,
    slug: row.slug,
    title: row.title,
    monitorIds: JSON.parse(row.monitor_ids) as string[],
    enabled: row.enabled === 1,
    updatedAt: row.updated_at,
  };

export class SqliteStatusPageStore implements StatusPageStore {
  private readonly db: Database.Database;

  constructor(db: Database.Database) {
    this.db = setUpSqlite(db, { schema: SCHEMA });
  }

  async put(page: StatusPageRecord): Promise<StatusPageRecord> {
    const write = this.db.transaction(() => {
      const holder = this.db.prepare('SELECT owner FROM monitor_status_pages WHERE slug = ?').get(page.slug) as
        | { owner: string }
        | undefined;
      if (holder && holder.owner !== page.owner) throw new SlugTakenError(page.slug);
      this.db
        .prepare(
          `INSERT INTO monitor_status_pages (owner, slug, title, monitor_ids, enabled, updated_at)
           VALUES (@owner, @slug, @title, @monitorIds, @enabled, @updatedAt)
           ON CONFLICT (owner) DO UPDATE SET slug = excluded.slug, title = excluded.title,
             monitor_ids = excluded.monitor_ids, enabled = excluded.enabled, updated_at = excluded.updated_at`,
        )
        .run({ ...page, monitorIds: JSON.stringify(page.monitorIds), enabled: page.enabled ? 1 : 0 });
      this.db.prepare('DELETE FROM monitor_status_page_monitors WHERE owner = ?').run(page.owner);
      const shown = this.db.prepare(
        'INSERT OR IGNORE INTO monitor_status_page_monitors (monitor_id, owner) VALUES (?, ?)',
      );
      for (const id of page.monitorIds) shown.run(id, page.owner);
    });
    write.immediate();
    return page;
  }

  async byOwner(owner: string): Promise<StatusPageRecord | undefined> {
    return fromRow(this.db.prepare('SELECT * FROM monitor_status_pages WHERE owner = ?').get(owner) as Row | undefined);
  }

  async bySlug(slug: string): Promise<StatusPageRecord | undefined> {
    return fromRow(this.db.prepare('SELECT * FROM monitor_status_pages WHERE slug = ?').get(slug) as Row | undefined);
  }

  async showing(monitorId: string): Promise<StatusPageRecord | undefined> {
    const row = this.db
      .prepare(
        `SELECT p.* FROM monitor_status_page_monitors m JOIN monitor_status_pages p ON p.owner = m.owner
         WHERE m.monitor_id = ? AND p.enabled = 1`,
      )
      .get(monitorId) as Row | undefined;
    return fromRow(row);
  }
}
