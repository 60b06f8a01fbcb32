import { AddressPolicy, createLogger, env, loadConfig, processOptions, runService, serviceEnv } from '@webutil/kit';
import { openArtifactStore, sweepArtifacts } from '@webutil/kit/artifacts';
import { z } from 'zod';
import { BrowserPool } from './browser-pool.js';
import { lookupVia } from './dns-servers.js';
import { renderService } from './server.js';

const config = loadConfig({
  ...serviceEnv,
  HOST: env.string('0.0.0.0'),
  PORT: env.port(50052),
  WEBUTIL_ALLOW_TARGETS: env.cidrList(),
  DATA_DIR: env.string('.data'),
  MONGO_URL: env.optionalString(),
  /** puppeteer-core ignores PUPPETEER_* variables; this is the one place the browser is named. */
  CHROMIUM_PATH: env.string('/usr/bin/chromium'),
  /** DNS servers (host or host:port, comma-separated) the egress proxy asks; default: the system resolver. */
  RENDER_DNS_SERVERS: z
    .string()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  // Pool and queue (sizing measured: docs/decisions.md)
  RENDER_BROWSERS: env.int(2, 1),
  RENDER_PAGES_PER_BROWSER: env.int(2, 1),
  RENDER_QUEUE_DEPTH: env.int(16, 0),
  RENDER_QUEUE_WAIT_MS: env.int(15_000, 0),
  // One render
  RENDER_TIMEOUT_MS: env.int(30_000, 1_000),
  RENDER_QUIET_MS: env.int(150, 0),
  RENDER_NET_MAX_MS: env.int(3_000, 0),
  RENDER_SCROLL_MAX_MS: env.int(4_000, 0),
  RENDER_SETTLE_MAX_MS: env.int(1_500, 0),
  RENDER_MAX_CAPTURE_PIXELS: env.int(16_000, 100),
  RENDER_MAX_PDF_PAGES: env.int(100, 1),
  RENDER_CONNECT_TIMEOUT_MS: env.int(10_000, 100),
  // Results
  RENDER_FILE_TTL_MS: env.int(5 * 60_000, 1_000),
  RENDER_CACHE_WINDOW_MS: env.int(60_000, 0),
  RENDER_SWEEP_MS: env.int(30_000, 100),
});

const log = createLogger('render', config.LOG_LEVEL);
const policy = new AddressPolicy(config.WEBUTIL_ALLOW_TARGETS);
const lookup = lookupVia(config.RENDER_DNS_SERVERS);
const store = await openArtifactStore({ dataDir: config.DATA_DIR, mongoUrl: config.MONGO_URL, bucket: 'render' });
const stopSweeping = sweepArtifacts(store, config.RENDER_SWEEP_MS, log);
const pool = await BrowserPool.start({
  executablePath: config.CHROMIUM_PATH,
  browsers: config.RENDER_BROWSERS,
  pagesPerBrowser: config.RENDER_PAGES_PER_BROWSER,
  queueDepth: config.RENDER_QUEUE_DEPTH,
  log,
});

await runService({
  name: 'render',
  ...processOptions(config),
  protoFiles: ['webutil/render/v1/render.proto'],
  bindings: [
    renderService(
      {
        pool,
        store,
        policy,
        lookup,
        page: {
          egress: { policy, lookup, connectTimeoutMs: config.RENDER_CONNECT_TIMEOUT_MS },
          limits: {
            timeoutMs: config.RENDER_TIMEOUT_MS,
            quietMs: config.RENDER_QUIET_MS,
            netMaxMs: config.RENDER_NET_MAX_MS,
            scrollMaxMs: config.RENDER_SCROLL_MAX_MS,
            settleMaxMs: config.RENDER_SETTLE_MAX_MS,
            maxCapturePixels: config.RENDER_MAX_CAPTURE_PIXELS,
            maxPdfPages: config.RENDER_MAX_PDF_PAGES,
          },
        },
        queueWaitMs: config.RENDER_QUEUE_WAIT_MS,
        fileTtlMs: config.RENDER_FILE_TTL_MS,
        cacheWindowMs: config.RENDER_CACHE_WINDOW_MS,
      },
      log,
    ),
  ],
  log,
  onShutdown: async () => {
    stopSweeping();
    await pool.close();
    await store.close();
  },
});
