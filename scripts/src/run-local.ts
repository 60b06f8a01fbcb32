/**
 * `npm start`: the edge and every implemented service as separate processes on one machine,
 * with logs prefixed by process name; Ctrl-C stops them all cleanly.
 *   EDGE_PORT (8080)  SERVICE_BASE_PORT (50050: billing +1, render +2, crawl +3, meta-scan +5)  DATA_DIR (./.data)
 * Any other variable (LOG_LEVEL, WEBUTIL_ALLOW_TARGETS, NATS_URL, ...) passes through.
 */
import path from 'node:path';
import { REPO_ROOT, startStack } from './local-stack.js';

const int = (name: string, fallback: number) => {
  const raw = process.env[name];
  const value = raw === undefined ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > 65535) {
    process.stderr.write(`config error: ${name}=${JSON.stringify(raw)}: must be a port number\n`);
    process.exit(78);
  }
  return value;
};

const stack = await startStack({
  edgePort: int('EDGE_PORT', 8080),
  basePort: int('SERVICE_BASE_PORT', 50050),
  dataDir: path.resolve(process.env.DATA_DIR ?? path.join(REPO_ROOT, '.data')),
});
process.stdout.write(`\nWeb Utility API ready at ${stack.edgeUrl}/v1 (Ctrl-C stops)\n\n`);

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    process.stdout.write('\nstopping...\n');
    void stack.stop().then(() => process.exit(0));
  });
}
