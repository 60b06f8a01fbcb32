import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { Contract } from '@webutil/scripts/contract';
import { type DemoSite, startDemoSite } from '@webutil/scripts/demo-site';
import { freePort, REPO_ROOT } from '@webutil/scripts/local-stack';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';
import {
  differences,
  type Example,
  examples,
  fencedBlocks,
  lineMatches,
  markedScript,
  outputsOf,
  SHELL_LANGUAGES,
} from './readme-examples.js';

const run = promisify(execFile);
const README = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
/** Where the README's examples write their files (cookie jar, downloads), as its first example says. */
const SCRATCH = '.try';

/** The shell blocks the test runs: every one but the set-up commands (npm start and npm test themselves). */
function runnableBlocks() {
  const shell = fencedBlocks(README).filter((block) => SHELL_LANGUAGES.includes(block.language));
  const setUp = shell.filter((block) => block.section === 'Set up');
  return { shell, setUp, runnable: shell.filter((block) => block.section !== 'Set up') };
}

describe('README code blocks', () => {
  it('are all tagged with a language, and every shell block but the set-up one is run', () => {
    const blocks = fencedBlocks(README);
    expect(
      blocks.filter((block) => !block.language).map((block) => block.body.slice(0, 60)),
      'untagged blocks',
    ).to.deep.equal([]);
    const { shell, setUp, runnable } = runnableBlocks();
    expect(setUp, 'one set-up block').to.have.length(1);
    expect(setUp[0]?.body)
      .to.match(/^npm start\b/m)
      .and.match(/^npm test\b/m);
    expect(runnable.length).to.equal(shell.length - 1);
    expect(runnable.length, 'shell blocks run').to.be.greaterThan(8);
    // Shell-looking commands outside a shell block would escape the test.
    for (const block of blocks.filter((b) => !SHELL_LANGUAGES.includes(b.language))) {
      expect(block.body, `a ${block.language} block`).to.not.match(/^\s*(curl|npm|export) /m);
    }
  });

  it('show outputs that parse (JSON values and text lines under the command that prints them)', () => {
    const all = runnableBlocks().runnable.flatMap((block) => examples(block.body));
    expect(all.filter((example) => example.shown.length).length, 'examples with a shown output').to.be.greaterThan(12);
  });
});

/**
 * Issue 12, items 9 and 11: the README's examples run as written, in order, against a stack with
 * the offline demo site, and print what the README shows, so neither can rot. Only the ports
 * change (the README's 8080, 8090 and 8091 are the test stack's and the demo's); `npm` runs in the
 * repository and `curl` fails on an error status, so a refused call stops the script.
 */
