import { Partitioners } from 'kafkajs';
import { baseEnv, ensureTopicsFromConfig, httpPort, kafkaEnv, kafkaFromConfig, kafkaReachable } from '@banstream/platform';
import type { ConfigOf, Service, ServiceDeps } from '@banstream/platform';

export const ingestEnv = { ...baseEnv, ...kafkaEnv, HTTP_PORT: httpPort(8080) };
export type IngestConfig = ConfigOf<typeof ingestEnv>;

/**
 * The ingest gateway. At this stage it connects an idempotent producer and makes
 * sure the topics exist; POST /v1/events arrives with the ingest issue.
 */
export function createIngestService(deps: ServiceDeps<IngestConfig>): Service {
  const { config, logger, readiness } = deps;
  const kafka = kafkaFromConfig(config, logger, 'banstream-ingest');
  const admin = kafka.admin();
  // Idempotent delivery needs unlimited retries (kafkajs warns otherwise); the
  // bounded buffering on outages belongs to the edge publisher, not to this client.
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 5,
    retry: { retries: Number.MAX_SAFE_INTEGER },
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  let started = false;
  readiness.add('started', () => started);
  readiness.add('kafka', kafkaReachable(admin, config.KAFKA_REQUEST_TIMEOUT_MS));

  return {
    async start() {
      await admin.connect();
      const topics = await ensureTopicsFromConfig(admin, config);
      if (topics) logger.info({ created: topics.created }, 'topics ensured');
      await producer.connect();
      started = true;
    },
    async stop() {
      started = false;
      await producer.disconnect();
      await admin.disconnect();
    },
  };
}
