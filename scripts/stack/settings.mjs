// Where the local stack lives and which ports it uses. Everything it writes (jars,
// broker data, Redis data, logs, pid files) stays under one gitignored folder.
import { fileURLToPath } from 'node:url';
import { join, resolve } from 'node:path';
import { StackError } from './processes.mjs';

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
  const count = nodeCount(env.BANSTREAM_KAFKA_BROKERS);
  const controllers = controllerCount(env.BANSTREAM_KAFKA_CONTROLLERS);
  // Broker ports kafkaPort.., then controller ports: one node keeps :19092 and :19093.
  const controllerPort = port('BANSTREAM_KAFKA_CONTROLLER_PORT', kafkaPort + count);
  const logs = join(dir, 'logs');
  const kafkaNodes = layoutNodes({ dir, logs, count, kafkaPort, controllerPort, controllers });
  const kafkaControllers = layoutControllers({ dir, logs, count, controllerPort, controllers });
  return {
    dir,
    // Jars are shared by every stack folder of this checkout: fetched once.
    kafkaLibs: resolve(env.BANSTREAM_KAFKA_LIBS ?? join(REPO_ROOT, '.stack', 'kafka-libs')),
    kafkaPom: join(REPO_ROOT, 'infra', 'kafka', 'pom.xml'),
    kafkaLog4j: join(REPO_ROOT, 'infra', 'kafka', 'log4j2.properties'),
    kafkaTemplate: join(REPO_ROOT, 'infra', 'kafka', 'server.properties.template'),
    kafkaPort,
    controllerPort,
    redisPort,
    kafkaHeap: env.BANSTREAM_KAFKA_HEAP ?? '768m',
    kafkaJit: kafkaJit(env.BANSTREAM_KAFKA_JIT, count + controllers),
    logs,
    kafkaData: kafkaNodes[0].dataDir,
    redisData: join(dir, 'redis-data'),
    kafkaNodes,
    // Dedicated controller nodes (BANSTREAM_KAFKA_CONTROLLERS); empty when every node is both.
    kafkaControllers,
    // Replication of banstream's topics (TOPIC_REPLICATION_FACTOR) and of Kafka's internal ones.
    replicationFactor: Math.min(3, count),
    kafkaBrokers: kafkaNodes.map((n) => `127.0.0.1:${n.port}`).join(','),
    redisUrl: `redis://127.0.0.1:${redisPort}`,
  };
}

export const MAX_KAFKA_NODES = 5;

/** BANSTREAM_KAFKA_BROKERS (or `stack:up -- --brokers N`): how many KRaft nodes, 1 by default. */
export function nodeCount(raw) {
  if (raw === undefined || raw === '') return 1;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > MAX_KAFKA_NODES) {
    throw new StackError(`BANSTREAM_KAFKA_BROKERS / --brokers: expected a number of Kafka nodes from 1 to ${MAX_KAFKA_NODES} (3 for a replicated cluster; got ${JSON.stringify(raw)})`);
  }
  return n;
}

/**
 * BANSTREAM_KAFKA_JIT: how much of HotSpot's JIT every Kafka node of the stack uses.
 * `full` is its tiered compilation (C1, then C2 for hot code), as a production broker
 * runs; `quick` stops at C1 (-XX:TieredStopAtLevel=1). By default one node runs `full`
 * and a cluster `quick`: a cluster is several JVMs on one machine (six in the
 * benchmarks'), measured within a minute or two of their start, while C2 is still
 * compiling Kafka's code. In the failover benchmark
 * (AMD, two cores) C2's threads took about 0.6 of the two cores for as long as it ran, and
 * the whole machine's load during its floods fell from 1.85 to 1.23 cores with C1 alone.
 * One node keeps C2: the throughput benchmarks' ceilings read through it (a plain
 * consumer's fetches about 20% slower on C1 alone).
 * @param {string | undefined} raw
 * @param {number} nodes every broker and controller of the layout
 */
