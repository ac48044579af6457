import type { Admin, Kafka } from 'kafkajs';
import { env, withDeadline, type Logger } from '@banstream/platform';
import { createKafka, parseBrokers } from './client.js';
import { kafkaSecurityFromConfig, type KafkaSecurityConfig } from './security.js';
import { ensureTopics, type EnsureTopicsResult } from './topic-admin.js';
import { topicSpecs } from './topics.js';

/** The Kafka variables a service spreads into its env declaration. */
export const kafkaEnv = {
  KAFKA_BROKERS: env.KAFKA_BROKERS,
  KAFKA_CLIENT_ID: env.KAFKA_CLIENT_ID,
  KAFKA_REQUEST_TIMEOUT_MS: env.KAFKA_REQUEST_TIMEOUT_MS,
  ...kafkaSecurityEnv(),
  TOPIC_PREFIX: env.TOPIC_PREFIX,
  TOPIC_PARTITIONS: env.TOPIC_PARTITIONS,
  TOPIC_REPLICATION_FACTOR: env.TOPIC_REPLICATION_FACTOR,
  TOPIC_BAN_HISTORY_RETENTION_DAYS: env.TOPIC_BAN_HISTORY_RETENTION_DAYS,
  TOPIC_AUTO_CREATE: env.TOPIC_AUTO_CREATE,
};

/** The TLS and SASL variables (security.ts reads them): every service, create-topics and an embedder's loadConfig take the same. */
export function kafkaSecurityEnv() {
  return {
    KAFKA_TLS: env.KAFKA_TLS,
    KAFKA_TLS_CA_FILE: env.KAFKA_TLS_CA_FILE,
    KAFKA_TLS_CERT_FILE: env.KAFKA_TLS_CERT_FILE,
    KAFKA_TLS_KEY_FILE: env.KAFKA_TLS_KEY_FILE,
    KAFKA_TLS_KEY_PASSWORD: env.KAFKA_TLS_KEY_PASSWORD,
    KAFKA_TLS_KEY_PASSWORD_FILE: env.KAFKA_TLS_KEY_PASSWORD_FILE,
    KAFKA_TLS_SERVERNAME: env.KAFKA_TLS_SERVERNAME,
    KAFKA_SASL_MECHANISM: env.KAFKA_SASL_MECHANISM,
    KAFKA_SASL_USERNAME: env.KAFKA_SASL_USERNAME,
    KAFKA_SASL_PASSWORD: env.KAFKA_SASL_PASSWORD,
    KAFKA_SASL_PASSWORD_FILE: env.KAFKA_SASL_PASSWORD_FILE,
    KAFKA_SASL_ALLOW_PLAINTEXT: env.KAFKA_SASL_ALLOW_PLAINTEXT,
  };
}

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
