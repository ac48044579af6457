// The local stack as a library: used by the stack CLI, the run command and the
// integration-test global setup.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stackSettings } from './settings.mjs';
import { fetchKafka, kafkaNodePid, kafkaStatus, startKafka, startKafkaNode, stopKafka, stopKafkaNode } from './kafka.mjs';
import { redisStatus, startRedis, stopRedis } from './redis.mjs';

export { controllerCount, stackSettings } from './settings.mjs';
export { StackError } from './processes.mjs';
export { ensureDebianPackage } from './debian.mjs';
export { fetchKafka };
// One node of a cluster, for fault tests: stop (or SIGKILL) it, start it again, its pid.
export { kafkaNodePid, startKafkaNode, stopKafkaNode };
export { kafkaNodeProperties } from './kafka-config.mjs';

/** Starts Kafka (every node) and Redis (idempotent), waits until both answer, returns the services' connection settings. */
export async function stackUp(settings = stackSettings(), log = console.log) {
  mkdirSync(settings.dir, { recursive: true });
  await startRedis(settings, log);
  await startKafka(settings, log);
  const connection = { KAFKA_BROKERS: settings.kafkaBrokers, REDIS_URL: settings.redisUrl, TOPIC_REPLICATION_FACTOR: String(settings.replicationFactor) };
  writeFileSync(
    join(settings.dir, 'env'),
    Object.entries(connection)
      .map(([k, v]) => `${k}=${v}\n`)
      .join(''),
  );
  return connection;
}

/** Stops every node and Redis; afterwards no process of this stack remains. */
export async function stackDown(settings = stackSettings()) {
  const [kafka, redis] = await Promise.all([stopKafka(settings), stopRedis(settings)]);
  return { kafka, redis };
}

export function stackStatus(settings = stackSettings()) {
  return { kafka: kafkaStatus(settings), redis: redisStatus(settings) };
}
