import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { setUpSqlite } from '../src/sqlite.js';

const sqliteModule = fileURLToPath(new URL('../src/sqlite.ts', import.meta.url));

const SCHEMA = `
CREATE TABLE IF NOT EXISTS jobs (id TEXT PRIMARY KEY, status TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS jobs_status ON jobs (status);
`;
const ADDED_COLUMNS = [{ table: 'jobs', column: 'caller', type: 'TEXT' }];
const AFTER_COLUMNS = 'CREATE INDEX IF NOT EXISTS jobs_caller ON jobs (caller)';

/**
 * A replica's start-up, many times over: once told the moment to begin (on stdin, so every opener
 * is loaded before the first opens), it sets up `files` fresh store files, each at its own moment
 * `spacingMs` apart, as the other openers do; it prints each file's error, if any, as a JSON line.
 */
const OPENER = `
  const { default: Database } = await import('better-sqlite3');
  const { setUpSqlite } = await import(${JSON.stringify(sqliteModule)});
  const [dir, files, spacingMs] = process.argv.slice(1);
  process.stdout.write('ready\\n');
  process.stdin.once('data', (data) => {
    const startAt = Number(String(data));
    for (let i = 0; i < Number(files); i++) {
      while (Date.now() < startAt + i * Number(spacingMs));
      try {
        const db = new Database(dir + '/store-' + i + '.sqlite');
        setUpSqlite(db, { schema: ${JSON.stringify(SCHEMA)}, addedColumns: ${JSON.stringify(ADDED_COLUMNS)},
          afterColumns: ${JSON.stringify(AFTER_COLUMNS)} });
        db.close();
      } catch (err) {
        process.stdout.write(JSON.stringify({ file: i, code: err.code, message: err.message }) + '\\n');
      }
    }
    process.exit(0);
  });
`;

function startOpener(dir: string, files: number, spacingMs: number) {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', OPENER, dir, String(files), String(spacingMs)],
    { cwd: fileURLToPath(new URL('.', import.meta.url)), stdio: ['pipe', 'pipe', 'inherit'] },
  );
  let stdout = '';
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      if (stdout.startsWith('ready\n')) resolve();
    });
    child.on('error', reject);
    child.on('close', () => reject(new Error(`an opener exited before it was ready: ${stdout}`)));
  });
  const errors = new Promise<string[]>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`an opener exited with ${code}: ${stdout}`));
      else resolve(stdout.split('\n').filter((line) => line.startsWith('{')));
    });
  });
  return { child, ready, errors };
}

describe('setting up a SQLite store file', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'webutil-sqlite-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('gives a fresh file WAL, today’s tables, the added columns and their indexes', () => {
    const db = setUpSqlite(new Database(path.join(dir, 'fresh.sqlite')), {
      schema: SCHEMA,
      addedColumns: ADDED_COLUMNS,
      afterColumns: AFTER_COLUMNS,
    });
    expect(db.pragma('journal_mode', { simple: true })).to.equal('wal');
    expect(db.pragma('busy_timeout', { simple: true })).to.equal(5000);
    expect((db.pragma('table_info(jobs)') as { name: string }[]).map((c) => c.name)).to.deep.equal([
      'id',
      'status',
      'caller',
    ]);
    expect((db.pragma('index_list(jobs)') as { name: string }[]).map((i) => i.name).sort()).to.include.members([
      'jobs_caller',
      'jobs_status',
    ]);
    db.close();
  });

  it('leaves a file whose set-up failed as it was: the added columns come in one transaction or not at all', () => {
    const file = path.join(dir, 'old.sqlite');
    const old = new Database(file);
    old.exec("CREATE TABLE jobs (id TEXT PRIMARY KEY, status TEXT NOT NULL); INSERT INTO jobs VALUES ('a', 'done')");
    old.close();
    const db = new Database(file);
    expect(() =>
      setUpSqlite(db, { schema: SCHEMA, addedColumns: ADDED_COLUMNS, afterColumns: 'CREATE INDEX x ON missing (y)' }),
    ).to.throw(/no such table/);
    expect((db.pragma('table_info(jobs)') as { name: string }[]).map((c) => c.name)).to.deep.equal(['id', 'status']);
    expect(db.prepare('SELECT * FROM jobs').all()).to.deep.equal([{ id: 'a', status: 'done' }]);
    db.close();
  });

  it('holds when replicas open one fresh file at the same moment (4 processes, 25 files each)', async () => {
    const files = 25;
    const openers = Array.from({ length: 4 }, () => startOpener(dir, files, 40));
    await Promise.all(openers.map((o) => o.ready));
    const startAt = String(Date.now() + 200);
    for (const { child } of openers) child.stdin.end(startAt);
    const errors = (await Promise.all(openers.map((o) => o.errors))).flat();
    expect(errors, errors.join('\n')).to.deep.equal([]);
    for (let i = 0; i < files; i++) {
      const db = new Database(path.join(dir, `store-${i}.sqlite`), { readonly: true });
      expect(db.pragma('journal_mode', { simple: true }), `file ${i}`).to.equal('wal');
      expect((db.pragma('table_info(jobs)') as { name: string }[]).map((c) => c.name)).to.include('caller');
      db.close();
    }
  });
});
