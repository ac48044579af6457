import { env } from '@banstream/platform';
import { kafkaEnv } from '../env.js';

// create-topics makes the topics itself and names no client: every other Kafka variable.
const { KAFKA_CLIENT_ID: _clientId, TOPIC_AUTO_CREATE: _autoCreate, ...topicsKafkaEnv } = kafkaEnv;

/** Every variable create-topics reads (its own module: importing create-topics runs it). */
export const createTopicsEnv = {
  LOG_LEVEL: env.LOG_LEVEL,
  ...topicsKafkaEnv,
};
