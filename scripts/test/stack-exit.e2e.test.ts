import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { REPO_ROOT } from '../src/local-stack.js';

const run = promisify(execFile);

/** A process that starts a test stack and exits without stopping it, as a runner that gives up does. */
const abandon = `
  import { startTestStack } from ${JSON.stringify(path.join(REPO_ROOT, 'scripts/src/test-stack.ts'))};
  const stack = await startTestStack();
  const names = ['edge', 'billing', 'crawl', 'meta-scan', 'tls-scan', 'render', 'bookmark'];
  console.log(JSON.stringify(names.map((name) => stack.pid(name))));
  process.exit(1);
`;

/** Running, or stopped; not gone, and not a zombie waiting for whoever reaps orphans here. */
const alive = (pid: number) => {
  try {
    const state = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0];
    return state !== undefined && state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
};

describe('a stack whose starter exits', function () {
  this.timeout(120_000);

  it('goes with it: no service process is left running', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', abandon], {
      cwd: REPO_ROOT,
    }).catch((err: { stdout: string }) => err);
    const pids = JSON.parse(stdout.trim().split('\n').pop() ?? '[]') as number[];
    expect(pids).to.have.length(7);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(pids.filter(alive), 'still running').to.deep.equal([]);
  });
});