describe('README examples', function () {
  this.timeout(300_000);
  let stack: TestStack;
  let demo: DemoSite;
  let workDir: string;
  let demoDir: string;

  before(async () => {
    workDir = mkdtempSync(path.join(os.tmpdir(), 'webutil-readme-'));
    demoDir = mkdtempSync(path.join(os.tmpdir(), 'webutil-readme-demo-'));
    demo = await startDemoSite({ port: 0, tlsPort: 0, dataDir: demoDir });
    stack = await startTestStack({
      allowTargets: demo.stackEnv.WEBUTIL_ALLOW_TARGETS,
      envFor: { 'tls-scan': demo.tlsScanEnv },
    });
  });
  after(async () => {
    await stack?.stop();
    await demo?.close();
    for (const dir of [workDir, demoDir]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('run in order from a shell and print what the README shows', async () => {
    const all: Example[] = runnableBlocks().runnable.flatMap((block) => examples(block.body));
    const ports = [
      ['8080', new URL(stack.edgeUrl).port],
      ['8090', new URL(demo.url).port],
      ['8091', String(demo.tlsPort)],
    ] as const;
    /** Replaces a port where it is a whole number (20000 must not match inside 200001). */
    const swap = (text: string, before: string, from: string, to: string) =>
      text.replace(new RegExp(`${before.replace(/[.]/g, '\\.')}${from}(?!\\d)`, 'g'), `${before}${to}`);
    const toTest = (text: string) =>
      ports.reduce(
        (out, [readme, real]) => swap(swap(out, '127.0.0.1:', readme, real), 'localhost:', readme, real),
        text,
      );
    const toReadme = (text: string) =>
      ports.reduce(
        (out, [readme, real]) =>
          swap(swap(swap(out, '127.0.0.1:', real, readme), 'localhost:', real, readme), '"port":', real, readme),
        text,
      );
    const script = [
      'set -euo pipefail',
      `npm() { command npm --prefix ${JSON.stringify(REPO_ROOT)} "$@"; }`,
      'curl() { command curl --fail-with-body --no-progress-meter "$@"; }',
      toTest(markedScript(all)),
    ].join('\n');
    const { stdout } = await run('bash', ['-c', script], {
      cwd: workDir,
      env: { ...process.env, DATA_DIR: stack.dataDir, LOG_LEVEL: 'warn' },
      maxBuffer: 64 * 1024 * 1024,
    }).catch((err: { stdout?: string; stderr?: string; message: string }) => {
      throw new Error(
        `${err.message}\n--- stdout (tail)\n${err.stdout?.slice(-3000)}\n` +
          `--- stderr (tail)\n${err.stderr?.slice(-3000)}`,
      );
    });

    const outputs = outputsOf(stdout, all);
    const problems: string[] = [];
    all.forEach((example, n) => {
      if (!example.shown.length) return;
      const real = (outputs.get(n) ?? []).map(toReadme);
      const where = example.command.split('\n')[0];
      if (real.length !== example.shown.length) {
        problems.push(
          `${where}\n  shows ${example.shown.length} line(s), printed ${real.length}:\n  ${real.join('\n  ')}`,
        );
        return;
      }
      example.shown.forEach((shown, i) => {
        const line = real[i] ?? '';
        if ('line' in shown) {
          if (!lineMatches(shown.line, line)) problems.push(`${where}\n  shows: ${shown.line}\n  printed: ${line}`);
          return;
        }
        let value: unknown;
        try {
          value = JSON.parse(line);
        } catch {
          problems.push(`${where}\n  shows JSON, printed: ${line}`);
          return;
        }
        const found = differences(shown.json, value);
        if (found.length) problems.push(`${where}\n  ${found.join('\n  ')}\n  printed: ${line.slice(0, 2000)}`);
      });
    });
    expect(problems, problems.join('\n\n')).to.deep.equal([]);

    expect(readdirSync(workDir), `the examples write only into ${SCRATCH}/`).to.deep.equal([SCRATCH]);
    const file = (name: string) => readFileSync(path.join(workDir, SCRATCH, name));
    expect(file('page.webp').subarray(8, 12).toString('latin1')).to.equal('WEBP');
    expect(file('page.pdf').subarray(0, 5).toString('latin1')).to.equal('%PDF-');
    expect(file('bookmarks.xbel').toString('utf8')).to.include('Demo Bakery');
    expect(file('bookmarks.html').toString('utf8')).to.include('<!DOCTYPE NETSCAPE-Bookmark-file-1>');
    // What the examples leave in a clone stays out of git.
    for (const name of readdirSync(path.join(workDir, SCRATCH))) {
      await run('git', ['check-ignore', '-q', `${SCRATCH}/${name}`], { cwd: REPO_ROOT });
    }
  });
});

/**
 * Issue 12, item 11: `npm start -- --demo` on a fresh clone (no data directory yet) serves the
 * demo site next to the stack and allows it; the demo's HTTPS server answers the SSL scan on the
 * port after the demo site's.
 */
describe('npm start -- --demo', function () {
  this.timeout(180_000);
  let child: ChildProcess | undefined;
  let parent: string;
  before(() => {
    parent = mkdtempSync(path.join(os.tmpdir(), 'webutil-demo-'));
  });
  after(async () => {
    if (child && child.exitCode === null) {
      child.kill('SIGINT');
      await once(child, 'exit');
    }
    rmSync(parent, { recursive: true, force: true });
  });

  it('starts with a data directory that does not exist yet, and the API checks the demo site', async () => {
    const dataDir = path.join(parent, 'fresh', '.data');
    const env = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'warn', WEBUTIL_ALLOW_TARGETS: '' };
    const [edgePort, demoPort, basePort] = [await freePort(), await freePort(), await freePort()];
    child = spawn(process.execPath, [path.join(REPO_ROOT, 'scripts/dist/run-local.js'), '--demo'], {
      env: { ...env, EDGE_PORT: String(edgePort), DEMO_PORT: String(demoPort), SERVICE_BASE_PORT: String(basePort) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const printed: string[] = [];
    const demoLine = new Promise<string>((resolve, reject) => {
      const exited = (code: number | null) =>
        reject(new Error(`run-local exited (${code}) before the demo was up:\n${printed.slice(-30).join('\n')}`));
      child?.once('exit', exited);
      for (const stream of [child?.stdout, child?.stderr]) {
        // Read to the end, so a chatty child never blocks on a full pipe.
        createInterface({ input: stream as NodeJS.ReadableStream }).on('line', (line) => {
          printed.push(line);
          if (line.startsWith('Demo site at ')) {
            child?.off('exit', exited);
            resolve(line);
          }
        });
      }
    });
    expect(await demoLine).to.include(`http://127.0.0.1:${demoPort}/`);
    expect(existsSync(path.join(dataDir, 'demo-ca.pem'))).to.equal(true);

    // A key minted once the stack runs, as the README does it, on the store the stack made.
    const { stdout: created } = await run(
      process.execPath,
      [
        path.join(REPO_ROOT, 'services/billing/dist/admin.js'),
        ...['create-account', '--email', 'demo@example.com', '--plan', 'STARTER', '--mint-key', 'demo', '--json'],
      ],
      { env },
    );
    const key = (JSON.parse(created) as { apiKey: string }).apiKey;
    const edge = `http://127.0.0.1:${edgePort}`;
    const contract = await Contract.load(edge);
    const headers = { authorization: `Bearer ${key}` };
    const extract = await contract.fetch(
      `${edge}/v1/link-extract?url=${encodeURIComponent(`http://127.0.0.1:${demoPort}/`)}`,
      { headers },
    );
    const body = (await extract.json()) as { data?: { counts?: { internal: number } } };
    expect(extract.status, JSON.stringify(body)).to.equal(200);
    expect(body.data?.counts?.internal).to.be.greaterThan(0);

    const scan = await contract.fetch(`${edge}/v1/ssl-scan?domain=localhost`, { headers });
    const scanned = (await scan.json()) as { data?: { port: number; certValidations: { trustedCert: boolean } } };
    expect(scan.status, JSON.stringify(scanned)).to.equal(200);
    expect(scanned.data?.port).to.equal(demoPort + 1);
    expect(scanned.data?.certValidations.trustedCert).to.equal(true);
  });
});
