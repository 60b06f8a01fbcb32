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

/**
 * Sets up a store file just opened: WAL (polls and reads never wait on the writer; another process,
 * the admin CLI or a replica, may write meanwhile), NORMAL sync (WAL keeps it consistent), a writer
 * waits up to 5 s for another's transaction; then `schema` (CREATE ... IF NOT EXISTS, every column
 * of today's tables) and, for a file of an earlier release, the columns it lacks.
 */
export function setUpSqlite<Db extends SqliteDatabase>(
  db: Db,
  { schema, addedColumns = [] }: { schema: string; addedColumns?: readonly AddedColumn[] },
): Db {
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  db.exec(schema);
  for (const { table, column, type } of addedColumns) {
    const columns = db.pragma(`table_info(${table})`) as { name: string }[];
    if (!columns.some((c) => c.name === column)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${type}`);
  }
  return db;
}
