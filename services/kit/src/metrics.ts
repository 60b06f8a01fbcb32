import http from 'node:http';
import { collectDefaultMetrics, Histogram, register } from 'prom-client';

collectDefaultMetrics();

const rpcDuration = new Histogram({
  name: 'webutil_rpc_duration_seconds',
  help: 'Duration of gRPC calls handled, by method and status code',
  labelNames: ['rpc', 'code'],
  buckets: [0.005, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15, 60],
});

export function observeRpc(rpc: string, code: string, ms: number): void {
  rpcDuration.observe({ rpc, code }, ms / 1000);
}

/** Prometheus text exposition on GET /metrics. */
export async function serveMetrics(port: number): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    register.metrics().then(
      (text) => res.writeHead(200, { 'content-type': register.contentType }).end(text),
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(port, resolve));
  return server;
}
