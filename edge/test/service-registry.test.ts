import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT, SERVICES } from '@webutil/scripts/local-stack';
import { expect } from 'chai';
import { parse } from 'yaml';
import { readConfig } from '../src/config.js';

/** The default layout's base port: a service listens on it plus its offset (`SERVICE_BASE_PORT`). */
const BASE_PORT = 50050;

const read = (file: string) => readFileSync(path.join(REPO_ROOT, file), 'utf8');

/**
 * Issue 30, item 5: `SERVICES` (scripts/src/local-stack.ts) is the services registry. The local
 * runner and the test stacks start what it lists, and deploy/test checks the compose file and the
 * chart's names against it; this test holds the other places a new service touches to it, so a
 * service added in one place and forgotten in another fails here (docs/architecture.md, "Adding a
 * service").
 */
describe('the services registry', () => {
  it('lists every service workspace, and only those', () => {
    const folders = readdirSync(path.join(REPO_ROOT, 'services'))
      .filter((name) => name !== 'kit' && existsSync(path.join(REPO_ROOT, 'services', name, 'package.json')))
      .map((name) => `services/${name}`);
    expect(SERVICES.map((s) => s.dir)).to.have.members(folders);
  });

  it('is in the root workspaces and the TypeScript project references', () => {
    const workspaces: string[] = JSON.parse(read('package.json')).workspaces;
    const references: string[] = JSON.parse(read('tsconfig.json')).references.map((r: { path: string }) => r.path);
    for (const { dir } of SERVICES) {
      expect(workspaces, 'package.json workspaces').to.include(dir);
      expect(references, 'tsconfig.json references').to.include(dir);
    }
  });

  it('gives each service a test script that runs its own tests', () => {
    for (const { dir } of SERVICES) {
      const scripts = JSON.parse(read(`${dir}/package.json`)).scripts ?? {};
      expect(scripts.test, `${dir}/package.json scripts.test`).to.match(/^mocha /);
    }
  });

  it("matches the edge's default addresses: one per service, on the base port plus its offset", () => {
    const config = readConfig({});
    const addressKeys = Object.keys(config).filter((key) => key.endsWith('_ADDR'));
    expect(addressKeys).to.have.members(SERVICES.map((s) => s.addressEnv));
    for (const service of SERVICES) {
      expect(config[service.addressEnv as keyof typeof config], service.addressEnv).to.equal(
        `127.0.0.1:${BASE_PORT + service.portOffset}`,
      );
    }
  });

  it("matches the chart (a values block on the same port, a template) and the image's manifests", () => {
    const values = parse(read('helm/webutil/values.yaml'));
    const dockerfile = read('deploy/Dockerfile');
    for (const service of SERVICES) {
      expect(values.services[service.name]?.port, `helm values services.${service.name}.port`).to.equal(
        BASE_PORT + service.portOffset,
      );
      expect(existsSync(path.join(REPO_ROOT, 'helm/webutil/templates', `${service.name}.yaml`)), 'chart template').to.be
        .true;
      expect(dockerfile, 'deploy/Dockerfile copies the manifest').to.include(
        `COPY ${service.dir}/package.json ${service.dir}/`,
      );
    }
  });
});
