#!/usr/bin/env node
// Creates (or aligns) every banstream topic. Used by the local run, by the
// docker-compose `topics-init` one-shot service, and by operators.
import { createLogger, loadConfig } from '@banstream/platform';
import { createKafka, parseBrokers } from '../client.js';
import { kafkaSecurityFromConfig, type KafkaSecurity } from '../security.js';
import { installKafkaPatches } from '../patches/install.js';
import { banHistoryRetention } from '../from-config.js';
import { ensureTopics } from '../topic-admin.js';
import { topicSpecs } from '../topics.js';
import { createTopicsEnv } from './create-topics-env.js';

async function main(): Promise<void> {
  let config;
  let security: KafkaSecurity;
  try {
    config = loadConfig(createTopicsEnv, process.env);
    security = kafkaSecurityFromConfig(config);
  } catch (error) {
    process.stderr.write(`create-topics: ${(error as Error).message}\n`);
    process.exit(78);
  }
  installKafkaPatches();
  const logger = createLogger({ service: 'create-topics', level: config.LOG_LEVEL });
  const admin = createKafka({ brokers: parseBrokers(config.KAFKA_BROKERS), clientId: 'banstream-create-topics', logger, requestTimeoutMs: config.KAFKA_REQUEST_TIMEOUT_MS, security }).admin();
  try {
    await admin.connect();
    const result = await ensureTopics(
      admin,
      topicSpecs({ prefix: config.TOPIC_PREFIX, partitions: config.TOPIC_PARTITIONS, replicationFactor: config.TOPIC_REPLICATION_FACTOR, ...banHistoryRetention(config) }),
    );
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
