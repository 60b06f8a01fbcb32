import { createRequire } from 'node:module';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import {
  type DownCheckResponse,
  MetaScanServiceClient,
  MetaScanServiceService,
} from '@webutil/proto/webutil/metascan/v1/metascan';
import { expect } from 'chai';
import { invalidArgument, readGrpcError } from '../src/errors.js';
import { bind, type RunningService, runService } from '../src/grpc-server.js';
import { createLogger } from '../src/logger.js';

const require = createRequire(import.meta.url);
const log = createLogger('kit-test', 'silent');

function load(file: string, pkgDir: string, options: protoLoader.Options = {}) {
  return grpc.loadPackageDefinition(
    protoLoader.loadSync(path.join(path.dirname(require.resolve(`${pkgDir}/package.json`)), file), options),
  ) as any;
}
const health = load('proto/health/v1/health.proto', 'grpc-health-check', { enums: String }).grpc.health.v1;
const reflection = load('build/proto/grpc/reflection/v1/reflection.proto', '@grpc/reflection').grpc.reflection.v1;

function call(
  client: InstanceType<typeof MetaScanServiceClient>,
  url: string,
  deadlineMs = 5000,
): Promise<DownCheckResponse> {
  return new Promise((resolve, reject) =>
    client.downCheck({ url }, new grpc.Metadata(), { deadline: Date.now() + deadlineMs }, (err, res) =>
      err ? reject(err) : resolve(res),
    ),
  );
}

