import { env } from '@banstream/platform';
import { kafkaSecurityEnv } from '../from-config.js';

/** Every variable create-topics reads (its own module: importing create-topics runs it). */
export const createTopicsEnv = {
  LOG_LEVEL: env.LOG_LEVEL,
  KAFKA_BROKERS: env.KAFKA_BROKERS,
  KAFKA_REQUEST_TIMEOUT_MS: env.KAFKA_REQUEST_TIMEOUT_MS,
  ...kafkaSecurityEnv(),
  TOPIC_PREFIX: env.TOPIC_PREFIX,
  TOPIC_PARTITIONS: env.TOPIC_PARTITIONS,
  TOPIC_REPLICATION_FACTOR: env.TOPIC_REPLICATION_FACTOR,
  TOPIC_BAN_HISTORY_RETENTION_DAYS: env.TOPIC_BAN_HISTORY_RETENTION_DAYS,
};
