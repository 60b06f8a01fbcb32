import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { REPO_ROOT, SERVICES } from '@webutil/scripts/local-stack';
import { expect } from 'chai';
import * as appsV1 from 'kubernetes-models/apps/v1';
import * as autoscalingV2 from 'kubernetes-models/autoscaling/v2';
import * as networkingV1 from 'kubernetes-models/networking.k8s.io/v1';
import * as policyV1 from 'kubernetes-models/policy/v1';
import * as coreV1 from 'kubernetes-models/v1';
import { parseAllDocuments } from 'yaml';

const run = promisify(execFile);
const CHART = path.join(REPO_ROOT, 'helm/webutil');
const PRODUCTION = path.join(CHART, 'ci/production-values.yaml');

type Manifest = Record<string, any>;
type Model = new (data: Manifest) => { validate(): void };

/** The Kubernetes API schemas (kubernetes-models, generated from the API's OpenAPI) by apiVersion. */
const SCHEMAS: Record<string, Record<string, unknown>> = {
  v1: coreV1,
  'apps/v1': appsV1,
  'autoscaling/v2': autoscalingV2,
  'policy/v1': policyV1,
  'networking.k8s.io/v1': networkingV1,
  'monitoring.coreos.com/v1': { ServiceMonitor },
};

function validate(manifest: Manifest): void {
  const model = SCHEMAS[manifest.apiVersion]?.[manifest.kind] as Model | undefined;
  if (!model) throw new Error(`no Kubernetes schema for ${manifest.apiVersion} ${manifest.kind}`);
  new model(manifest).validate();
}

let helmPath: string | undefined;
async function helm(...args: string[]): Promise<string> {
  helmPath ??= (await run('bash', [path.join(REPO_ROOT, 'scripts/ensure-helm.sh')])).stdout.trim();
  return (await run(helmPath, args, { maxBuffer: 16 * 1024 * 1024 })).stdout;
}

async function render(...args: string[]): Promise<Manifest[]> {
  const text = await helm('template', 'rel', CHART, '--namespace', 'webutil', ...args);
  return parseAllDocuments(text)
    .map((doc) => doc.toJS() as Manifest | null)
    .filter((m): m is Manifest => m !== null);
}

const of = (manifests: Manifest[], kind: string) => manifests.filter((m) => m.kind === kind);
const named = (manifests: Manifest[], kind: string, service: string) =>
  manifests.find((m) => m.kind === kind && m.metadata.name === `rel-webutil-${service}`);

