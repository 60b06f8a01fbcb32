import { createRequire } from 'node:module';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { GroupCommit } from './group-commit.js';

/** Group commits after which a file is busy enough for a checkpointer of its own. */
const BUSY_AFTER_COMMITS = 500;
/** How often the checkpointer copies the write-ahead log into the file. */
const CHECKPOINT_EVERY_MS = 200;
/**
 * The least time between two commits of the file: a distributed audit's page workers then share
 * each commit (decision 0499), and a write to an idle file still commits at the end of its turn.
 */
const COMMIT_WINDOW_MS = 1;
/**
 * The connection's page cache, in KiB: SQLite's own default (better-sqlite3 raises it to 16 MB). The
 * cache fills as the file grows, so a larger one is memory that grows with the audited site.
 */
const PAGE_CACHE_KIB = 2000;
/** Past this many log pages this connection checkpoints itself, as SQLite does by default at 1,000. */
const BACKSTOP_PAGES = 20_000;

// A thread of its own on the file (CommonJS, so it needs no loader under tsx): a PASSIVE checkpoint
// never waits for the writer nor stops it.
const CHECKPOINTER = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 5000');
db.pragma('synchronous = NORMAL');
const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch {
    // Busy or gone: the next round, or the writer's own backstop, checkpoints.
  }
}, workerData.everyMs);
parentPort.once('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

/**
 * One connection and one group commit per store file in this process (decision 0500): the crawl
 * jobs' file holds the jobs, the audit pages and the frontier, each a store of its own. On separate
 * connections every commit of one would throw away the page cache of the others (SQLite reloads a
 * connection's cache once another wrote the file) and each would commit its own group per turn.
 * Back-to-back commits are spaced by a window. Once the file is busy, a thread of its own copies
 * the write-ahead log into it, so that the checkpoints (and their fsyncs) run beside the event loop
 * rather than inside a commit.
 * Each store acquires the file when it opens and releases it when it closes; the last release
 * closes the connection.
 */
export class SqliteFile {
  private static readonly opened = new Map<string, SqliteFile>();

  /** The writes asked for in one turn, of every store on this file, committed together. */
  readonly group: GroupCommit;
  private holders = 0;
  private commits = 0;
  private checkpointer: Worker | undefined;

  private constructor(
    private readonly file: string,
    readonly db: Database.Database,
  ) {
    this.group = new GroupCommit(
      db,
      () => {
        if (++this.commits === BUSY_AFTER_COMMITS) this.startCheckpointer();
      },
      COMMIT_WINDOW_MS,
    );
  }

  /** The file's connection in this process, opened on first use. */
  static acquire(file: string): SqliteFile {
    const key = path.resolve(file);
    let opened = SqliteFile.opened.get(key);
    if (!opened) {
      const db = new Database(file);
      db.pragma(`cache_size = -${PAGE_CACHE_KIB}`);
      opened = new SqliteFile(key, db);
      SqliteFile.opened.set(key, opened);
    }
    opened.holders += 1;
    return opened;
  }

  /** Waits for the writes asked for so far; closes the connection once no store holds it. */
  async release(): Promise<void> {
    await this.group.flushed();
    this.holders -= 1;
    if (this.holders > 0) return;
    SqliteFile.opened.delete(this.file);
    if (this.checkpointer) {
      const stopped = new Promise((resolve) => this.checkpointer?.once('exit', resolve));
      this.checkpointer.postMessage('close');
      await stopped;
    }
    this.db.close();
  }

  /** Whether a thread of its own checkpoints the file now (tests read it). */
  get checkpointsAside(): boolean {
    return this.checkpointer !== undefined;
  }

  private startCheckpointer(): void {
    if (this.db.memory || this.checkpointer) return;
    this.db.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`);
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const worker = new Worker(CHECKPOINTER, {
      eval: true,
      workerData: { driver, file: this.file, everyMs: CHECKPOINT_EVERY_MS },
      resourceLimits: { maxOldGenerationSizeMb: 8, maxYoungGenerationSizeMb: 2 },
    });
    // Never keeps the process up; a thread that fails leaves the checkpoints to the backstop.
    worker.unref();
    worker.on('error', () => {
      if (this.db.open) this.db.pragma('wal_autocheckpoint = 1000');
    });
    worker.once('exit', () => {
      if (this.checkpointer === worker) this.checkpointer = undefined;
    });
    this.checkpointer = worker;
  }
}
