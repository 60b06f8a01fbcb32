/**
 * The embedded store's convention (docs/decisions/0020-billing-stores-and-tools.md), shared by every
 * SQLite store file: billing's, its webhooks', the crawl service's jobs.
 */

/** What is used of a better-sqlite3 Database (the kit does not load the driver: a store does). */
export interface SqliteDatabase {
  pragma(source: string): unknown;
  exec(source: string): unknown;
}

/** A column added to a table after it was first created: a file of an earlier release gains it. */
export interface AddedColumn {
  table: string;
  column: string;
  /** Its SQL type, e.g. TEXT; an added column has no NOT NULL (the rows it is added to have no value). */
  type: string;
}

/** How long a writer waits for another's transaction, and an opener for another's switch to WAL. */
const BUSY_WAIT_MS = 5000;
const WAL_RETRY_MS = 10;

/**
 * Sets up a store file just opened: WAL (polls and reads never wait on the writer; another process,
 * the admin CLI or a replica, may write meanwhile), NORMAL sync (WAL keeps it consistent), a writer
 * waits up to 5 s for another's transaction; then `schema` (CREATE ... IF NOT EXISTS, every column
 * of today's tables), for a file of an earlier release the columns it lacks, and `afterColumns`
 * (indexes on added columns).
 *
 * Replicas sharing a file open it at the same moment, so each step must hold against another
 * process doing the same: the busy wait is set first; the switch to WAL, which SQLite refuses at
 * once (no busy wait) while another connection is switching, is tried again for the same bound; and
 * the schema is applied in one IMMEDIATE transaction, so no two openers both find a column missing.
 */
export function setUpSqlite<Db extends SqliteDatabase>(
  db: Db,
  {
    schema,
    addedColumns = [],
    afterColumns = '',
  }: { schema: string; addedColumns?: readonly AddedColumn[]; afterColumns?: string },
): Db {
  db.pragma(`busy_timeout = ${BUSY_WAIT_MS}`);
  switchToWal(db);
  db.pragma('synchronous = NORMAL');
  db.exec('BEGIN IMMEDIATE');
  try {
    db.exec(schema);
    for (const { table, column, type } of addedColumns) {
      const columns = db.pragma(`table_info(${table})`) as { name: string }[];
      if (!columns.some((c) => c.name === column)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${type}`);
    }
    if (afterColumns) db.exec(afterColumns);
    db.exec('COMMIT');
  } catch (err) {
    db.exec('ROLLBACK');
    throw err;
  }
  return db;
}

function switchToWal(db: SqliteDatabase): void {
  const giveUpAt = Date.now() + BUSY_WAIT_MS;
  for (;;) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (err) {
      if ((err as { code?: unknown }).code !== 'SQLITE_BUSY' || Date.now() >= giveUpAt) throw err;
      // A store is opened once, at start-up, before anything is served: a blocking pause is fine here.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, WAL_RETRY_MS);
    }
  }
}
