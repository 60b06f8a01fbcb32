import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { chownSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { addRenderPages } from '@webutil/scripts/fixture-pages';
import { type FixtureSite, startFixtureSite } from '@webutil/scripts/fixture-site';
import { freePort, REPO_ROOT } from '@webutil/scripts/local-stack';
import { expect } from 'chai';
import { DockerfileParser, type Env, type ImageTemplate } from 'dockerfile-ast';
import { parse } from 'yaml';

const DOCKERFILE = DockerfileParser.parse(readFileSync(path.join(REPO_ROOT, 'deploy/Dockerfile'), 'utf8'));
const VALUES = parse(readFileSync(path.join(REPO_ROOT, 'helm/webutil/values.yaml'), 'utf8'));

function stage(name: string): ImageTemplate {
  const from = DOCKERFILE.getFROMs().find((f) => f.getBuildStage() === name);
  const image = from && DOCKERFILE.getContainingImage(from.getRange().start);
  if (!image) throw new Error(`no stage ${name} in deploy/Dockerfile`);
  return image;
}

/** The ENV of a stage and of the stages it is built FROM, as the image's processes see it. */
function imageEnv(name: string): Record<string, string> {
  const image = stage(name);
  const base = image.getFROMs()[0]?.getImageName() ?? '';
  const inherited = DOCKERFILE.getFROMs().some((f) => f.getBuildStage() === base) ? imageEnv(base) : {};
  const own = image
    .getInstructions()
    .filter((i): i is Env => i.getKeyword() === 'ENV')
    .flatMap((i) => i.getProperties().map((p) => [p.getName(), p.getValue() ?? ''] as const));
  return { ...inherited, ...Object.fromEntries(own) };
}

/** The user ids of a process, from /proc: [real, effective]. */
function uids(pid: number): number[] {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^Uid:\s+(.*)$/m)?.[1] ?? '';
  return line.split(/\s+/).slice(0, 2).map(Number);
}

/** Every descendant of a process. */
function descendants(pid: number): number[] {
  const children = readdirSync(`/proc/${pid}/task`).flatMap((task) => {
    try {
      return readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    } catch {
      return [];
    }
  });
  return children.flatMap((child) => [child, ...descendants(child)]);
}

const cmdline = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return [];
  }
};

const REFUSE_USER_NAMESPACES = path.join(REPO_ROOT, 'deploy/test/refuse-user-namespaces.py');
const { runAsUser, runAsGroup } = VALUES.podSecurity as { runAsUser: number; runAsGroup: number };

/** The image's facts this test relies on, read from the Dockerfile. */
function renderImage() {
  const instruction = (name: string, keyword: string) =>
    stage(name)
      .getInstructions()
      .filter((i) => i.getKeyword() === keyword)
      .at(-1)
      ?.getArgumentsContent();
  const cmd =
    stage('render')
      .getCMDs()[0]
      ?.getJSONStrings()
      .map((s) => s.getJSONValue()) ?? [];
  return {
    env: imageEnv('render'),
    user: instruction('render', 'USER'),
    workdir: instruction('runtime', 'WORKDIR'),
    cmd,
  };
}

interface Confined {
  child: ChildProcess;
  logs: string[];
  connectPort: number;
}

/**
 * The image's CMD, run as the pod runs it: the chart's uid and gid, no supplementary groups, every
 * capability dropped, no_new_privs (allowPrivilegeEscalation: false), new user namespaces refused
 * as the RuntimeDefault seccomp profile refuses them, and only the image's ENV and the chart's env
 * for render (plus this test's ports, a fresh writable directory for the pod's /tmp, and `extra`).
 */
