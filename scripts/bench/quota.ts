/**
 * Issue 3 benchmark: GET /v1/quota with an API key at 64 concurrent connections, through the
 * edge and the billing service (authenticate, rate-limit count, quota read against the embedded
 * store), against a bare Koa handler returning the same JSON, measured in the same run with the
 * same load generator (autocannon). Prints req/s and p99 of each and their ratios.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { createInterface } from 'node:readline';
import { REPO_ROOT } from '../src/local-stack.js';
import { startTestStack } from '../src/test-stack.js';

interface AutocannonResult {
  requests: { average: number };
  latency: { p50: number; p99: number };
  non2xx: number;
  errors: number;
  timeouts: number;
}
type Autocannon = (options: {
  url: string;
  connections: number;
  duration: number;
  headers?: Record<string, string>;
}) => Promise<AutocannonResult>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

const CONNECTIONS = 64;
const SECONDS = Number(process.env.BENCH_DURATION_MS ?? 10_000) / 1000;

/** The baseline: Koa answering the same body and header, in its own process like the edge. */
async function startBareKoa(body: string, credits: string): Promise<{ url: string; stop(): Promise<void> }> {
  const source = `
    import Koa from 'koa';
    const app = new Koa();
    app.use((ctx) => {
      ctx.set('X-Credits-Remaining', ${JSON.stringify(credits)});
      ctx.set('Cache-Control', 'no-store');
      ctx.type = 'json';
      ctx.body = ${JSON.stringify(body)};
    });
    const server = app.listen(0, '127.0.0.1', () => console.log('PORT=' + server.address().port));`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', source], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`bare Koa exited with ${code}`)));
    createInterface({ input: child.stdout }).on('line', (line) => line.startsWith('PORT=') && resolve(line.slice(5)));
  });
  return {
    url: `http://127.0.0.1:${port}/v1/quota`,
    stop: async () => {
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

async function measure(url: string, headers: Record<string, string>): Promise<AutocannonResult> {
  await autocannon({ url, connections: CONNECTIONS, duration: 2, headers }); // warm-up
  const result = await autocannon({ url, connections: CONNECTIONS, duration: SECONDS, headers });
  if (result.non2xx || result.errors || result.timeouts)
    throw new Error(`${url}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} timeouts`);
  return result;
}

const stack = await startTestStack({ env: { LOG_LEVEL: 'warn' } });
const auth = { authorization: `Bearer ${stack.apiKey}` };
const sample = await stack.api('/v1/quota');
const bare = await startBareKoa(await sample.text(), sample.headers.get('x-credits-remaining') ?? '0');
try {
  const baseline = await measure(bare.url, auth);
  const edge = await measure(`${stack.edgeUrl}/v1/quota`, auth);
  const fmt = (n: number, digits = 1) => n.toFixed(digits);
  console.log(
    `\n== quota benchmark (issue 3): GET /v1/quota with an API key, ${CONNECTIONS} connections, ${SECONDS} s each ==`,
  );
  console.log(
    `bare Koa handler, same JSON:  ${fmt(baseline.requests.average, 0)} req/s, ` +
      `p50 ${baseline.latency.p50} ms, p99 ${baseline.latency.p99} ms`,
  );
  console.log(
    `edge + billing (SQLite):      ${fmt(edge.requests.average, 0)} req/s, ` +
      `p50 ${edge.latency.p50} ms, p99 ${edge.latency.p99} ms`,
  );
  console.log(
    `edge/bare: throughput ${fmt(edge.requests.average / baseline.requests.average, 3)}x, ` +
      `p99 latency ${fmt(edge.latency.p99 / Math.max(baseline.latency.p99, 1), 2)}x`,
  );
} finally {
  await bare.stop();
  await stack.stop();
}
