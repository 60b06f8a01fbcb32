import {
  AddressPolicy,
  CallerSlots,
  createLogger,
  exitOnFatalErrors,
  lookupVia,
  processOptions,
  runService,
} from '@webutil/kit';
import { openArtifactStore, sweepArtifacts } from '@webutil/kit/artifacts';
import { BrowserPool, chromiumSandbox } from './browser-pool.js';
import { readConfig } from './config.js';
import { ContentBlocking } from './content-blocking.js';
import { renderService } from './server.js';

const config = readConfig();

const log = createLogger('render', config.LOG_LEVEL);
exitOnFatalErrors(log);
const policy = new AddressPolicy(config.WEBUTIL_ALLOW_TARGETS);
const lookup = lookupVia(config.RENDER_DNS_SERVERS);
const store = await openArtifactStore({ dataDir: config.DATA_DIR, mongoUrl: config.MONGO_URL, bucket: 'render' });
const stopSweeping = sweepArtifacts(store, config.RENDER_SWEEP_MS, log);
const sandbox = chromiumSandbox(config.RENDER_CHROMIUM_SANDBOX);
log.info({ sandbox, setting: config.RENDER_CHROMIUM_SANDBOX }, `Chromium's sandbox is ${sandbox ? 'on' : 'off'}`);
const blocking = new ContentBlocking(config.RENDER_FILTER_LISTS, log);
const pool = await BrowserPool.start({
  executablePath: config.CHROMIUM_PATH,
  sandbox,
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
        callers: new CallerSlots(),
        lookup,
        page: {
          egress: { policy, lookup, connectTimeoutMs: config.RENDER_CONNECT_TIMEOUT_MS },
          blocking,
          limits: {
            timeoutMs: config.RENDER_TIMEOUT_MS,
            quietMs: config.RENDER_QUIET_MS,
            netMaxMs: config.RENDER_NET_MAX_MS,
            scrollMaxMs: config.RENDER_SCROLL_MAX_MS,
            settleMaxMs: config.RENDER_SETTLE_MAX_MS,
            maxCapturePixels: config.RENDER_MAX_CAPTURE_PIXELS,
            maxCaptureArea: config.RENDER_MAX_CAPTURE_AREA,
            maxPdfPages: config.RENDER_MAX_PDF_PAGES,
            selectorWaitMaxMs: config.RENDER_SELECTOR_WAIT_MAX_MS,
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
