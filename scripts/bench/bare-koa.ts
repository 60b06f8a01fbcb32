import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { REPO_ROOT } from '../src/local-stack.js';

export interface BareKoa {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

export interface BareKoaOptions {
  /** The JSON body, as the edge answered it. */
  body: string;
  /** Set on every response, as they are. */
  headers: Record<string, string>;
  /** Each response also carries an X-Request-Id of its own (a random UUID), as the edge's do. */
  requestId?: boolean;
  /** Node flags, e.g. --cpu-prof. */
  nodeArgs?: string[];
}

/**
 * The quota benchmarks' baseline: a bare Koa handler answering the edge's `GET /v1/quota` body,
 * in its own process like the edge, with Node's default HTTP server settings.
 */
export async function startBareKoa({ body, headers, requestId, nodeArgs = [] }: BareKoaOptions): Promise<BareKoa> {
  const source = `
    import { randomUUID } from 'node:crypto';
    import Koa from 'koa';
    const app = new Koa();
    const headers = ${JSON.stringify(headers)};
    app.use((ctx) => {
      ${requestId ? "ctx.set('X-Request-Id', randomUUID());" : ''}
      ctx.set(headers);
      ctx.type = 'json';
      ctx.body = ${JSON.stringify(body)};
    });
    const server = app.listen(0, '127.0.0.1', () => console.log('PORT=' + server.address().port));
    // An exit of its own, so that a --cpu-prof profile is written.
    process.on('SIGTERM', () => process.exit(0));`;
  const child = spawn(process.execPath, [...nodeArgs, '--input-type=module', '-e', source], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<string>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`bare Koa exited with ${code}`)));
    createInterface({ input: child.stdout }).on('line', (line) => line.startsWith('PORT=') && resolve(line.slice(5)));
  });
  return {
    url: `http://127.0.0.1:${port}/v1/quota`,
    pid: child.pid ?? 0,
    stop: async () => {
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}

/** What Koa and Node set themselves (or the edge sets per request), left out of a baseline's fixed headers. */
const OWN_HEADERS = new Set(['date', 'connection', 'keep-alive', 'content-length', 'content-type', 'x-request-id']);

/** The headers of an edge response a baseline answers with as fixed values. */
export function fixedHeaders(response: Response): Record<string, string> {
  return Object.fromEntries([...response.headers].filter(([name]) => !OWN_HEADERS.has(name)));
}
