import { env, loadConfig, serviceEnv } from '@webutil/kit';

/** The service's settings from environment variables (a bad value stops the process, naming it). */
export function readConfig(source: NodeJS.ProcessEnv = process.env) {
  return loadConfig(
    {
      ...serviceEnv,
      HOST: env.string('0.0.0.0'),
      PORT: env.port(50057),
      DATA_DIR: env.string('.data'),
      MONGO_URL: env.optionalString(),
    },
    source,
  );
}

export type MonitorConfig = ReturnType<typeof readConfig>;
