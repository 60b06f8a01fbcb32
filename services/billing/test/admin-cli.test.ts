import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from '@webutil/scripts/local-stack';
import { expect } from 'chai';

const run = promisify(execFile);

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** `npm run admin -- ...` as an operator types it, with DATA_DIR pointing at `dataDir`. */
async function admin(dataDir: string, ...args: string[]): Promise<Ran> {
  try {
    const { stdout, stderr } = await run('npm', ['run', '-s', 'admin', '--', ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const failed = err as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** Issue 12, item 10: the operator CLI builds once, says which store it uses, and does not guess. */
describe('operator CLI (npm run admin)', function () {
  this.timeout(180_000);
  let dataDir: string;
  beforeEach(() => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'webutil-admin-'));
  });
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('refuses a read command on a directory with no database, and creates nothing there', async () => {
    const empty = path.join(dataDir, 'typo');
    const ran = await admin(empty, 'show', '--email', 'nobody@example.com');
    expect(ran.code).to.equal(1);
    expect(ran.stderr).to.include(`no billing database at ${path.join(empty, 'billing.sqlite')}`);
    expect(existsSync(empty), 'no directory made').to.equal(false);
  });

  it('says which store it uses, creates it on create-account, and does not rebuild when nothing changed', async () => {
    const created = await admin(dataDir, 'create-account', '--email', 'op@example.com', '--json');
    expect(created.code, created.stderr).to.equal(0);
    expect(created.stderr).to.include(`admin: store: SQLite at ${path.join(dataDir, 'billing.sqlite')}`);
    expect(JSON.parse(created.stdout)).to.include({ email: 'op@example.com', plan: 'FREE' });
    expect(readdirSync(dataDir)).to.include('billing.sqlite');

    const shown = await admin(dataDir, 'show', '--email', 'op@example.com', '--json');
    expect(shown.code, shown.stderr).to.equal(0);
    expect(shown.stderr, 'the build is up to date after the first call').to.not.include('building');
    expect(JSON.parse(shown.stdout)).to.include({ email: 'op@example.com' });
  });
});
