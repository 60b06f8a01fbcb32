import { execFile } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
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
  return adminWith({}, dataDir, ...args);
}

async function adminWith(env: Record<string, string>, dataDir: string, ...args: string[]): Promise<Ran> {
  try {
    const { stdout, stderr } = await run('npm', ['run', '-s', 'admin', '--', ...args], {
      cwd: REPO_ROOT,
      env: { ...process.env, ...env, DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
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

  describe('its build', () => {
    const stamp = path.join(REPO_ROOT, 'services/billing/tsconfig.tsbuildinfo');
    const entry = path.join(REPO_ROOT, 'services/billing/dist/admin.js');

    it('rebuilds billing when a source is newer than its last build, then not again', async () => {
      const longAgo = new Date('2020-01-01T00:00:00Z');
      utimesSync(stamp, longAgo, longAgo);
      const stale = await admin(dataDir, 'create-account', '--email', 'stale@example.com', '--json');
      expect(stale.code, stale.stderr).to.equal(0);
      expect(stale.stderr).to.include('admin: building billing');
      expect(statSync(stamp).mtime.getTime()).to.be.greaterThan(longAgo.getTime());
      const fresh = await admin(dataDir, 'show', '--email', 'stale@example.com', '--json');
      expect(fresh.code, fresh.stderr).to.equal(0);
      expect(fresh.stderr).to.not.include('building');
    });

    it('rebuilds billing when its entry is missing although the build info is fresh', async () => {
      const kept = `${entry}.kept-by-test`;
      renameSync(entry, kept);
      try {
        const ran = await admin(dataDir, 'create-account', '--email', 'missing@example.com', '--json');
        expect(ran.code, ran.stderr).to.equal(0);
        expect(ran.stderr).to.include('admin: building billing');
        expect(JSON.parse(ran.stdout)).to.include({ email: 'missing@example.com' });
        expect(existsSync(entry)).to.equal(true);
      } finally {
        if (existsSync(entry)) rmSync(kept, { force: true });
        else renameSync(kept, entry);
      }
    });

    it('checks no system package (Chromium is the services’ need, not the CLI’s)', async () => {
      // A dpkg first on PATH that only notes it was asked: install-deps asks dpkg about each system package.
      const bin = path.join(dataDir, 'bin');
      const asked = path.join(dataDir, 'dpkg-asked');
      mkdirSync(bin);
      writeFileSync(path.join(bin, 'dpkg'), `#!/bin/sh\necho "$@" >> ${JSON.stringify(asked)}\n`);
      chmodSync(path.join(bin, 'dpkg'), 0o755);
      const ran = await adminWith(
        { PATH: `${bin}:${process.env.PATH}` },
        dataDir,
        'create-account',
        '--email',
        'x@example.com',
      );
      expect(ran.code, ran.stderr).to.equal(0);
      expect(existsSync(asked), 'dpkg was asked about system packages').to.equal(false);
    });
  });
});
