// The local stack as a library: used by the stack CLI, the run command and the
// integration-test global setup.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stackSettings } from './settings.mjs';
import { fetchKafka, kafkaStatus, startKafka, stopKafka } from './kafka.mjs';
import { redisStatus, startRedis, stopRedis } from './redis.mjs';

export { stackSettings } from './settings.mjs';
export { StackError } from './processes.mjs';
export { ensureDebianPackage } from './debian.mjs';
export { fetchKafka };

/** Starts Kafka and Redis (idempotent), waits until both answer, returns connection strings. */
export async function stackUp(settings = stackSettings(), log = console.log) {
  mkdirSync(settings.dir, { recursive: true });
  await startRedis(settings, log);
  await startKafka(settings, log);
  const connection = { KAFKA_BROKERS: settings.kafkaBrokers, REDIS_URL: settings.redisUrl };
  writeFileSync(
    join(settings.dir, 'env'),
    Object.entries(connection)
      .map(([k, v]) => `${k}=${v}\n`)
      .join(''),
  );
  return connection;
}

/** Stops both; afterwards no process of this stack remains. */
export async function stackDown(settings = stackSettings()) {
  const [kafka, redis] = await Promise.all([stopKafka(settings), stopRedis(settings)]);
  return { kafka, redis };
}

export function stackStatus(settings = stackSettings()) {
  return { kafka: kafkaStatus(settings), redis: redisStatus(settings) };
}
