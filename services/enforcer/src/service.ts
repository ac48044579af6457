import { baseEnv, ensureTopicsFromConfig, httpPort, kafkaEnv, kafkaFromConfig, kafkaReachable, redisEnv, redisFromConfig, redisReachable } from '@banstream/platform';
import type { ConfigOf, Service, ServiceDeps } from '@banstream/platform';

export const enforcerEnv = { ...baseEnv, ...kafkaEnv, ...redisEnv, HTTP_PORT: httpPort(8082) };
export type EnforcerConfig = ConfigOf<typeof enforcerEnv>;

/**
 * The enforcer sidecar. At this stage it checks that Kafka and Redis answer; the
 * local ban cache and the hard-limit checks arrive with the enforcer issue.
 */
export function createEnforcerService(deps: ServiceDeps<EnforcerConfig>): Service {
  const { config, logger, readiness } = deps;
  const admin = kafkaFromConfig(config, logger, 'banstream-enforcer').admin();
  const redis = redisFromConfig(config, logger);
  let started = false;
  readiness.add('started', () => started);
  readiness.add('kafka', kafkaReachable(admin, config.KAFKA_REQUEST_TIMEOUT_MS));
  readiness.add('redis', redisReachable(redis, 500));

  return {
    async start() {
      await Promise.all([admin.connect(), redis.connect()]);
      await ensureTopicsFromConfig(admin, config);
      started = true;
    },
    async stop() {
      started = false;
      await admin.disconnect();
      redis.disconnect();
    },
  };
}
