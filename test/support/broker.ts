import type { Admin, Kafka, Producer } from '@banstream/kafka';
import { captureLogger } from './infra.js';
import { testKafka } from './kafka.js';
import { testTopics } from './aggregator.js';

/** A client, an admin, an idempotent producer and a topic layout of its own: what most integration tests start with. */
export interface TestBroker {
  kafka: Kafka;
  admin: Admin;
  producer: Producer;
  topics: Awaited<ReturnType<typeof testTopics>>;
  /** The variables a service needs to use this layout. */
  env: { KAFKA_BROKERS: string; TOPIC_PREFIX: string; TOPIC_PARTITIONS: string; TOPIC_REPLICATION_FACTOR: string };
  close(): Promise<void>;
}

/** `replicationFactor` above 1 needs a cluster (npm run stack:up -- --brokers 3, or test/support/cluster.ts). */
export async function connectTestBroker(brokers: string, partitions = 3, replicationFactor = 1): Promise<TestBroker> {
  const kafka = testKafka(brokers, captureLogger().logger);
  const admin = kafka.admin();
  await admin.connect();
  const producer = kafka.producer({ idempotent: true });
  await producer.connect();
  const topics = await testTopics(admin, partitions, replicationFactor);
  return {
    kafka,
    admin,
    producer,
    topics,
    env: { KAFKA_BROKERS: brokers, TOPIC_PREFIX: topics.prefix, TOPIC_PARTITIONS: String(partitions), TOPIC_REPLICATION_FACTOR: String(replicationFactor) },
    async close() {
      await producer.disconnect();
      await admin.disconnect();
    },
  };
}
