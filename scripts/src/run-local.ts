/**
 * `npm start`: the edge and every implemented service as separate processes on one machine,
 * with logs prefixed by process name; a process that dies is restarted (with a back-off, as
 * Kubernetes does); Ctrl-C stops them all cleanly.
 *   EDGE_PORT (8080)  SERVICE_BASE_PORT (50050: billing +1, render +2, crawl +3, tls-scan +4,
 *   meta-scan +5, bookmark +6)  DATA_DIR (./.data)  DEMO_PORT (8090, with --demo; its HTTPS server +1)
 * Any other variable (LOG_LEVEL, WEBUTIL_ALLOW_TARGETS, NATS_URL, ...) passes through.
 * `npm start -- --demo` also serves the offline demo site (scripts/src/demo-site.ts) and allows it.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startDemoSite } from './demo-site.js';
import { REPO_ROOT, RESTART_BACKOFF, startStack } from './local-stack.js';

const int = (name: string, fallback: number) => {
  const raw = process.env[name];
  const value = raw === undefined ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > 65535) {
    process.stderr.write(`config error: ${name}=${JSON.stringify(raw)}: must be a port number\n`);
    process.exit(78);
  }
  return value;
};

const { values } = parseArgs({ options: { demo: { type: 'boolean', default: false } } });
const dataDir = path.resolve(process.env.DATA_DIR ?? path.join(REPO_ROOT, '.data'));
const demoPort = int('DEMO_PORT', 8090);
// The demo's HTTPS server (the SSL scan's target) takes the next port: 8091 by default.
const demo = values.demo
  ? await startDemoSite({ port: demoPort, tlsPort: demoPort === 0 ? 0 : demoPort + 1, dataDir })
  : undefined;
const stack = await startStack({
  edgePort: int('EDGE_PORT', 8080),
  basePort: int('SERVICE_BASE_PORT', 50050),
  dataDir,
  env: demo?.stackEnv,
  envFor: demo && { 'tls-scan': demo.tlsScanEnv },
  // As Kubernetes would: a process that dies is replaced, and the edge answers 503 meanwhile.
  supervise: RESTART_BACKOFF,
});
process.stdout.write(`\nWeb Utility API ready at ${stack.edgeUrl}/v1 (Ctrl-C stops)\n`);
if (demo)
  process.stdout.write(
    `Demo site at ${demo.url} (loopback is allowed; the SSL scan of "${demo.tlsDomain}" reaches the demo HTTPS ` +
      `server on port ${demo.tlsPort})\n`,
  );
process.stdout.write('\n');

let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    process.stdout.write('\nstopping...\n');
    void Promise.all([stack.stop(), demo?.close()]).then(() => process.exit(0));
  });
}
