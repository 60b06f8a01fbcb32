import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT, SERVICES } from '@webutil/scripts/local-stack';
import { expect } from 'chai';
import { parseAllDocuments, parseDocument } from 'yaml';
import { type Manifest, unknownFields, validate } from './kubernetes-schemas.js';
import { connects, type Pod } from './network-policy.js';
import { podEnv, type Store, storesOf } from './pod-env.js';

const run = promisify(execFile);
const CHART = path.join(REPO_ROOT, 'helm/webutil');
const PRODUCTION = path.join(CHART, 'ci/production-values.yaml');
const NAMESPACE = 'webutil';
/** What the chart needs besides its defaults: the ingress controller's pod CIDR (it refuses an ingress without). */
const PROXIES = ['--set', 'trustedProxies=10.244.0.0/16'];
const TURNSTILE = ['--set', 'secrets.turnstileSecret=0x4AAA-secret', '--set', 'secrets.turnstileSiteKey=0x4AAA-site'];
/** Card payments (decision 0381): Stripe's keys, and two items' prices. */
const STRIPE = [
  ...['--set', 'secrets.stripeSecretKey=sk_test_1', '--set', 'secrets.stripeWebhookSecret=whsec_1'],
  ...['--set', 'payments.currency=eur', '--set', 'payments.prices.STARTER.priceId=price_s'],
  ...['--set', 'payments.prices.STARTER.amount=2900', '--set', 'payments.prices.PACK_1000.priceId=price_p'],
  ...['--set', 'payments.prices.PACK_1000.amount=900'],
  ...['--set', 'secrets.smtpUrl=smtp://mail.internal:587'],
];

/** The Secret production-values.yaml names (secrets.existingSecret), with the keys values.yaml lists for it. */
const PRODUCTION_SECRET: Store = {
  'webutil-production': {
    CHALLENGE_SECRET: 'c'.repeat(48),
    MONGO_URL: 'mongodb+srv://webutil:pw@db.internal.example/webutil?replicaSet=rs0',
    TURNSTILE_SECRET: '0x4AAA-secret',
    TURNSTILE_SITE_KEY: '0x4AAA-site',
  },
};

/** Each process's own settings reader (built), as its main.ts calls it. */
const CONFIG_READERS: Record<string, { file: string; reader: string }> = {
  edge: { file: 'edge/dist/config.js', reader: 'readConfig' },
  ...Object.fromEntries(SERVICES.map((s) => [s.name, { file: `${s.dir}/dist/config.js`, reader: 'readConfig' }])),
};

// One lookup (and, on a fresh clone, one extraction) however many renders start at once.
let helmPath: Promise<string> | undefined;
async function helm(...args: string[]): Promise<string> {
  helmPath ??= run('bash', [path.join(REPO_ROOT, 'scripts/ensure-helm.sh')]).then(({ stdout }) => stdout.trim());
  return (await run(await helmPath, args, { maxBuffer: 16 * 1024 * 1024 })).stdout;
}

/** The chart with its defaults and the one required value (PROXIES), then `args`. */
async function render(...args: string[]): Promise<Manifest[]> {
  return renderChart(CHART, ...PROXIES, ...args);
}

async function renderChart(chart: string, ...args: string[]): Promise<Manifest[]> {
  const text = await helm('template', 'rel', chart, '--namespace', NAMESPACE, ...args);
  return parseAllDocuments(text)
    .map((doc) => doc.toJS() as Manifest | null)
    .filter((m): m is Manifest => m !== null);
}

/** helm template's error output for values it refuses (PROXIES set unless `args` unset it). */
async function refusal(...args: string[]): Promise<string> {
  return helm('template', 'rel', CHART, ...PROXIES, ...args).then(
    () => 'rendered',
    (err: { stderr: string }) => err.stderr,
  );
}

const of = (manifests: Manifest[], kind: string) => manifests.filter((m) => m.kind === kind);
const named = (manifests: Manifest[], kind: string, name: string) =>
  manifests.find((m) => m.kind === kind && m.metadata.name === `rel-webutil-${name}`) as Manifest;