describe('runService and bind', () => {
  let service: RunningService;
  let client: InstanceType<typeof MetaScanServiceClient>;
  const seen: { url: string; aborted: boolean; requestId: string }[] = [];

  beforeEach(async () => {
    seen.length = 0;
    service = await runService({
      name: 'kit-test',
      host: '127.0.0.1',
      port: 0,
      protoFiles: ['webutil/metascan/v1/metascan.proto'],
      log,
      shutdownGraceMs: 3000,
      bindings: [
        bind(
          MetaScanServiceService,
          {
            // The URL names the behaviour: slow:<ms>, wait-for-abort, fail, crash.
            downCheck: async ({ url }, ctx) => {
              const entry = { url, aborted: false, requestId: ctx.requestId };
              seen.push(entry);
              if (url.startsWith('slow:')) await new Promise((r) => setTimeout(r, Number(url.slice(5))));
              if (url === 'wait-for-abort') {
                await new Promise((r) => ctx.signal.addEventListener('abort', r, { once: true }));
                entry.aborted = true;
              }
              if (url === 'fail') throw invalidArgument('TARGET_BLOCKED', 'blocked for the test');
              if (url === 'crash') throw new Error('secret internals');
              return { url, testedFrom: 'test', redirects: [], verdict: 'up', reason: 'test' };
            },
          },
          log,
        ),
      ],
    });
    client = new MetaScanServiceClient(`127.0.0.1:${service.port}`, grpc.credentials.createInsecure());
  });

  afterEach(async () => {
    client.close();
    await service.stop();
  });

  it('serves a bound handler and passes the caller request id', async () => {
    const metadata = new grpc.Metadata();
    metadata.set('x-request-id', 'abc-123');
    const res = await new Promise<DownCheckResponse>((resolve, reject) =>
      client.downCheck({ url: 'x' }, metadata, (err, r) => (err ? reject(err) : resolve(r))),
    );
    expect(res).to.include({ url: 'x', testedFrom: 'test' });
    expect(res.httpsStatus).to.equal(undefined);
    expect(seen[0]?.requestId).to.equal('abc-123');
  });

  it('sends the machine reason in the status details, and hides crash messages', async () => {
    const failed = readGrpcError(await call(client, 'fail').catch((e) => e));
    expect(failed).to.deep.equal({
      code: grpc.status.INVALID_ARGUMENT,
      message: 'blocked for the test',
      reason: 'TARGET_BLOCKED',
    });
    const crashed = readGrpcError(await call(client, 'crash').catch((e) => e));
    expect(crashed.code).to.equal(grpc.status.INTERNAL);
    expect(crashed.reason).to.equal('INTERNAL');
    expect(crashed.message).to.not.include('secret');
  });

  it('answers UNIMPLEMENTED for an RPC without a handler', async () => {
    const err = await new Promise<grpc.ServiceError>((resolve) => client.metaScan({ url: 'x' }, (e) => resolve(e!)));
    expect(err.code).to.equal(grpc.status.UNIMPLEMENTED);
  });

  it('aborts the handler signal when the deadline passes', async () => {
    const err = await call(client, 'wait-for-abort', 200).catch((e) => e);
    expect(err.code).to.equal(grpc.status.DEADLINE_EXCEEDED);
    await new Promise((r) => setTimeout(r, 100));
    expect(seen[0]?.aborted).to.equal(true);
  });

  it('drains in-flight calls on stop, refuses new ones, and turns readiness NOT_SERVING', async () => {
    const healthClient = new health.Health(`127.0.0.1:${service.port}`, grpc.credentials.createInsecure());
    const check = (svc: string) =>
      new Promise<string>((resolve) =>
        healthClient.check({ service: svc }, (e: Error | null, r: { status: string }) =>
          resolve(e ? 'ERROR' : r.status),
        ),
      );
    expect(await check('readiness')).to.equal('SERVING');
    expect(await check('liveness')).to.equal('SERVING');
    expect(await check('webutil.metascan.v1.MetaScanService')).to.equal('SERVING');
    const inFlight = call(client, 'slow:400');
    await new Promise((r) => setTimeout(r, 100));
    const stopped = service.stop();
    expect(await inFlight).to.include({ url: 'slow:400', testedFrom: 'test' });
    await stopped;
    const after = await call(client, 'x', 1000).catch((e) => e);
    expect(after.code).to.be.oneOf([grpc.status.UNAVAILABLE, grpc.status.DEADLINE_EXCEEDED]);
    healthClient.close();
  });

  it('lists its services through server reflection', async () => {
    const reflectionClient = new reflection.ServerReflection(
      `127.0.0.1:${service.port}`,
      grpc.credentials.createInsecure(),
    );
    const stream = reflectionClient.ServerReflectionInfo();
    const names = await new Promise<string[]>((resolve, reject) => {
      stream.on('data', (msg: { listServicesResponse?: { service: { name: string }[] } }) => {
        resolve(msg.listServicesResponse?.service.map((s) => s.name) ?? []);
        stream.end();
      });
      stream.on('error', reject);
      stream.write({ listServices: '*' });
    });
    reflectionClient.close();
    expect(names).to.include('webutil.metascan.v1.MetaScanService');
  });
});

describe('metrics', () => {
  it('exposes RPC durations by method and code on /metrics', async () => {
    const { freePort } = await import('@webutil/scripts/local-stack');
    const metricsPort = await freePort();
    const service = await runService({
      name: 'kit-metrics-test',
      host: '127.0.0.1',
      port: 0,
      metricsPort,
      protoFiles: ['webutil/metascan/v1/metascan.proto'],
      log,
      bindings: [
        bind(
          MetaScanServiceService,
          { downCheck: async ({ url }) => ({ url, testedFrom: 'test', redirects: [], verdict: 'up', reason: 'test' }) },
          log,
        ),
      ],
    });
    const client = new MetaScanServiceClient(`127.0.0.1:${service.port}`, grpc.credentials.createInsecure());
    try {
      const scrape = async () => (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      const okCount = (text: string) =>
        Number(/webutil_rpc_duration_seconds_count\{rpc="DownCheck",code="OK"\} (\d+)/.exec(text)?.[1] ?? 0);
      const before = okCount(await scrape());
      await call(client, 'x');
      const text = await scrape();
      expect(okCount(text)).to.equal(before + 1);
      expect(text).to.include('process_cpu_user_seconds_total');
    } finally {
      client.close();
      await service.stop();
    }
  });
});
