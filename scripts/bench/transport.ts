/**
 * Issue 13, item 2: the edge -> service hop on three transports, one run, one billing process:
 * the same GetQuota RPC (billing's cheapest metered-path call) over @grpc/grpc-js (what the edge
 * uses), the Connect protocol with binary protobuf over HTTP/1.1 keep-alive, and gRPC over HTTP/2
 * from @connectrpc/connect-node. Prints calls/s and CPU per call on the client (this process) and
 * on billing (/proc), 32 calls in flight.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { createFileRegistry, type DescService, fromBinary } from '@bufbuild/protobuf';
import { FileDescriptorSetSchema } from '@bufbuild/protobuf/wkt';
import { createClient } from '@connectrpc/connect';
import { createConnectTransport, createGrpcTransport } from '@connectrpc/connect-node';
import * as grpc from '@grpc/grpc-js';
import { BillingServiceClient, type GetQuotaResponse } from '@webutil/proto/webutil/billing/v1/billing';
import { REPO_ROOT } from '../src/local-stack.js';
import { startTestStack } from '../src/test-stack.js';

const SECONDS = Number(process.env.BENCH_DURATION_MS ?? 6_000) / 1000;
const IN_FLIGHT = 32;

const registry = createFileRegistry(
  fromBinary(FileDescriptorSetSchema, readFileSync(path.join(REPO_ROOT, 'proto/gen/descriptors.binpb'))),
);
const billingDesc = registry.getService('webutil.billing.v1.BillingService') as DescService;

/** User + system CPU milliseconds of a process so far (clock ticks of 10 ms). */
function cpuMs(pid: number | undefined): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const stack = await startTestStack({ env: { LOG_LEVEL: 'warn' } });
const credential = { apiKey: stack.apiKey, clientIp: '127.0.0.1' };
const billingPid = stack.pid('billing');

async function measure(name: string, call: () => Promise<unknown>) {
  const deadline = (ms: number) => performance.now() + ms;
  const run = async (until: number) => {
    let calls = 0;
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (performance.now() < until) {
          await call();
          calls++;
        }
      }),
    );
    return calls;
  };
  await run(deadline(1_000)); // warm-up
  const client0 = process.cpuUsage();
  const server0 = cpuMs(billingPid);
  const started = performance.now();
  const calls = await run(deadline(SECONDS * 1000));
  const seconds = (performance.now() - started) / 1000;
  const client = process.cpuUsage(client0);
  const serverMs = cpuMs(billingPid) - server0;
  return {
    name,
    rate: calls / seconds,
    clientUs: (client.user + client.system) / calls,
    serverUs: (serverMs * 1000) / calls,
  };
}

try {
  const grpcJs = new BillingServiceClient(`127.0.0.1:${stack.ports.billing}`, grpc.credentials.createInsecure());
  const viaGrpcJs = () =>
    new Promise<GetQuotaResponse>((resolve, reject) =>
      grpcJs.getQuota({ credential, refused: false }, (err, res) => (err ? reject(err) : resolve(res))),
    );
  // The service is described at run time (the descriptor set), so its client's methods are typed here.
  type QuotaClient = { getQuota(request: { credential: typeof credential }): Promise<unknown> };
  const connectHttp1 = createClient(
    billingDesc,
    createConnectTransport({
      baseUrl: `http://127.0.0.1:${stack.ports['billing-connect']}`,
      httpVersion: '1.1',
      useBinaryFormat: true,
    }),
  ) as unknown as QuotaClient;
  const grpcHttp2 = createClient(
    billingDesc,
    createGrpcTransport({ baseUrl: `http://127.0.0.1:${stack.ports.billing}` }),
  ) as unknown as QuotaClient;
  const results = [
    await measure('@grpc/grpc-js (today)', viaGrpcJs),
    await measure('Connect, binary, HTTP/1.1', () => connectHttp1.getQuota({ credential })),
    await measure('gRPC, HTTP/2, connect-node', () => grpcHttp2.getQuota({ credential })),
  ];
  grpcJs.close();
  const base = results[0]!;
  console.log(`\n== edge -> service transport (issue 13): GetQuota, ${IN_FLIGHT} in flight, ${SECONDS} s each ==`);
  for (const r of results) {
    console.log(
      `${r.name.padEnd(28)} ${r.rate.toFixed(0).padStart(6)} calls/s (${(r.rate / base.rate).toFixed(2)}x), ` +
        `client ${r.clientUs.toFixed(0)} µs/call, billing ${r.serverUs.toFixed(0)} µs/call`,
    );
  }
} finally {
  await stack.stop();
}