const serviceName = (m: Manifest) => m.metadata.name.replace('rel-webutil-', '');
const podOf = (name: string, ip = '10.244.1.7'): Pod => ({
  namespace: NAMESPACE,
  labels: { 'app.kubernetes.io/instance': 'rel', 'app.kubernetes.io/name': name },
  ip,
});
const policies = (manifests: Manifest[]) => of(manifests, 'NetworkPolicy');

/** Bytes of a Kubernetes quantity (Mi, Gi, M, G, or plain). */
function bytes(quantity: string): number {
  const units: Record<string, number> = { Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, k: 1e3, M: 1e6, G: 1e9, '': 1 };
  const [, number, unit] = /^([0-9.]+)([A-Za-z]*)$/.exec(quantity) ?? [];
  if (number === undefined || unit === undefined || !(unit in units)) throw new Error(`quantity ${quantity}`);
  return Number(number) * (units[unit] as number);
}

/**
 * Runs a service's settings reader, in a fresh process, on each environment (as its pod gets it, whole):
 * the settings it read, one per environment, up to the first it refused (exit code and message then).
 */
async function readSettings(
  name: string,
  envs: Record<string, string>[],
): Promise<{ settings: Manifest[]; code: number; refusal: string }> {
  const entry = CONFIG_READERS[name];
  if (!entry) throw new Error(`no settings reader known for ${name}`);
  const script = `const { ${entry.reader}: read } = await import(${JSON.stringify(path.join(REPO_ROOT, entry.file))});
    for (const env of JSON.parse(process.argv[1])) process.stdout.write(JSON.stringify(read(env)) + '\\n');`;
  const settingsOf = (stdout: string) =>
    stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));
  return run(process.execPath, ['--input-type=module', '-e', script, JSON.stringify(envs)]).then(
    ({ stdout }) => ({ settings: settingsOf(stdout), code: 0, refusal: '' }),
    (err: { code: number; stdout: string; stderr: string }) => ({
      settings: settingsOf(err.stdout),
      code: err.code,
      refusal: err.stderr,
    }),
  );
}

