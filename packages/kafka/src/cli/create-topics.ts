#!/usr/bin/env node
// Creates (or aligns) every banstream topic. Used by the local run, by the
// docker-compose `topics-init` one-shot service, and by operators.
import { createLogger, env, loadConfig } from '@banstream/platform';
import { createKafka, parseBrokers } from '../client.js';
import { installKafkaPatches } from '../patches/install.js';
import { ensureTopics } from '../topic-admin.js';
import { topicSpecs } from '../topics.js';

const variables = {
  LOG_LEVEL: env.LOG_LEVEL,
  KAFKA_BROKERS: env.KAFKA_BROKERS,
  KAFKA_REQUEST_TIMEOUT_MS: env.KAFKA_REQUEST_TIMEOUT_MS,
  TOPIC_PREFIX: env.TOPIC_PREFIX,
  TOPIC_PARTITIONS: env.TOPIC_PARTITIONS,
  TOPIC_REPLICATION_FACTOR: env.TOPIC_REPLICATION_FACTOR,
};

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig(variables, process.env);
  } catch (error) {
    process.stderr.write(`create-topics: ${(error as Error).message}\n`);
    process.exit(78);
  }
  installKafkaPatches();
  const logger = createLogger({ service: 'create-topics', level: config.LOG_LEVEL });
  const admin = createKafka({ brokers: parseBrokers(config.KAFKA_BROKERS), clientId: 'banstream-create-topics', logger, requestTimeoutMs: config.KAFKA_REQUEST_TIMEOUT_MS }).admin();
  try {
    await admin.connect();
    const result = await ensureTopics(admin, topicSpecs({ prefix: config.TOPIC_PREFIX, partitions: config.TOPIC_PARTITIONS, replicationFactor: config.TOPIC_REPLICATION_FACTOR }));
    logger.info(result, 'topics ready');
  } catch (error) {
    logger.fatal({ err: error }, 'could not create topics');
    process.exitCode = 1;
  } finally {
    await admin.disconnect().catch(() => undefined);
    logger.flush();
  }
}

void main();
