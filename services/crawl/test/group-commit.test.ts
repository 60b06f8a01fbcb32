import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { GroupCommit } from '../src/jobs/group-commit.js';

describe('GroupCommit (the embedded store writes a group at a time)', () => {
  let dir: string;
  let db: Database.Database;
  let other: Database.Database;
  let group: GroupCommit;

  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'group-commit-'));
    const file = path.join(dir, 'store.sqlite');
    db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.exec('CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER NOT NULL)');
    other = new Database(file);
    group = new GroupCommit(db);
  });

  afterEach(() => {
    db.close();
    other.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const insert = (k: string, v: number | null) => () =>
    db.prepare('INSERT INTO t (k, v) VALUES (?, ?)').run(k, v).changes;
  const rows = () => other.prepare('SELECT k, v FROM t ORDER BY k').all();

  it('commits the writes of one turn in one transaction, each answered once it is committed', async () => {
    const version = () => other.pragma('data_version', { simple: true }) as number;
    const before = version();
    const answers = [group.run(insert('a', 1)), group.run(insert('b', 2)), group.run(insert('c', 3))];
    // Nothing is visible to another connection before the group commits.
    expect(rows()).to.deep.equal([]);
    const firstSeen = answers[0]?.then(() => rows());
    expect(await Promise.all(answers)).to.deep.equal([1, 1, 1]);
    expect(await firstSeen).to.have.length(3);
    // data_version moves once per commit made by another connection.
    expect(version()).to.equal(before + 1);
  });

  it('fails only the write that throws; the others of its group are committed', async () => {
    const answers = await Promise.allSettled([
      group.run(insert('a', 1)),
      group.run(insert('a', 9)), // the key is taken
      group.run(insert('b', null)), // v is NOT NULL
      group.run(insert('c', 3)),
    ]);
    expect(answers.map((a) => a.status)).to.deep.equal(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    expect(rows()).to.deep.equal([
      { k: 'a', v: 1 },
      { k: 'c', v: 3 },
    ]);
  });

  it('fails every write of a group that cannot commit, and leaves nothing', async () => {
    db.pragma('busy_timeout = 0');
    other.exec('BEGIN IMMEDIATE');
    const answers = await Promise.allSettled([group.run(insert('a', 1)), group.run(insert('b', 2))]);
    other.exec('ROLLBACK');
    expect(answers.map((a) => a.status)).to.deep.equal(['rejected', 'rejected']);
    expect(String((answers[0] as PromiseRejectedResult).reason)).to.match(/locked|busy/i);
    expect(rows()).to.deep.equal([]);
    expect(db.inTransaction).to.equal(false);
  });

  it('flushed() settles once every write asked for is committed', async () => {
    const written = group.run(insert('a', 1));
    await group.flushed();
    expect(rows()).to.deep.equal([{ k: 'a', v: 1 }]);
    expect(await written).to.equal(1);
    await group.flushed(); // nothing pending: settles at once
  });

  it('with a window, spaces back-to-back commits: writes of later turns join the waiting group', async () => {
    let groups = 0;
    // A window far longer than three turns take, even on a loaded machine.
    const spaced = new GroupCommit(db, () => groups++, 1_000);
    // An idle file: the first write commits at the end of its turn, as without a window.
    await spaced.run(insert('a', 1));
    expect(groups).to.equal(1);
    // Right after a commit: writes asked in three turns wait for the window and commit as one group.
    const later: Promise<number>[] = [];
    for (const k of ['b', 'c', 'd']) {
      later.push(spaced.run(insert(k, 2)));
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(rows()).to.have.length(1);
    expect(await Promise.all(later)).to.deep.equal([1, 1, 1]);
    expect(groups).to.equal(2);
    expect(rows()).to.have.length(4);
  });
});
