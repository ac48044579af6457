// Where the local stack lives and which ports it uses. Everything it writes (jars,
// broker data, Redis data, logs, pid files) stays under one gitignored folder.
import { fileURLToPath } from 'node:url';
import { join, resolve } from 'node:path';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** @param {Record<string, string | undefined>} env */
export function stackSettings(env = process.env) {
  const dir = resolve(env.BANSTREAM_STACK_DIR ?? join(REPO_ROOT, '.stack'));
  const port = (name, fallback) => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1 || n > 65535) throw new Error(`${name}: expected a TCP port from 1 to 65535 (got ${JSON.stringify(raw)})`);
    return n;
  };
  const kafkaPort = port('BANSTREAM_KAFKA_PORT', 19092);
  const redisPort = port('BANSTREAM_REDIS_PORT', 16379);
  return {
    dir,
    // Jars are shared by every stack folder of this checkout: fetched once.
    kafkaLibs: resolve(env.BANSTREAM_KAFKA_LIBS ?? join(REPO_ROOT, '.stack', 'kafka-libs')),
    kafkaPom: join(REPO_ROOT, 'infra', 'kafka', 'pom.xml'),
    kafkaLog4j: join(REPO_ROOT, 'infra', 'kafka', 'log4j2.properties'),
    kafkaTemplate: join(REPO_ROOT, 'infra', 'kafka', 'server.properties.template'),
    kafkaPort,
    controllerPort: port('BANSTREAM_KAFKA_CONTROLLER_PORT', kafkaPort + 1),
    redisPort,
    kafkaHeap: env.BANSTREAM_KAFKA_HEAP ?? '768m',
    logs: join(dir, 'logs'),
    kafkaData: join(dir, 'kafka-data'),
    redisData: join(dir, 'redis-data'),
    kafkaBrokers: `127.0.0.1:${kafkaPort}`,
    redisUrl: `redis://127.0.0.1:${redisPort}`,
  };
}