/** Issue 14: the Helm chart lints, renders valid Kubernetes objects, and holds the rules it promises. */
describe('Helm chart helm/webutil', function () {
  this.timeout(180_000);
  let defaults: Manifest[];
  let production: Manifest[];
  let turnstile: Manifest[];
  before(async () => {
    [defaults, production, turnstile] = await Promise.all([
      render(),
      render('-f', PRODUCTION),
      render(...TURNSTILE, ...STRIPE),
    ]);
  });

  it('passes helm lint with the default and the production-like values', async () => {
    expect(await helm('lint', CHART, ...PROXIES)).to.include('0 chart(s) failed');
    expect(await helm('lint', CHART, '-f', PRODUCTION)).to.include('0 chart(s) failed');
  });

  it('renders only objects that the Kubernetes API schemas accept, with no field they do not know', () => {
    const all = [...defaults, ...production, ...turnstile];
    for (const manifest of all) {
      expect(() => validate(manifest), `${manifest.kind} ${manifest.metadata?.name}`).to.not.throw();
    }
    expect(unknownFields(all)).to.deep.equal([]);
    // Neither check is vacuous: a wrongly typed field fails the validator, and a misspelt one, which the
    // validator lets through, fails the field check.
    const wrongType = structuredClone(named(defaults, 'Deployment', 'billing'));
    wrongType.spec.template.spec.containers[0].ports[0].containerPort = 'grpc';
    expect(() => validate(wrongType)).to.throw(/containerPort/);
    const misspelt = structuredClone(named(defaults, 'Deployment', 'billing'));
    const container = misspelt.spec.template.spec.containers[0];
    container.readinesProbe = container.readinessProbe;
    delete container.readinessProbe;
    const policy = structuredClone(named(defaults, 'NetworkPolicy', 'crawl'));
    policy.spec.egress[0].ports[0].protcol = 'UDP';
    expect(() => validate(misspelt)).to.not.throw();
    expect(unknownFields([misspelt, policy])).to.satisfy(
      (errors: string[]) =>
        errors.length === 2 &&
        /'"readinesProbe"' does not exist/.test(errors[0] ?? '') &&
        /protcol/.test(errors[1] ?? ''),
    );
  });

  it('starts every process: each accepts the environment its pod gets from the ConfigMap and Secrets', async () => {
    const cases: [string, Manifest[], Store][] = [
      ['default values', defaults, {}],
      ['production values', production, PRODUCTION_SECRET],
      ['Turnstile and Stripe set', turnstile, {}],
    ];
    for (const [label, manifests] of cases) {
      // Only keys with a value: an empty key would reach the pods as an empty variable.
      for (const store of [...of(manifests, 'ConfigMap'), ...of(manifests, 'Secret')]) {
        const values = Object.entries({ ...store.data, ...store.stringData });
        expect(
          values.filter(([, v]) => v === ''),
          `${label}: ${store.metadata.name}`,
        ).to.deep.equal([]);
      }
    }
    const envs = (name: string) =>
      cases.map(([, manifests, existing]) =>
        podEnv(named(manifests, 'Deployment', name), storesOf(manifests, existing)),
      );
    const names = of(defaults, 'Deployment').map(serviceName);
    const results = await Promise.all(names.map((name) => readSettings(name, envs(name))));
    names.forEach((name, i) => {
      const { settings, code, refusal } = results[i] as Awaited<ReturnType<typeof readSettings>>;
      const failed = cases[settings.length]?.[0];
      expect(code, `${name} refuses the environment of ${failed}: ${refusal}`).to.equal(0);
      expect(settings).to.have.length(cases.length);
    });
    const billing = results[names.indexOf('billing')]?.settings ?? [];
    expect(billing.map((s) => s.TURNSTILE_SECRET)).to.deep.equal([undefined, '0x4AAA-secret', '0x4AAA-secret']);
    expect(billing.map((s) => [s.STRIPE_SECRET_KEY, s.STRIPE_PRICES, s.STRIPE_CURRENCY])).to.deep.equal([
      [undefined, '-', 'usd'],
      [undefined, '-', 'usd'],
      ['sk_test_1', 'PACK_1000=price_p:900,STARTER=price_s:2900', 'eur'],
    ]);
    // Account mail (billing) and monitor alerts reach the SMTP server the Secret names.
    for (const name of ['billing', 'monitor'])
      expect(results[names.indexOf(name)]?.settings.map((s) => s.SMTP_URL)).to.deep.equal([
        undefined,
        undefined,
        'smtp://mail.internal:587',
      ]);
  });

  it('refuses an enabled ingress without trustedProxies, saying what to set; the edge gets the CIDRs', async () => {
    const unset = ['--set', 'trustedProxies='];
    expect(await refusal(...unset)).to.match(/trustedProxies is empty while ingress\.enabled.*--set trustedProxies=/);
    expect(await refusal(...unset, '--set', 'ingress.enabled=false')).to.equal('rendered');
    const config = of(defaults, 'ConfigMap').find((m) => m.data?.TRUSTED_PROXIES);
    expect(config?.data.TRUSTED_PROXIES).to.equal('10.244.0.0/16');
    const edge = podEnv(named(defaults, 'Deployment', 'edge'), storesOf(defaults, {}));
    expect(edge.TRUSTED_PROXIES).to.equal('10.244.0.0/16');
  });

  it('rejects a values file that breaks values.schema.json', async () => {
    const failed = await refusal('-f', path.join(CHART, 'ci/bad-values.yaml'));
    expect(failed).to.match(/additional properties 'ingres' not allowed/);
    expect(failed).to.match(/replicas.*minimum/);
    expect(await refusal('--set', 'secrets.turnstileSecret=x')).to.match(/turnstileSiteKey/);
    expect(await refusal('--set', 'mongodb.auth.password=p@ss')).to.match(/password.*does not match pattern/);
  });

  it('adds a service with one values block and one template include', async () => {
    const names = ['edge', ...SERVICES.map((s) => s.name)];
    expect(of(defaults, 'Deployment').map(serviceName)).to.have.members(names);
    for (const name of names) {
      expect(readFileSync(path.join(CHART, `templates/${name}.yaml`), 'utf8').trim()).to.equal(
        `{{- include "webutil.service" (dict "root" $ "name" "${name}") }}`,
      );
    }
    const copy = mkdtempSync(path.join(tmpdir(), 'webutil-chart-'));
    try {
      cpSync(CHART, copy, { recursive: true });
      const values = parseDocument(readFileSync(path.join(copy, 'values.yaml'), 'utf8'));
      values.setIn(['services', 'echo'], {
        port: 50057,
        replicas: 2,
        terminationGracePeriodSeconds: 30,
        preStopSeconds: 5,
        internetEgress: false,
        usesMongo: true,
        usesNats: false,
        resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { cpu: '500m', memory: '128Mi' } },
        autoscaling: { enabled: false, minReplicas: 2, maxReplicas: 4, targetCPUUtilizationPercentage: 70 },
        pdb: { minAvailable: 1 },
        env: {},
      });
      writeFileSync(path.join(copy, 'values.yaml'), values.toString());
      writeFileSync(
        path.join(copy, 'templates/echo.yaml'),
        '{{- include "webutil.service" (dict "root" $ "name" "echo") }}\n',
      );
      const rendered = await renderChart(copy, ...PROXIES);
      for (const manifest of rendered) validate(manifest);
      expect(unknownFields(rendered)).to.deep.equal([]);
      for (const kind of ['Deployment', 'Service', 'PodDisruptionBudget', 'NetworkPolicy']) {
        expect(named(rendered, kind, 'echo'), kind).to.not.equal(undefined);
      }
      expect(of(rendered, 'ConfigMap')[0]?.data.ECHO_ADDR).to.equal('dns:///rel-webutil-echo-headless:50057');
      // Every edge reaches every replica: a headless Service, balanced round robin by grpc-js.
      expect(named(rendered, 'Service', 'echo-headless')?.spec.clusterIP).to.equal('None');
      const echo = { pod: podOf('echo', '10.244.2.9'), ip: '10.244.2.9', port: 50057 };
      expect(connects(policies(rendered), NAMESPACE, podOf('edge'), echo), 'edge calls it').to.equal(true);
      expect(connects(policies(rendered), NAMESPACE, podOf('billing'), echo), 'nothing else does').to.equal(false);
      const mongodb = { pod: podOf('mongodb', '10.244.3.3'), ip: '10.244.3.3', port: 27017 };
      expect(connects(policies(rendered), NAMESPACE, podOf('echo'), mongodb), 'usesMongo').to.equal(true);
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });

  it('runs NATS and MongoDB in the release, or uses external ones', () => {
    expect(readdirSync(path.join(CHART, 'templates'))).to.include.members(['nats.yaml', 'mongodb.yaml']);
    expect(of(defaults, 'StatefulSet').map(serviceName)).to.have.members(['nats', 'mongodb']);
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

  it('probes gRPC natively; drains after preStop and before the kill; gives Chromium /dev/shm', () => {
    for (const deployment of [...of(defaults, 'Deployment'), ...of(production, 'Deployment')]) {
      const name = serviceName(deployment);
      const container = deployment.spec.template.spec.containers[0];
      if (name === 'edge') {
        expect(container.readinessProbe.httpGet.path).to.equal('/healthz');
      } else {
        expect(container.readinessProbe.grpc, name).to.deep.include({ service: 'readiness' });
        expect(container.livenessProbe.grpc, name).to.deep.include({ service: 'liveness' });
        expect(container.ports.map((p: Manifest) => p.name)).to.include.members(['grpc', 'connect', 'metrics']);
      }
      // Endpoints drain while preStop sleeps; then SIGTERM, then the process's own drain, all within the grace.
      const preStop = container.lifecycle?.preStop?.sleep?.seconds;
      expect(preStop, `${name} preStop sleep`).to.be.at.least(1);
      const grace = deployment.spec.template.spec.terminationGracePeriodSeconds;
      const drain = Number(container.env.find((e: Manifest) => e.name === 'SHUTDOWN_GRACE_MS').value);
      expect(preStop * 1000 + drain, `${name} drains before it is killed`).to.be.below(grace * 1000);
    }
    const renderPod = named(defaults, 'Deployment', 'render').spec.template.spec;
    expect(renderPod.terminationGracePeriodSeconds, 'render: 15 s queue + 30 s budget').to.be.above(45);
    // The image's own ENTRYPOINT runs tini (deploy/Dockerfile, target render): nothing overrides it.
    expect(renderPod.containers[0]).to.not.have.any.keys('command', 'args');
    expect(renderPod.volumes).to.deep.include({ name: 'shm', emptyDir: { medium: 'Memory', sizeLimit: '512Mi' } });
  });

  it('sizes memory limits from the measured peaks (docs/decisions/0046-pod-sizing.md)', () => {
    for (const manifests of [defaults, production]) {
      // Bookmarks: five hostile 10 MB files at once beside a normal conversion peak under 600 MB.
      const bookmark = named(manifests, 'Deployment', 'bookmark').spec.template.spec.containers[0];
      expect(bytes(bookmark.resources.limits.memory), 'bookmark').to.be.at.least(600e6);
      // Hostile input (crawl): ~160 MB before a crawl, peaks of 450-490 MB with one hostile crawl, so up to
      // ~340 MB per crawl: the limit holds the base plus that for every crawl the pod runs at once.
      const crawl = named(manifests, 'Deployment', 'crawl').spec.template.spec.containers[0];
      const concurrency = Number(crawl.env.find((e: Manifest) => e.name === 'CRAWL_CONCURRENCY')?.value ?? 4);
      expect(bytes(crawl.resources.limits.memory), `crawl at ${concurrency}`).to.be.at.least(
        160e6 + concurrency * 340e6,
      );
      // Its heap cap (decision 0496) is under the limit, and holds each crawl's whole hostile peak as heap.
      const nodeOptions = crawl.env.find((e: Manifest) => e.name === 'NODE_OPTIONS')?.value ?? '';
      const heapMb = Number(/--max-old-space-size=(\d+)/.exec(nodeOptions)?.[1]);
      expect(heapMb * 2 ** 20, 'crawl heap cap').to.be.below(bytes(crawl.resources.limits.memory));
      expect(heapMb * 2 ** 20, 'crawl heap cap').to.be.at.least(concurrency * 340e6);
    }
  });

  it('autoscales edge, render and crawl, and keeps every service available through disruptions', () => {
    expect(of(defaults, 'HorizontalPodAutoscaler').map((h) => h.spec.scaleTargetRef.name)).to.have.members([
      'rel-webutil-edge',
      'rel-webutil-render',
      'rel-webutil-crawl',
    ]);
    expect(of(defaults, 'PodDisruptionBudget')).to.have.length(of(defaults, 'Deployment').length);
  });

  it(
    'lets outside traffic reach the edge only, and the services only ' +
      'from the edge and the services that call them',
    () => {
      const values = parseDocument(readFileSync(path.join(REPO_ROOT, 'helm/webutil/values.yaml'), 'utf8')).toJS();
      const calls = (service: string): string[] => values.services[service]?.calls ?? [];
      // The monitor's runs and a site audit's site-level checks call other services (decision 0489).
      expect(calls('crawl')).to.have.members(['tls-scan', 'meta-scan', 'render', 'billing']);
      for (const manifests of [defaults, production]) {
        const controller: Pod = {
          namespace: 'ingress-nginx',
          labels: { 'app.kubernetes.io/name': 'ingress' },
          ip: '10.244.9.1',
        };
        const stranger: Pod = { namespace: 'default', labels: { app: 'shell' }, ip: '10.244.9.2' };
        for (const deployment of of(manifests, 'Deployment')) {
          const name = serviceName(deployment);
          const port = deployment.spec.template.spec.containers[0].ports[0].containerPort;
          const target = { pod: podOf(name, '10.244.4.4'), ip: '10.244.4.4', port };
          const callers = name === 'edge' ? controller : podOf('edge');
          expect(connects(policies(manifests), NAMESPACE, callers, target), `${name} from its callers`).to.equal(true);
          for (const other of [stranger, name === 'edge' ? podOf('billing') : controller]) {
            expect(connects(policies(manifests), NAMESPACE, other, target), `${name} from ${other.ip}`).to.equal(false);
          }
          for (const caller of ['crawl', 'monitor', 'bookmark']) {
            if (name === caller) continue;
            const may = name !== 'edge' && calls(caller).includes(name);
            const from = podOf(caller, '10.244.5.5');
            expect(connects(policies(manifests), NAMESPACE, from, target), `${name} from ${caller}`).to.equal(may);
          }
        }
      }
    },
  );

  it('lets the URL fetchers reach the internet over IPv4 and IPv6, never cluster, node or metadata addresses', () => {
    // The edge delivers webhooks (decision 0206); the monitor service, Slack-compatible alerts.
    const fetchers = ['edge', 'render', 'crawl', 'tls-scan', 'meta-scan', 'monitor'];
    const internet = ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'];
    const forbidden = [
      '10.96.0.1', // the service network
      '169.254.169.254', // cloud metadata
      'fd00:ec2::254', // AWS's IPv6 metadata endpoint
      'fe80::1',
      '::ffff:10.0.0.1', // IPv4-mapped
      '64:ff9b::a9fe:a9fe', // NAT64 of 169.254.169.254
      '127.0.0.1',
      '::1',
    ];
    for (const deployment of of(defaults, 'Deployment')) {
      const name = serviceName(deployment);
      for (const ip of internet) {
        const reaches = connects(policies(defaults), NAMESPACE, podOf(name), { ip, port: 8443 });
        expect(reaches, `${name} to ${ip}`).to.equal(fetchers.includes(name));
      }
      for (const ip of forbidden) {
        expect(connects(policies(defaults), NAMESPACE, podOf(name), { ip, port: 80 }), `${name} to ${ip}`).to.equal(
          false,
        );
      }
    }
  });

  it('lets billing reach Cloudflare Turnstile on port 443 only when Turnstile is configured', () => {
    const siteverify = { ip: '104.16.0.1', port: 443 };
    expect(connects(policies(defaults), NAMESPACE, podOf('billing'), siteverify), 'without Turnstile').to.equal(false);
    for (const [label, manifests] of [
      ['Turnstile keys', turnstile],
      ['existing Secret with them', production],
    ] as const) {
      expect(connects(policies(manifests), NAMESPACE, podOf('billing'), siteverify), label).to.equal(true);
      expect(connects(policies(manifests), NAMESPACE, podOf('billing'), { ip: '104.16.0.1', port: 80 })).to.equal(
        false,
      );
      const metadata = { ip: '169.254.169.254', port: 443 };
      expect(connects(policies(manifests), NAMESPACE, podOf('billing'), metadata)).to.equal(false);
      expect(connects(policies(manifests), NAMESPACE, podOf('bookmark'), siteverify), 'bookmark does not').to.equal(
        false,
      );
    }
  });

  it('gives MongoDB and NATS only to the services that use them: variables and network', () => {
    const usesMongo = ['billing', 'render', 'crawl', 'bookmark', 'monitor'];
    // Billing tells the edges of revocations over NATS; crawl carries its jobs on it.
    const usesNats = ['crawl', 'edge', 'billing'];
    for (const manifests of [defaults, production]) {
      const external = manifests === production;
      for (const deployment of of(manifests, 'Deployment')) {
        const name = serviceName(deployment);
        const env = deployment.spec.template.spec.containers[0].env.map((e: Manifest) => e.name);
        expect(env.includes('MONGO_URL'), `${name} MONGO_URL`).to.equal(usesMongo.includes(name));
        expect(env.includes('NATS_URL'), `${name} NATS_URL`).to.equal(usesNats.includes(name));
        const mongodb = external
          ? { ip: '10.40.0.12', port: 27017 } // production-values.yaml: a managed replica set over VPC peering
          : { pod: podOf('mongodb', '10.244.3.3'), ip: '10.244.3.3', port: 27017 };
        const nats = external
          ? {
              pod: { namespace: 'messaging', labels: { 'app.kubernetes.io/name': 'nats' }, ip: '10.244.6.6' },
              ip: '10.244.6.6',
              port: 4222,
            }
          : { pod: podOf('nats', '10.244.3.4'), ip: '10.244.3.4', port: 4222 };
        const where = external ? 'external' : 'bundled';
        expect(connects(policies(manifests), NAMESPACE, podOf(name), mongodb), `${name}, ${where} MongoDB`).to.equal(
          usesMongo.includes(name),
        );
        expect(connects(policies(manifests), NAMESPACE, podOf(name), nats), `${name}, ${where} NATS`).to.equal(
          usesNats.includes(name),
        );
      }
    }
  });

  it('refuses an external MongoDB or NATS without an egress rule to it', async () => {
    expect(await refusal('--set', 'nats.enabled=false', '--set', 'nats.url=nats://nats.messaging.svc:4222')).to.match(
      /extraEgress\/nats\/to.*minItems/,
    );
    expect(await refusal('--set', 'mongodb.enabled=false', '--set', 'mongodb.url=mongodb://db:27017/w')).to.match(
      /extraEgress\/mongodb\/to.*minItems/,
    );
  });

  it('runs the bundled MongoDB with authentication, its credentials in MONGO_URL from the same Secret', () => {
    const stores = storesOf(defaults);
    const mongod = podEnv(named(defaults, 'StatefulSet', 'mongodb'), stores);
    expect(mongod.MONGO_INITDB_ROOT_USERNAME).to.equal('webutil');
    expect(mongod.MONGO_INITDB_ROOT_PASSWORD).to.match(/^[A-Za-z0-9]{32}$/);
    const url = new URL(podEnv(named(defaults, 'Deployment', 'billing'), stores).MONGO_URL as string);
    expect([url.username, url.password]).to.deep.equal([
      mongod.MONGO_INITDB_ROOT_USERNAME,
      mongod.MONGO_INITDB_ROOT_PASSWORD,
    ]);
    expect(url.host).to.equal('rel-webutil-mongodb:27017');
    expect(url.searchParams.get('authSource')).to.equal('admin');
  });

  it('is scraped by a ServiceMonitor when the CRD exists or is asked for, else by pod annotations', async () => {
    expect(of(defaults, 'ServiceMonitor')).to.have.length(0);
    const annotations = named(defaults, 'Deployment', 'billing').spec.template.metadata.annotations;
    expect(annotations).to.include({ 'prometheus.io/scrape': 'true', 'prometheus.io/port': '9464' });
    const withCrd = await render('--api-versions', 'monitoring.coreos.com/v1/ServiceMonitor');
    for (const manifests of [withCrd, production]) {
      expect(of(manifests, 'ServiceMonitor')).to.have.length(1);
      const pod = named(manifests, 'Deployment', 'billing').spec.template.metadata;
      expect(pod.annotations).to.not.have.property('prometheus.io/scrape');
    }
    expect(unknownFields(withCrd)).to.deep.equal([]);
  });
});