async function runConfined(writable: string, extra: Record<string, string>): Promise<Confined> {
  const { env, cmd } = renderImage();
  const [port, connectPort] = [await freePort(), await freePort()];
  const chartEnv = (VALUES.services.render.env ?? {}) as Record<string, string>;
  const variables = {
    PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin`,
    ...env,
    ...chartEnv,
    HOME: writable,
    TMPDIR: writable,
    DATA_DIR: path.join(writable, 'data'),
    HOST: '127.0.0.1',
    PORT: String(port),
    CONNECT_PORT: String(connectPort),
    WEBUTIL_ALLOW_TARGETS: '127.0.0.1/32',
    // One browser instead of the chart's two: the flags and the user are what is tested.
    RENDER_BROWSERS: '1',
    ...extra,
  };
  const child = spawn(
    'python3',
    [
      REFUSE_USER_NAMESPACES,
      'setpriv',
      `--reuid=${runAsUser}`,
      `--regid=${runAsGroup}`,
      '--clear-groups',
      '--inh-caps=-all',
      '--bounding-set=-all',
      '--no-new-privs',
      '--',
      'env',
      '-i',
      ...Object.entries(variables).map(([name, value]) => `${name}=${value}`),
      ...cmd,
    ],
    { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const logs: string[] = [];
  for (const stream of [child.stdout, child.stderr]) stream?.on('data', (d: Buffer) => logs.push(d.toString()));
  return { child, logs, connectPort };
}

async function stopConfined(confined: Confined | undefined): Promise<void> {
  if (!confined || confined.child.exitCode !== null || confined.child.signalCode !== null) return;
  const exited = once(confined.child, 'exit');
  confined.child.kill('SIGTERM');
  await exited;
}

/**
 * Issue 22, item 7: the render image's command, user, environment and flags start Chromium and
 * render a page, where Chromium's own sandbox cannot start. No container engine runs here, so the
 * pod's confinement is reproduced around the built service (runConfined); the repository stands
 * for the image's /app, and tini, the ENTRYPOINT, only reaps zombies and is not installed here.
 */
describe("the render image, run as its non-root user under the pod's confinement", function () {
  this.timeout(90_000);
  let site: FixtureSite;
  let writable: string;
  let running: Confined | undefined;

  before(async function () {
    const missing = ['setpriv', 'python3'].filter((tool) => spawnSync(tool, ['--version']).status !== 0);
    if (process.getuid?.() !== 0 || missing.length > 0) {
      // Taking the image's user needs root, and the confinement util-linux's setpriv and python3.
      console.log(`      skipped: needs root, setpriv and python3 (uid ${process.getuid?.()}, missing: ${missing})`);
      this.skip();
    }
    site = await startFixtureSite();
    addRenderPages(site);
    writable = mkdtempSync(path.join(tmpdir(), 'webutil-render-image-'));
    chownSync(writable, runAsUser, runAsGroup);
  });
  afterEach(async () => {
    await stopConfined(running);
    running = undefined;
  });
  after(async () => {
    await site?.close();
    if (writable) rmSync(writable, { recursive: true, force: true });
  });

  it("is the image the chart runs: USER node (1000:1000, the chart's runAsUser), its ENV and CMD", () => {
    const image = renderImage();
    // The node user of the node:*-bookworm images is 1000:1000.
    expect(image.user).to.equal('node');
    expect(runAsUser).to.equal(1000);
    expect(image.env).to.include({ NODE_ENV: 'production', HOME: '/tmp', RENDER_CHROMIUM_SANDBOX: 'off' });
    expect(image.cmd).to.deep.equal(['node', '--enable-source-maps', 'services/render/dist/main.js']);
    expect(image.workdir).to.equal('/app');
  });

  it("starts Chromium with the image's flags (--no-sandbox), as uid 1000, and renders a page", async () => {
    running = await runConfined(writable, {});
    const { child, logs, connectPort } = running;
    const screenshot = async () => {
      const res = await fetch(`http://127.0.0.1:${connectPort}/webutil.render.v1.RenderService/Screenshot`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ url: site.url('/page/simple?image=1') }),
      });
      return { status: res.status, body: (await res.json()) as { filename?: string; sizeBytes?: string } };
    };
    const deadline = Date.now() + 60_000;
    let answer: Awaited<ReturnType<typeof screenshot>> | undefined;
    while (!answer && Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`the service exited (${child.exitCode}):\n${logs.join('')}`);
      answer = await screenshot().catch(() => undefined);
      if (!answer) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(answer?.status, logs.join('')).to.equal(200);
    expect(Number(answer?.body.sizeBytes)).to.be.above(0);
    expect(logs.join('')).to.include("Chromium's sandbox is off");
    // The embedded store's layout (DATA_DIR/artifacts/<bucket>); the chart's pods use GridFS instead.
    const file = path.join(writable, 'data', 'artifacts', 'render', answer?.body.filename ?? '');
    expect(readFileSync(file).subarray(0, 8).toString('hex'), 'a PNG').to.equal('89504e470d0a1a0a');

    const browsers = descendants(child.pid!).filter((pid) => /chrom/.test(cmdline(pid)[0] ?? ''));
    expect(browsers, 'Chromium processes').to.not.be.empty;
    for (const pid of browsers) expect(uids(pid), `Chromium process ${pid}`).to.deep.equal([runAsUser, runAsUser]);
    const browser = browsers.find((pid) => !cmdline(pid).some((arg) => arg.startsWith('--type=')));
    expect(cmdline(browser!)).to.include('--no-sandbox');
  });

  it('would not start with the sandbox on, as a non-root process had it before: Chromium cannot start', async () => {
    running = await runConfined(writable, { RENDER_CHROMIUM_SANDBOX: 'on' });
    const [code] = (await once(running.child, 'exit')) as [number | null];
    const logs = running.logs.join('');
    expect(code, logs).to.not.equal(0);
    expect(logs).to.include("Chromium's sandbox is on");
    // Chromium's own words ("No usable sandbox!") go to its stderr, which puppeteer does not pass on.
    expect(logs).to.include('Chromium did not start');
  });
});
