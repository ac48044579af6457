import type { Admin, Kafka } from 'kafkajs';
import { withDeadline, type Logger } from '@banstream/platform';
import { createKafka, parseBrokers } from './client.js';
import { kafkaSecurityFromConfig, type KafkaSecurityConfig } from './security.js';
import { ensureTopics, type EnsureTopicsResult } from './topic-admin.js';
import { topicSpecs } from './topics.js';

export { kafkaEnv, kafkaSecurityEnv } from './env.js';

export interface KafkaConfig extends KafkaSecurityConfig {
  KAFKA_BROKERS: string;
  KAFKA_CLIENT_ID?: string | undefined;
  KAFKA_REQUEST_TIMEOUT_MS: number;
  TOPIC_PREFIX: string;
  TOPIC_PARTITIONS: number;
  TOPIC_REPLICATION_FACTOR: number;
  /** Optional for embedders that build a config by hand: 180 days. */
  TOPIC_BAN_HISTORY_RETENTION_DAYS?: number;
  TOPIC_AUTO_CREATE: boolean;
}

/**
 * The service's client. Reads the TLS and SASL files now: a missing or bad one is a
 * CONFIG_INVALID naming its variable (called from a service factory: exit 78).
 */
export function kafkaFromConfig(config: KafkaConfig, logger: Logger, defaultClientId: string): Kafka {
  const security = kafkaSecurityFromConfig(config);
  if (security.sasl && security.sasl.mechanism !== 'plain' && !security.tls)
    logger.warn({ mechanism: security.sasl.mechanism }, 'Kafka SASL without TLS: the password stays secret (SCRAM), the traffic does not');
  if (config.KAFKA_SASL_ALLOW_PLAINTEXT && security.sasl?.mechanism === 'plain' && !security.tls) logger.warn('KAFKA_SASL_ALLOW_PLAINTEXT: the Kafka password crosses the network in clear');
  return createKafka({
    security,
    brokers: parseBrokers(config.KAFKA_BROKERS),
    clientId: config.KAFKA_CLIENT_ID ?? defaultClientId,
    logger,
    requestTimeoutMs: config.KAFKA_REQUEST_TIMEOUT_MS,
  });
}

/** Creates or aligns every topic when TOPIC_AUTO_CREATE is on; otherwise does nothing. */
export async function ensureTopicsFromConfig(admin: Admin, config: KafkaConfig): Promise<EnsureTopicsResult | undefined> {
  if (!config.TOPIC_AUTO_CREATE) return undefined;
  return ensureTopics(admin, topicSpecs({ prefix: config.TOPIC_PREFIX, partitions: config.TOPIC_PARTITIONS, replicationFactor: config.TOPIC_REPLICATION_FACTOR, ...banHistoryRetention(config) }));
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

/** The ban history's retention from TOPIC_BAN_HISTORY_RETENTION_DAYS, when set. */
export function banHistoryRetention(config: { TOPIC_BAN_HISTORY_RETENTION_DAYS?: number | undefined }): { banHistoryRetentionMs?: number } {
  const days = config.TOPIC_BAN_HISTORY_RETENTION_DAYS;
  return days === undefined ? {} : { banHistoryRetentionMs: days * 86_400_000 };
}
