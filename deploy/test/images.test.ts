import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT, SERVICES } from '@webutil/scripts/local-stack';
import { expect } from 'chai';
import { DockerfileParser, type ImageTemplate } from 'dockerfile-ast';
import { validate as lintDockerfile } from 'dockerfile-utils';
import { parseAllDocuments } from 'yaml';

const run = promisify(execFile);
const DOCKERFILE = path.join(REPO_ROOT, 'deploy/Dockerfile');
/** Every workspace of the root manifest: the lock names them all, so each image's install needs each manifest. */
const WORKSPACES: string[] = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')).workspaces;

function stage(name: string): ImageTemplate {
  const dockerfile = DockerfileParser.parse(readFileSync(DOCKERFILE, 'utf8'));
  const from = dockerfile.getFROMs().find((f) => f.getBuildStage() === name);
  const image = from && dockerfile.getContainingImage(from.getRange().start);
  if (!image) throw new Error(`no stage ${name} in deploy/Dockerfile`);
  return image;
}

const words = (image: ImageTemplate, keyword: string) =>
  image
    .getInstructions()
    .filter((i) => i.getKeyword() === keyword)
    .map((i) => i.getArgumentsContent() ?? '');

/**
 * The packages `npm ci --omit=dev --workspace <dir>` would install, from a copy of the manifests and the
 * lock (npm's dry run reads the lock; nothing is downloaded), after `prepare` ran in that copy.
 */
async function productionPackages(workspace: string, prepare?: string): Promise<string[]> {
  const copy = mkdtempSync(path.join(tmpdir(), 'webutil-deps-'));
  try {
    for (const dir of ['', ...WORKSPACES]) {
      cpSync(path.join(REPO_ROOT, dir, 'package.json'), path.join(copy, dir, 'package.json'));
    }
    cpSync(path.join(REPO_ROOT, 'package-lock.json'), path.join(copy, 'package-lock.json'));
    if (prepare) await run(process.execPath, [path.join(REPO_ROOT, prepare)], { cwd: copy });
    const { stdout } = await run(
      'npm',
      ['ci', '--omit=dev', '--workspace', workspace, '--dry-run', '--ignore-scripts', '--no-audit', '--no-fund'],
      { cwd: copy, maxBuffer: 8 * 1024 * 1024 },
    );
    return [...stdout.matchAll(/^add (\S+) /gm)].map((m) => m[1] as string);
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
}

/** Issue 14: the images' Dockerfile and the compose file. No Docker engine runs here: nothing is built. */
describe('container images', function () {
  this.timeout(120_000);

  it('the Dockerfile passes dockerfile-utils, which catches a broken one', () => {
    expect(lintDockerfile(readFileSync(DOCKERFILE, 'utf8'))).to.deep.equal([]);
    const broken = 'FROM node:24 AS build\nFROM node:24 AS build\nCOPY --frm=build /a /b\nRUNN x\nWORKDIR app\n';
    expect(lintDockerfile(broken).map((d) => d.message)).to.include.members([
      'duplicate name build',
      'Unknown flag: frm',
      'Unknown instruction: RUNN',
      'WORKDIR paths should be absolute',
    ]);
  });

  it('builds render as its own target: Chromium and fonts, under tini, HOME on the writable /tmp', () => {
    const render = stage('render');
    expect(render.getENTRYPOINTs().map((e) => e.getJSONStrings().map((s) => s.getJSONValue()))).to.deep.equal([
      ['/usr/bin/tini', '--'],
    ]);
    expect(words(render, 'ENV')).to.include('HOME=/tmp');
    expect(words(render, 'RUN').join(' ')).to.match(/apt-get install .*\bchromium\b.*\btini\b/);
    expect(words(render, 'CMD')[0]).to.include('services/render/dist/main.js');
    // Every image's last user is the unprivileged node user; the default target is a plain service.
    for (const name of ['render', 'service']) expect(words(stage(name), 'USER').at(-1), name).to.equal('node');
    const froms = DockerfileParser.parse(readFileSync(DOCKERFILE, 'utf8')).getFROMs();
    expect(froms.at(-1)?.getBuildStage()).to.equal('service');
  });

  it('copies every workspace manifest before installing, as the lock lists them all', () => {
    const copied = words(stage('manifests'), 'COPY');
    for (const dir of WORKSPACES) expect(copied, dir).to.include(`${dir}/package.json ${dir}/`);
  });

  it("installs only the service's own production dependencies in its image", async () => {
    expect(words(stage('deps'), 'RUN').join(' ')).to.include(
      'node /tmp/drop-dev-dependencies.mjs && npm ci --omit=dev --workspace "$SERVICE"',
    );
    const [edge, render, billing, edgeWithoutDrop] = await Promise.all([
      productionPackages('edge', 'deploy/drop-dev-dependencies.mjs'),
      productionPackages('services/render', 'deploy/drop-dev-dependencies.mjs'),
      productionPackages('services/billing', 'deploy/drop-dev-dependencies.mjs'),
      productionPackages('edge'),
    ]);
    expect(edge).to.include.members(['koa', '@webutil/kit', '@webutil/proto']);
    expect(render).to.include('puppeteer-core');
    expect(billing).to.include.members(['better-sqlite3', 'altcha-lib']);
    for (const [name, packages] of [
      ['edge', edge],
      ['render', render],
      ['billing', billing],
    ] as const) {
      for (const foreign of ['typescript', 'mocha', '@webutil/scripts', 'esbuild']) {
        expect(packages, `${name} has ${foreign}`).to.not.include(foreign);
      }
    }
    // The edge and billing hear revocations over NATS (decision 0123); render has no use for it.
    expect(edge).to.include('nats');
    expect(billing).to.include('nats');
    expect(render, 'render has nats').to.not.include('nats');
    expect(edge, "the edge's test browser").to.not.include('puppeteer-core');
    // Without dropping devDependencies first, npm keeps the edge's dev-only puppeteer-core (render needs it).
    expect(edgeWithoutDrop).to.include('puppeteer-core');
  });

  it('keeps installed and built files out of the build context', () => {
    const ignored = readFileSync(path.join(REPO_ROOT, 'deploy/Dockerfile.dockerignore'), 'utf8')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line && !line.startsWith('#'));
    expect(ignored).to.include.members([
      '**/node_modules',
      '**/dist',
      '**/*.tsbuildinfo',
      '.git',
      '.tools',
      '**/.data',
    ]);
  });

  it('the compose file runs every service with NATS and an authenticated MongoDB', () => {
    const text = readFileSync(path.join(REPO_ROOT, 'deploy/compose.yaml'), 'utf8');
    const compose = parseAllDocuments(text, { merge: true })[0]?.toJS();
    expect(Object.keys(compose.services)).to.have.members(['nats', 'mongodb', 'edge', ...SERVICES.map((s) => s.name)]);
    for (const service of SERVICES) {
      expect(compose.services.edge.environment[service.addressEnv], service.addressEnv).to.match(/^[a-z-]+:\d+$/);
      const build = compose.services[service.name].build;
      expect(build.target, service.name).to.equal(service.name === 'render' ? 'render' : 'service');
    }
    const user = compose.services.mongodb.environment.MONGO_INITDB_ROOT_USERNAME;
    expect(new URL(compose.services.billing.environment.MONGO_URL.replace(/\$\{[^}]+\}/, 'pw')).username).to.equal(
      user,
    );
  });
});
