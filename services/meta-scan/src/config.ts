import { env, loadConfig, serviceEnv } from '@webutil/kit';

/** The service's settings from environment variables (a bad value stops the process, naming it). */
export function readConfig(source: NodeJS.ProcessEnv = process.env) {
  return loadConfig(
    {
      ...serviceEnv,
      HOST: env.string('0.0.0.0'),
      PORT: env.port(50055),
      WEBUTIL_ALLOW_TARGETS: env.cidrList(),
      // DNS servers asked instead of the system resolver (host:port, comma-separated): an egress
      // resolver, or a test's fixture DNS.
      META_DNS_SERVERS: env.list(),
      DOWN_CHECK_TIMEOUT_MS: env.int(15_000, 1),
      TESTED_FROM: env.string('India (Mumbai)'),
      META_PAGE_TIMEOUT_MS: env.int(15_000, 1),
      META_FILE_TIMEOUT_MS: env.int(10_000, 1),
      META_MAX_HEAD_BYTES: env.int(1024 * 1024, 1024),
    },
    source,
  );
}
