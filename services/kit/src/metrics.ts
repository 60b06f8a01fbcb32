import http from 'node:http';
import {
  Counter,
  type CounterConfiguration,
  collectDefaultMetrics,
  Gauge,
  type GaugeConfiguration,
  Histogram,
  type HistogramConfiguration,
  Registry,
} from 'prom-client';

// The kit's own registry, not prom-client's global one: two copies of the kit in one process
// (a test runner loading sources and builds) must not collide on metric names.
const registry = new Registry();
let defaultsCollected = false;

const rpcDuration = new Histogram({
  name: 'webutil_rpc_duration_seconds',
  help: 'Duration of gRPC calls handled, by method and status code',
  labelNames: ['rpc', 'code'],
  buckets: [0.005, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15, 60],
  registers: [registry],
});

/** Labelled children by "rpc code": prom-client would otherwise hash the label object on every call. */
const rpcDurationOf = new Map<string, ReturnType<typeof rpcDuration.labels>>();

export function observeRpc(rpc: string, code: string, ms: number): void {
  const key = `${rpc} ${code}`;
  let child = rpcDurationOf.get(key);
  if (!child) {
    child = rpcDuration.labels({ rpc, code });
    rpcDurationOf.set(key, child);
  }
  child.observe(ms / 1000);
}

/** A service's own gauge, exposed with the kit's metrics; `collect` may read the value when scraped. */
export function gauge<L extends string = string>(config: Omit<GaugeConfiguration<L>, 'registers'>): Gauge<L> {
  return new Gauge({ ...config, registers: [registry] });
}

/** A service's own counter, exposed with the kit's metrics. */
export function counter<L extends string = string>(config: Omit<CounterConfiguration<L>, 'registers'>): Counter<L> {
  return new Counter({ ...config, registers: [registry] });
}

/** A process's own histogram (the edge's request latency), exposed with the kit's metrics. */
export function histogram<L extends string = string>(
  config: Omit<HistogramConfiguration<L>, 'registers'>,
): Histogram<L> {
  return new Histogram({ ...config, registers: [registry] });
}

/** Prometheus text exposition on GET /metrics, with the process's default metrics. */
export async function serveMetrics(port: number): Promise<http.Server> {
  if (!defaultsCollected) {
    collectDefaultMetrics({ register: registry });
    defaultsCollected = true;
  }
  const server = http.createServer((req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve) => server.listen(port, resolve));
  return server;
}
