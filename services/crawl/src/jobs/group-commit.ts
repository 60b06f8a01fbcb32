import type Database from 'better-sqlite3';

interface Pending {
  write: () => unknown;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit for an embedded store's writes (docs/decisions/0499-embedded-store-group-commit.md):
 * the writes asked for in one turn of the event loop run in one IMMEDIATE transaction, and each
 * promise settles once that transaction is committed. A commit costs more than the small writes it
 * carries (a distributed audit's claims, finishes and inserts), and many page workers ask at once.
 * When a write throws, the group is rolled back and each of its writes runs again in a transaction
 * of its own, so that one failing write fails alone. With a window, commits that come back to back
 * are spaced by it, so that a busy file's groups carry more writes; an idle file's write still
 * commits at the end of its turn.
 */
export class GroupCommit {
  private pending: Pending[] = [];
  /** When the last group was committed (performance.now()), for the window. */
  private lastCommitAt = Number.NEGATIVE_INFINITY;
  private readonly writeAll: Database.Transaction<(group: readonly Pending[]) => unknown[]>;

  /**
   * `committed` is told of each group committed (the file's checkpointer counts them); `windowMs`
   * is the least time from one commit to the next.
   */
  constructor(
    private readonly db: Database.Database,
    private readonly committed: () => void = () => undefined,
    private readonly windowMs = 0,
  ) {
    this.writeAll = db.transaction((group) => group.map(({ write }) => write()));
  }

  /** Runs `write` (synchronous statements) in the next group; its value once committed. */
  run<T>(write: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ write, resolve: resolve as (value: unknown) => void, reject });
      if (this.pending.length === 1) {
        const wait = this.lastCommitAt + this.windowMs - performance.now();
        if (wait > 0) setTimeout(() => this.commit(), wait);
        else setImmediate(() => this.commit());
      }
    });
  }

  /** Resolves once the writes asked for so far are committed (or failed). */
  async flushed(): Promise<void> {
    if (this.pending.length > 0) await this.run(() => undefined);
  }

  private commit(): void {
    const group = this.pending;
    this.pending = [];
    this.lastCommitAt = performance.now();
    let values: unknown[];
    try {
      values = this.writeAll.immediate(group);
    } catch {
      for (const { write, resolve, reject } of group)
        try {
          resolve(this.db.transaction(write).immediate());
        } catch (err) {
          reject(err);
        }
      return;
    }
    this.committed();
    for (const [i, { resolve }] of group.entries()) resolve(values[i]);
  }
}
