import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { SERVICES, startStack } from '../src/local-stack.js';

describe('a stack whose process exits before it is ready', function () {
  this.timeout(60_000);
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'webutil-launch-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('fails to start with that process’s last lines, which say why', async () => {
    const entry = path.join(dir, 'fails.mjs');
    writeFileSync(
      entry,
      "console.log('starting'); console.error('cannot open the job store: database is locked'); process.exit(70);",
    );
    const processFor = Object.fromEntries(SERVICES.map((s) => [s.name, { entry }]));
    const error = await startStack({ edgePort: 0, basePort: 0, dataDir: dir, processFor, onLog: () => undefined }).then(
      () => undefined,
      (err: Error) => err,
    );
    expect(error?.message).to.match(/exited \(code 70\) before it was ready; its last lines:\n/);
    expect(error?.message).to.contain('starting').and.contain('cannot open the job store: database is locked');
  });
});
