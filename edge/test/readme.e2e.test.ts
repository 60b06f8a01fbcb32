import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { type DemoSite, startDemoSite } from '@webutil/scripts/demo-site';
import { freePort, REPO_ROOT } from '@webutil/scripts/local-stack';
import { startTestStack, type TestStack } from '@webutil/scripts/test-stack';
import { expect } from 'chai';

const run = promisify(execFile);

/** The README's runnable examples: every `sh` block after the "Try it" heading, in order. */
function readmeExamples(markdown: string): string[] {
  const start = markdown.indexOf('## Try it');
  if (start < 0) throw new Error('the README has no "Try it" section');
  return [...markdown.slice(start).matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1] ?? '');
}

/**
 * Issue 12, items 9 and 11: the README's examples run as written, in order, against a stack with
 * the offline demo site, so they cannot rot. Only the ports change (the README's 8080 and 8090 are
 * the test stack's); `npm` runs in the repository and `curl` fails on an error status, so a
 * refused call stops the script.
 */
describe('README examples', function () {
  this.timeout(240_000);
  let stack: TestStack;
  let demo: DemoSite;
  let workDir: string;

  before(async () => {
    workDir = mkdtempSync(path.join(os.tmpdir(), 'webutil-readme-'));
    demo = await startDemoSite({ port: 0, dataDir: workDir });
    stack = await startTestStack({
      allowTargets: demo.stackEnv.WEBUTIL_ALLOW_TARGETS,
      envFor: { 'tls-scan': demo.tlsScanEnv },
    });
  });
  after(async () => {
    await stack?.stop();
    await demo?.close();
    if (workDir) rmSync(workDir, { recursive: true, force: true });
  });

  it('run in order from a shell and do what they say', async () => {
    const blocks = readmeExamples(readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8'));
    expect(blocks.length, 'runnable blocks').to.be.greaterThan(8);
    const edgePort = new URL(stack.edgeUrl).port;
    const demoPort = new URL(demo.url).port;
    const script = [
      'set -euo pipefail',
      `npm() { command npm --prefix ${JSON.stringify(REPO_ROOT)} "$@"; }`,
      'curl() { command curl --fail-with-body --no-progress-meter "$@"; }',
      ...blocks.map((block) =>
        block
          .replaceAll('127.0.0.1:8080', `127.0.0.1:${edgePort}`)
          .replaceAll('127.0.0.1:8090', `127.0.0.1:${demoPort}`),
      ),
    ].join('\n');
    const { stdout } = await run('bash', ['-c', script], {
      cwd: workDir,
      env: { ...process.env, DATA_DIR: stack.dataDir, LOG_LEVEL: 'warn' },
      maxBuffer: 64 * 1024 * 1024,
    }).catch((err: { stdout?: string; stderr?: string; message: string }) => {
      throw new Error(
        `${err.message}\n--- stdout (tail)\n${err.stdout?.slice(-3000)}\n--- stderr (tail)\n${err.stderr?.slice(-3000)}`,
      );
    });

    expect(stdout).to.not.include('"success":false');
    expect(stdout).to.include('"callerKind":"apikey"');
    expect(stdout, 'the SSL scan reached the demo HTTPS server').to.include(`"domain":"localhost"`);
    expect(stdout, 'the crawl finished').to.match(/"done"$/m);
    expect(stdout, 'the key was created and shown once').to.match(/"key":"wu_live_/);
    const file = (name: string) => readFileSync(path.join(workDir, name));
    expect(file('page.webp').subarray(8, 12).toString('latin1')).to.equal('WEBP');
    expect(file('page.pdf').subarray(0, 5).toString('latin1')).to.equal('%PDF-');
    expect(file('bookmarks.xbel').toString('utf8')).to.include('Demo Bakery');
    expect(file('bookmarks.html').toString('utf8')).to.include('<!DOCTYPE NETSCAPE-Bookmark-file-1>');
  });
});

/** Issue 12, item 11: `npm start -- --demo` serves the demo site next to the stack and allows it. */
describe('npm start -- --demo', function () {
  this.timeout(180_000);
  let child: ChildProcess | undefined;
  let dataDir: string;
  before(() => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'webutil-demo-'));
  });
  after(async () => {
    if (child && child.exitCode === null) {
      child.kill('SIGINT');
      await once(child, 'exit');
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('prints the demo URL, and the API checks the demo site', async () => {
    const env = { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'warn', WEBUTIL_ALLOW_TARGETS: '' };
    const { stdout: created } = await run(
      process.execPath,
      [
        path.join(REPO_ROOT, 'services/billing/dist/admin.js'),
        ...['create-account', '--email', 'demo@example.com', '--plan', 'STARTER', '--mint-key', 'demo', '--json'],
      ],
      { env },
    );
    const key = (JSON.parse(created) as { apiKey: string }).apiKey;
    const [edgePort, demoPort, basePort] = [await freePort(), await freePort(), await freePort()];
    child = spawn(process.execPath, [path.join(REPO_ROOT, 'scripts/dist/run-local.js'), '--demo'], {
      env: { ...env, EDGE_PORT: String(edgePort), DEMO_PORT: String(demoPort), SERVICE_BASE_PORT: String(basePort) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
    let demoLine = '';
    for await (const line of lines) {
      if (line.startsWith('Demo site at ')) {
        demoLine = line;
        break;
      }
    }
    expect(demoLine).to.include(`http://127.0.0.1:${demoPort}/`);
    const res = await fetch(
      `http://127.0.0.1:${edgePort}/v1/link-extract?url=${encodeURIComponent(`http://127.0.0.1:${demoPort}/`)}`,
      { headers: { authorization: `Bearer ${key}` } },
    );
    const body = (await res.json()) as { data?: { counts?: { internal: number } } };
    expect(res.status, JSON.stringify(body)).to.equal(200);
    expect(body.data?.counts?.internal).to.be.greaterThan(0);
  });
});
