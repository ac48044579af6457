import type { Admin, Kafka } from 'kafkajs';
import { env, withDeadline, type Logger } from '@banstream/platform';
import { createKafka, parseBrokers } from './client.js';
import { ensureTopics, type EnsureTopicsResult } from './topic-admin.js';
import { topicSpecs } from './topics.js';

/** The Kafka variables a service spreads into its env declaration. */
export const kafkaEnv = {
  KAFKA_BROKERS: env.KAFKA_BROKERS,
  KAFKA_CLIENT_ID: env.KAFKA_CLIENT_ID,
  KAFKA_REQUEST_TIMEOUT_MS: env.KAFKA_REQUEST_TIMEOUT_MS,
  TOPIC_PREFIX: env.TOPIC_PREFIX,
  TOPIC_PARTITIONS: env.TOPIC_PARTITIONS,
  TOPIC_REPLICATION_FACTOR: env.TOPIC_REPLICATION_FACTOR,
  TOPIC_AUTO_CREATE: env.TOPIC_AUTO_CREATE,
};

export interface KafkaConfig {
  KAFKA_BROKERS: string;
  KAFKA_CLIENT_ID?: string | undefined;
  KAFKA_REQUEST_TIMEOUT_MS: number;
  TOPIC_PREFIX: string;
  TOPIC_PARTITIONS: number;
  TOPIC_REPLICATION_FACTOR: number;
  TOPIC_AUTO_CREATE: boolean;
}

export function kafkaFromConfig(config: KafkaConfig, logger: Logger, defaultClientId: string): Kafka {
  return createKafka({
    brokers: parseBrokers(config.KAFKA_BROKERS),
    clientId: config.KAFKA_CLIENT_ID ?? defaultClientId,
    logger,
    requestTimeoutMs: config.KAFKA_REQUEST_TIMEOUT_MS,
  });
}

/** Creates or aligns every topic when TOPIC_AUTO_CREATE is on; otherwise does nothing. */
export async function ensureTopicsFromConfig(admin: Admin, config: KafkaConfig): Promise<EnsureTopicsResult | undefined> {
  if (!config.TOPIC_AUTO_CREATE) return undefined;
  return ensureTopics(admin, topicSpecs({ prefix: config.TOPIC_PREFIX, partitions: config.TOPIC_PARTITIONS, replicationFactor: config.TOPIC_REPLICATION_FACTOR }));
}

/**
 * A readiness check: the cluster answers a metadata request in time. False until the
 * service has connected `admin` itself: a probe's request racing the first
 * `admin.connect()` makes kafkajs create two seed brokers, and the service's next
 * request then finds its broker "not connected" (a gateway that failed to start).
 */
export function kafkaReachable(admin: Admin, timeoutMs: number): () => Promise<boolean> {
  let connected = false;
  admin.on(admin.events.CONNECT, () => (connected = true));
  admin.on(admin.events.DISCONNECT, () => (connected = false));
  return async () => {
    if (!connected) return false;
    await withDeadline(admin.describeCluster(), timeoutMs, 'kafka describeCluster');
    return true;
  };
}
