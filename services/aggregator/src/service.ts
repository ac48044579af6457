import { baseEnv, ensureTopicsFromConfig, httpPort, kafkaEnv, kafkaFromConfig, kafkaReachable } from '@banstream/platform';
import type { ConfigOf, Service, ServiceDeps } from '@banstream/platform';

export const aggregatorEnv = { ...baseEnv, ...kafkaEnv, HTTP_PORT: httpPort(8081) };
export type AggregatorConfig = ConfigOf<typeof aggregatorEnv>;

/**
 * The aggregator. At this stage it checks that Kafka answers and the topics exist;
 * consuming events and emitting counts and bans arrive with the aggregator issue.
 */
export function createAggregatorService(deps: ServiceDeps<AggregatorConfig>): Service {
  const { config, logger, readiness } = deps;
  const admin = kafkaFromConfig(config, logger, 'banstream-aggregator').admin();
  let started = false;
  readiness.add('started', () => started);
  readiness.add('kafka', kafkaReachable(admin, config.KAFKA_REQUEST_TIMEOUT_MS));

  return {
    async start() {
      await admin.connect();
      await ensureTopicsFromConfig(admin, config);
      started = true;
    },
    async stop() {
      started = false;
      await admin.disconnect();
    },
  };
}
