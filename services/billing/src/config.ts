import { env, loadConfig, serviceEnv } from '@webutil/kit';
import { mailEnv } from '@webutil/kit/mail';
import { clockEnv } from './clock.js';
import { paymentEnv } from './payments/catalogue.js';
import { noticeEnv } from './revocation-notices.js';
import { storeEnv } from './stores/open.js';

/** The service's settings from environment variables (a bad value stops the process, naming it). */
export function readConfig(source: NodeJS.ProcessEnv = process.env) {
  const config = loadConfig(
    {
      ...serviceEnv,
      ...storeEnv,
      ...clockEnv,
      ...noticeEnv,
      ...paymentEnv,
      ...mailEnv,
      /** Where clients reach the API and website: the base of the links in notices (the edge's same setting). */
      PUBLIC_BASE_URL: env.string('http://127.0.0.1:8080'),
      HOST: env.string('0.0.0.0'),
      PORT: env.port(50051),
      /** Signs challenges and clearances; generated once and kept in the store when unset. */
      CHALLENGE_SECRET: env.optionalString(),
      CHALLENGE_MAX_NUMBER: env.int(100_000, 1_000),
      CHALLENGE_TTL_MS: env.int(5 * 60_000, 1_000),
      CLEARANCE_TTL_MS: env.int(15 * 60_000, 1_000),
      TURNSTILE_SECRET: env.optionalString(),
      TURNSTILE_SITE_KEY: env.optionalString(),
      TURNSTILE_VERIFY_URL: env.string('https://challenges.cloudflare.com/turnstile/v0/siteverify'),
      ANONYMOUS_DAILY_CREDITS: env.int(10),
      ANONYMOUS_REQUESTS_PER_MINUTE: env.int(30, 1),
      /** New accounts per client network (IPv4 address, IPv6 /64) per UTC day. */
      SIGN_UPS_PER_NETWORK_PER_DAY: env.int(3),
      RESERVATION_GRACE_MS: env.int(60_000),
      RESERVATION_SWEEP_MS: env.int(5_000, 10),
    },
    source,
  );
  if (config.TURNSTILE_SECRET && !config.TURNSTILE_SITE_KEY) {
    process.stderr.write('config error: TURNSTILE_SITE_KEY is required with TURNSTILE_SECRET\n');
    process.exit(78); // EX_CONFIG
  }
  if (config.STRIPE_SECRET_KEY && !config.STRIPE_WEBHOOK_SECRET) {
    process.stderr.write('config error: STRIPE_WEBHOOK_SECRET is required with STRIPE_SECRET_KEY\n');
    process.exit(78);
  }
  return config;
}
