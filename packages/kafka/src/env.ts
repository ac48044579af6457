// The Kafka variables alone (@banstream/kafka/env): an env declaration needs them without
// loading kafkajs, so a supervisor that only relays never does.
import { env } from '@banstream/platform/entry';

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