/** Issue 14: the Helm chart lints, renders valid Kubernetes objects, and holds the rules it promises. */
describe('Helm chart helm/webutil', function () {
  this.timeout(120_000);
  let defaults: Manifest[];
  let production: Manifest[];
  before(async () => {
    [defaults, production] = await Promise.all([render(), render('-f', PRODUCTION)]);
  });

  it('passes helm lint with the default and the production-like values', async () => {
    expect(await helm('lint', CHART)).to.include('0 chart(s) failed');
    expect(await helm('lint', CHART, '-f', PRODUCTION)).to.include('0 chart(s) failed');
  });

  it('renders only objects that the Kubernetes API schemas accept', () => {
    for (const manifest of [...defaults, ...production]) {
      expect(() => validate(manifest), `${manifest.kind} ${manifest.metadata?.name}`).to.not.throw();
    }
    // The validator is not vacuous: a wrongly typed field fails.
    const broken = structuredClone(named(defaults, 'Deployment', 'billing')) as Manifest;
    broken.spec.template.spec.containers[0].ports[0].containerPort = 'grpc';
    expect(() => validate(broken)).to.throw(/containerPort/);
  });

  it('rejects a values file that breaks values.schema.json', async () => {
    const failed = await helm('template', 'rel', CHART, '-f', path.join(CHART, 'ci/bad-values.yaml')).then(
      () => undefined,
      (err: { stderr: string }) => err.stderr,
    );
    expect(failed).to.match(/additional properties 'ingres' not allowed/);
    expect(failed).to.match(/replicas.*minimum/);
  });

  it('runs every service of the local stack, adding one by a values block and a template include', () => {
    const names = ['edge', ...SERVICES.map((s) => s.name)];
    expect(of(defaults, 'Deployment').map((d) => d.metadata.name)).to.have.members(
      names.map((n) => `rel-webutil-${n}`),
    );
    for (const name of names) {
      expect(readFileSync(path.join(CHART, `templates/${name}.yaml`), 'utf8').trim()).to.equal(
        `{{- include "webutil.service" (dict "root" $ "name" "${name}") }}`,
      );
    }
    expect(readdirSync(path.join(CHART, 'templates'))).to.include.members(['nats.yaml', 'mongodb.yaml']);
    expect(of(defaults, 'StatefulSet').map((s) => s.metadata.name)).to.have.members([
      'rel-webutil-nats',
      'rel-webutil-mongodb',
    ]);
    expect(of(production, 'StatefulSet'), 'external NATS and MongoDB').to.have.length(0);
  });

  it('runs pods non-root, read-only, without capabilities, under seccomp RuntimeDefault', () => {
    for (const workload of [...of(defaults, 'Deployment'), ...of(defaults, 'StatefulSet')]) {
      const pod = workload.spec.template.spec;
      expect(pod.securityContext, workload.metadata.name).to.deep.include({ runAsNonRoot: true });
      expect(pod.securityContext.seccompProfile).to.deep.equal({ type: 'RuntimeDefault' });
      for (const container of pod.containers) {
        expect(container.securityContext, workload.metadata.name).to.deep.include({
          allowPrivilegeEscalation: false,
          readOnlyRootFilesystem: true,
        });
        expect(container.securityContext.capabilities.drop).to.deep.equal(['ALL']);
      }
    }
  });

  it('probes gRPC services natively, sizes grace periods and gives Chromium an init and /dev/shm', () => {
    for (const deployment of of(defaults, 'Deployment')) {
      const name = deployment.metadata.name.replace('rel-webutil-', '');
      const container = deployment.spec.template.spec.containers[0];
      if (name === 'edge') {
        expect(container.readinessProbe.httpGet.path).to.equal('/healthz');
      } else {
        expect(container.readinessProbe.grpc, name).to.deep.include({ service: 'readiness' });
        expect(container.livenessProbe.grpc, name).to.deep.include({ service: 'liveness' });
        expect(container.ports.map((p: Manifest) => p.name)).to.include.members(['grpc', 'connect', 'metrics']);
      }
      const grace = deployment.spec.template.spec.terminationGracePeriodSeconds;
      const drain = container.env.find((e: Manifest) => e.name === 'SHUTDOWN_GRACE_MS');
      expect(Number(drain.value), `${name} drains before it is killed`).to.be.below(grace * 1000);
    }
    const render = named(defaults, 'Deployment', 'render') as Manifest;
    expect(render.spec.template.spec.terminationGracePeriodSeconds, 'render: 15 s queue + 30 s budget').to.be.above(45);
    expect(render.spec.template.spec.containers[0].command.slice(0, 2)).to.deep.equal(['/usr/bin/tini', '--']);
    expect(render.spec.template.spec.volumes).to.deep.include({
      name: 'shm',
      emptyDir: { medium: 'Memory', sizeLimit: '512Mi' },
    });
  });

  it('autoscales edge, render and crawl, and keeps every service available through disruptions', () => {
    expect(of(defaults, 'HorizontalPodAutoscaler').map((h) => h.spec.scaleTargetRef.name)).to.have.members([
      'rel-webutil-edge',
      'rel-webutil-render',
      'rel-webutil-crawl',
    ]);
    expect(of(defaults, 'PodDisruptionBudget')).to.have.length(of(defaults, 'Deployment').length);
  });

  it('lets outside traffic reach the edge only, the services only from the edge, and fetchers not the cluster', () => {
    for (const deployment of of(defaults, 'Deployment')) {
      const name = deployment.metadata.name.replace('rel-webutil-', '');
      const policy = named(defaults, 'NetworkPolicy', name) as Manifest;
      expect(policy, name).to.not.equal(undefined);
      const [callers] = policy.spec.ingress;
      if (name === 'edge') {
        expect(callers.from[0].namespaceSelector.matchLabels).to.deep.equal({
          'kubernetes.io/metadata.name': 'ingress-nginx',
        });
      } else {
        expect(callers.from, name).to.deep.equal([
          { podSelector: { matchLabels: { 'app.kubernetes.io/instance': 'rel', 'app.kubernetes.io/name': 'edge' } } },
        ]);
      }
      const internet = policy.spec.egress.find((rule: Manifest) => rule.to[0].ipBlock);
      const fetches = ['render', 'crawl', 'tls-scan', 'meta-scan'].includes(name);
      expect(Boolean(internet), `${name} reaches the internet`).to.equal(fetches);
      if (internet) expect(internet.to[0].ipBlock.except).to.include.members(['169.254.0.0/16', '10.0.0.0/8']);
    }
  });

  it('is scraped by a ServiceMonitor when asked, and by pod annotations otherwise', () => {
    expect(of(defaults, 'ServiceMonitor')).to.have.length(0);
    const annotations = (named(defaults, 'Deployment', 'billing') as Manifest).spec.template.metadata.annotations;
    expect(annotations).to.include({ 'prometheus.io/scrape': 'true', 'prometheus.io/port': '9464' });
    expect(of(production, 'ServiceMonitor')).to.have.length(1);
    const productionPod = (named(production, 'Deployment', 'billing') as Manifest).spec.template.metadata;
    expect(productionPod.annotations).to.not.have.property('prometheus.io/scrape');
  });
});

/** Issue 14: the images' Dockerfile and the compose file. */
describe('container images', () => {
  it('the Dockerfile passes dockerfilelint', async () => {
    const { stdout } = await run('npx', ['--no-install', 'dockerfilelint', '--json', 'deploy/Dockerfile'], {
      cwd: REPO_ROOT,
    });
    const report = JSON.parse(stdout) as { files: { issues_count: number; issues: unknown[] }[] };
    expect(report.files[0]?.issues, JSON.stringify(report.files[0]?.issues)).to.deep.equal([]);
  });

  it('the compose file runs every service with NATS and MongoDB', () => {
    const compose = parseAllDocuments(
      readFileSync(path.join(REPO_ROOT, 'deploy/compose.yaml'), 'utf8'),
    )[0]?.toJS() as Manifest;
    expect(Object.keys(compose.services)).to.have.members(['nats', 'mongodb', 'edge', ...SERVICES.map((s) => s.name)]);
    for (const service of SERVICES) {
      expect(compose.services.edge.environment[service.addressEnv], service.addressEnv).to.match(/^[a-z-]+:\d+$/);
    }
  });
});
