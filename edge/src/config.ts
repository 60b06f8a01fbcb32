import { env, loadConfig, serviceEnv } from '@webutil/kit';
import { z } from 'zod';

/** The edge's settings from environment variables (a bad value stops the process, naming it). */
export function readConfig(source: NodeJS.ProcessEnv = process.env) {
  return loadConfig(
    {
      HOST: env.string('0.0.0.0'),
      PORT: env.port(8080),
      LOG_LEVEL: z.string().default('info'),
      JSON_BODY_LIMIT: env.string('64kb'),
      BILLING_ADDR: env.string('127.0.0.1:50051'),
      META_SCAN_ADDR: env.string('127.0.0.1:50055'),
      CRAWL_ADDR: env.string('127.0.0.1:50053'),
      RENDER_ADDR: env.string('127.0.0.1:50052'),
      BOOKMARK_ADDR: env.string('127.0.0.1:50056'),
      TLS_SCAN_ADDR: env.string('127.0.0.1:50054'),
      MONITOR_ADDR: env.string('127.0.0.1:50057'),
      SHUTDOWN_GRACE_MS: env.int(10_000),
      /** Reverse proxies (CIDRs) whose X-Forwarded-For names the client; none by default. */
      TRUSTED_PROXIES: env.cidrList(),
      /** Slow clients: time to send the headers, and the whole request (a 10 MB upload at 1.4 Mbit/s). */
      HEADERS_TIMEOUT_MS: env.int(10_000, 100),
      REQUEST_TIMEOUT_MS: env.int(60_000, 100),
      KEEP_ALIVE_TIMEOUT_MS: env.int(5_000, 100),
      /** The request line plus headers (an oversized query counts): Node's default, 16 KB. */
      MAX_HEADER_BYTES: env.int(16_384, 1_024),
      MAX_CONNECTIONS_PER_CLIENT: env.int(256, 1),
      /** Uploads one client network may have in flight: each holds up to its 10 MB file in memory. */
      MAX_UPLOADS_PER_CLIENT: env.int(2, 1),
      /** Where clients reach the API; download links start with it. Default: this process on 127.0.0.1. */
      PUBLIC_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
      /** Set (as for billing) when the bot challenge is Cloudflare Turnstile: the pages' CSP allows its widget. */
      TURNSTILE_SITE_KEY: env.optionalString(),
      /**
       * How long the edge answers a caller's quota reads from billing's last answer for that caller
       * (counting them toward its rate) before asking billing again; 0 asks billing every time.
       */
      CALLER_VIEW_MS: env.int(1_000, 0),
      /**
       * Billing's notices of revoked keys, changed passwords and plans arrive over this NATS: every
       * edge drops that account's views and leases at once. Unset: changes show within CALLER_VIEW_MS.
       */
      NATS_URL: env.optionalString(),
      /**
       * Webhook deliveries (docs/decisions/0206-webhooks.md) go where every fetch may: the same
       * allow-list of otherwise refused CIDRs as the services, and the resolver they use.
       */
      WEBUTIL_ALLOW_TARGETS: env.cidrList(),
      WEBHOOK_DNS_SERVERS: env.list(),
      /** Whether this process delivers webhooks (every replica may: billing leases each delivery to one). */
      WEBHOOK_DELIVERY: env.bool(true),
      /** The back-off's first pause; it doubles per attempt, at most 10 minutes, for 30 minutes. */
      WEBHOOK_RETRY_BASE_MS: env.int(5_000, 1),
      /** How often a job with a webhook is looked at while it runs, and billing asked for due deliveries. */
      WEBHOOK_POLL_MS: env.int(2_000, 10),
      WEBHOOK_TICK_MS: env.int(1_000, 10),
      /** Prometheus /metrics on its own port (not on the public one); unset: none. */
      METRICS_PORT: serviceEnv.METRICS_PORT,
    },
    source,
  );
}
