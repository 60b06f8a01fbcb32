import { env, loadConfig, serviceEnv } from '@webutil/kit';
import { z } from 'zod';
import { DEBIAN_FILTER_LISTS } from './content-blocking.js';

/** The service's settings from environment variables (a bad value stops the process, naming it). */
export function readConfig(source: NodeJS.ProcessEnv = process.env) {
  return loadConfig(
    {
      ...serviceEnv,
      HOST: env.string('0.0.0.0'),
      PORT: env.port(50052),
      WEBUTIL_ALLOW_TARGETS: env.cidrList(),
      DATA_DIR: env.string('.data'),
      MONGO_URL: env.optionalString(),
      /** puppeteer-core ignores PUPPETEER_* variables; this is the one place the browser is named. */
      CHROMIUM_PATH: env.string('/usr/bin/chromium'),
      /**
       * Chromium's own sandbox: on, off (--no-sandbox), or auto (on, except as root, where Chromium
       * refuses it). The image sets off: docs/decisions/0102-chromium-sandbox.md.
       */
      RENDER_CHROMIUM_SANDBOX: z.enum(['auto', 'on', 'off']).default('auto'),
      /** DNS servers (host or host:port, comma-separated) the egress proxy asks; default: the system resolver. */
      RENDER_DNS_SERVERS: env.list(),
      // Pool and queue (sizing: docs/decisions/0032-render-pool-and-queue.md)
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
      /** A screenshot's bounds in device pixels: height and area (docs/decisions/0291-capture-bounds.md). */
      RENDER_MAX_CAPTURE_PIXELS: env.int(16_000, 100),
      RENDER_MAX_CAPTURE_AREA: env.int(80_000_000, 10_000),
      RENDER_MAX_PDF_PAGES: env.int(100, 1),
      /**
       * The ad filter lists blockAds uses (docs/decisions/0192-content-blocking.md): by default
       * EasyList and EasyPrivacy from Debian's webext-ublock-origin-chromium.
       */
      RENDER_FILTER_LISTS: z
        .string()
        .default(DEBIAN_FILTER_LISTS.join(','))
        .transform((v) =>
          v
            .split(',')
            .map((p) => p.trim())
            .filter(Boolean),
        ),
      /** Longest wait for a request's waitForSelector (docs/decisions/0191-render-options.md). */
      RENDER_SELECTOR_WAIT_MAX_MS: env.int(10_000, 0),
      RENDER_CONNECT_TIMEOUT_MS: env.int(10_000, 100),
      // Results
      RENDER_FILE_TTL_MS: env.int(5 * 60_000, 1_000),
      RENDER_CACHE_WINDOW_MS: env.int(60_000, 0),
      RENDER_SWEEP_MS: env.int(30_000, 100),
    },
    source,
  );
}
