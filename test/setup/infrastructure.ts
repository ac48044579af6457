import { existsSync } from 'node:fs';
// The local stack is plain JavaScript shared with `npm run stack:*`.
import { stackDown, stackSettings, stackStatus, stackUp } from '../../scripts/stack/index.mjs';
import { startContainers } from './containers.js';

export interface Infrastructure {
  source: 'environment' | 'testcontainers' | 'local-stack';
  kafkaBrokers: string;
  redisUrl: string;
  stop(): Promise<void>;
}

/**
 * Which real brokers the tests use, in this order: KAFKA_BROKERS and REDIS_URL when
 * both are set; testcontainers when a Docker engine answers; otherwise the local
 * stack (Kafka from Maven Central, Debian's redis-server), stopped afterwards only
 * if this run started it.
 */
export async function resolveInfrastructure(env: NodeJS.ProcessEnv, log: (line: string) => void): Promise<Infrastructure> {
  if (env.KAFKA_BROKERS && env.REDIS_URL) {
    return { source: 'environment', kafkaBrokers: env.KAFKA_BROKERS, redisUrl: env.REDIS_URL, stop: async () => undefined };
  }
  if (env.BANSTREAM_TEST_NO_DOCKER !== '1' && dockerEngineLikely(env)) {
    const containers = await startContainers(log);
    if (containers) return { source: 'testcontainers', ...containers };
  }
  const settings = stackSettings(env);
  const before = stackStatus(settings);
  const wasRunning = before.kafka.startsWith('running') && before.redis.startsWith('running');
  const connection = await stackUp(settings, log);
  return {
    source: 'local-stack',
    kafkaBrokers: connection.KAFKA_BROKERS,
    redisUrl: connection.REDIS_URL,
    stop: async () => {
      // A stack the developer had already started stays up for them.
      if (!wasRunning) await stackDown(settings);
    },
  };
}

/** Cheap pre-check so machines without Docker do not wait on testcontainers' probes. */
function dockerEngineLikely(env: NodeJS.ProcessEnv): boolean {
  return Boolean(env.DOCKER_HOST) || existsSync('/var/run/docker.sock') || existsSync(`${env.HOME ?? ''}/.docker/run/docker.sock`);
}