export function kafkaJit(raw, nodes) {
  if (raw === undefined || raw === '') return nodes > 1 ? 'quick' : 'full';
  if (raw !== 'full' && raw !== 'quick') throw new StackError(`BANSTREAM_KAFKA_JIT: expected full (C1 and C2, as in production) or quick (C1 alone) (got ${JSON.stringify(raw)})`);
  return raw;
}

/**
 * BANSTREAM_KAFKA_CONTROLLERS (or `stack:up -- --controllers N`): how many dedicated
 * controller nodes run beside the brokers; 0 (the default) makes every node both. With
 * them, a broker's death is one session timeout, never a quorum election as well.
 */
export function controllerCount(raw) {
  if (raw === undefined || raw === '') return 0;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > MAX_KAFKA_NODES) {
    throw new StackError(`BANSTREAM_KAFKA_CONTROLLERS / --controllers: expected a number of dedicated controller nodes from 0 (every node both) to ${MAX_KAFKA_NODES} (got ${JSON.stringify(raw)})`);
  }
  return n;
}

/** The dedicated controllers: ids 101.., on the controller ports; none when every node is both. */
export function layoutControllers({ dir, logs, count, controllerPort, controllers }) {
  const home = join(dir, `kafka-cluster-${count}-controllers-${controllers}`);
  return Array.from({ length: controllers }, (_, i) => ({
    id: 101 + i,
    role: 'controller',
    controllerPort: controllerPort + i,
    dataDir: join(home, `controller-${i + 1}`),
    logs: join(logs, `kafka-controller-${i + 1}`),
    pidFile: join(dir, `kafka-controller-${i + 1}.pid`),
    configFile: join(home, `controller-${i + 1}.properties`),
  }));
}

/**
 * Each node's id, ports, data folder, logs and pid file. One node keeps the layout the
 * stack always had; a cluster's nodes live under kafka-cluster-N/, so switching between
 * one node and a cluster never mixes data formatted for another quorum.
 */
export function layoutNodes({ dir, logs, count, kafkaPort, controllerPort, controllers = 0 }) {
  const brokerPorts = Array.from({ length: count }, (_, i) => kafkaPort + i);
  const controllerPorts = Array.from({ length: controllers || count }, (_, i) => controllerPort + i);
  const last = Math.max(...brokerPorts, ...controllerPorts);
  if (last > 65535) throw new StackError(`Kafka ports run past 65535 (${count} node(s) from ${kafkaPort} and controllers from ${controllerPort}): choose a lower BANSTREAM_KAFKA_PORT`);
  const clash = brokerPorts.find((p) => controllerPorts.includes(p));
  if (clash !== undefined) {
    throw new StackError(
      `Kafka port ${clash} would serve both a broker and a controller: with ${count} node(s), broker ports are ${kafkaPort}-${kafkaPort + count - 1}, so BANSTREAM_KAFKA_CONTROLLER_PORT must not fall in that range`,
    );
  }
  if (controllers > 0) {
    const home = join(dir, `kafka-cluster-${count}-controllers-${controllers}`);
    return brokerPorts.map((port, i) => ({
      id: i + 1,
      role: 'broker',
      port,
      dataDir: join(home, `broker-${i + 1}`),
      logs: join(logs, `kafka-broker-${i + 1}`),
      pidFile: join(dir, `kafka-broker-${i + 1}.pid`),
      configFile: join(home, `broker-${i + 1}.properties`),
    }));
  }
  if (count === 1) {
    return [{ id: 1, port: kafkaPort, controllerPort, dataDir: join(dir, 'kafka-data'), logs, pidFile: join(dir, 'kafka.pid'), configFile: join(dir, 'kafka-server.properties') }];
  }
  const home = join(dir, `kafka-cluster-${count}`);
  return brokerPorts.map((port, i) => ({
    id: i + 1,
    port,
    controllerPort: controllerPorts[i],
    dataDir: join(home, `node-${i + 1}`),
    logs: join(logs, `kafka-${i + 1}`),
    pidFile: join(dir, `kafka-${i + 1}.pid`),
    configFile: join(home, `node-${i + 1}.properties`),
  }));
}
