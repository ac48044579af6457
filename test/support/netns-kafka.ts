import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { kafkaNodeProperties, stackSettings } from '../../scripts/stack/index.mjs';
import type { NetnsLab } from './netns.js';
import { exitWithin, type RunningProcess } from './processes.js';

/** Ports inside each broker's namespace (the brief's range; every node has an address of its own). */
export const KAFKA_PORT = 39100;
export const CONTROLLER_PORT = 39101;

export interface NetnsKafkaNode {
  id: number;
  /** The lab node it runs in. */
  node: string;
  address: string;
  proc: RunningProcess;
  logs: string;
}

export interface NetnsKafka {
  nodes: NetnsKafkaNode[];
  /** KAFKA_BROKERS for the services and the test. */
  brokers: string;
  byId(id: number): NetnsKafkaNode;
  /** The last lines of a node's server.log, for failure messages. */
  log(id: number, lines?: number): string;
  stop(): Promise<void>;
}

/**
 * A KRaft quorum of broker+controller nodes, one in each of `nodes`' namespaces, with
 * its listeners bound to that namespace's address (the stack's per-node properties,
 * scripts/stack/kafka-config.mjs, given the addresses through `extra`). Data and logs
 * under `dir`. Resolves once the processes run; the caller waits for the cluster.
 */
export function startNetnsKafka(lab: NetnsLab, nodes: readonly string[], dir: string, heap = '384m'): NetnsKafka {
  const settings = stackSettings({ BANSTREAM_STACK_DIR: dir });
  if (!existsSync(settings.kafkaLibs)) throw new Error(`netns kafka: no Kafka jars in ${settings.kafkaLibs}: run \`npm run stack:fetch\` first`);
  const template = readFileSync(settings.kafkaTemplate, 'utf8');
  const placed = nodes.map((node, i) => ({ id: i + 1, node, address: lab.address(node) }));
  const voters = placed.map((p) => ({ id: p.id, controllerPort: CONTROLLER_PORT }));
  const quorum = placed.map((p) => `${p.id}@${p.address}:${CONTROLLER_PORT}`).join(',');
  const clusterId = newClusterId();
  const started = placed.map(({ id, node, address }) => {
    const home = join(dir, `node-${id}`);
    const dataDir = join(home, 'data');
    const logs = join(home, 'logs');
    mkdirSync(logs, { recursive: true });
    const config = join(home, 'server.properties');
    const text = kafkaNodeProperties(template, {
      nodeId: id,
      kafkaPort: KAFKA_PORT,
      controllerPort: CONTROLLER_PORT,
      dataDir,
      voters,
      // Later keys win in a properties file: the node's own address instead of loopback.
      extra: {
        listeners: `PLAINTEXT://${address}:${KAFKA_PORT},CONTROLLER://${address}:${CONTROLLER_PORT}`,
        'advertised.listeners': `PLAINTEXT://${address}:${KAFKA_PORT}`,
        'controller.quorum.voters': quorum,
      },
    });
    writeFileSync(config, text);
    const java = (mainClass: string, args: string[]) => [
      `-Xmx${heap}`,
      '-Xms128m',
      '-XX:+UseG1GC',
      '-Djava.awt.headless=true',
      `-Dlog4j2.configurationFile=${settings.kafkaLog4j}`,
      `-Dkafka.logs.dir=${logs}`,
      '-cp',
      `${settings.kafkaLibs}/*`,
      mainClass,
      ...args,
    ];
    execFileSync('java', java('kafka.tools.StorageTool', ['format', '--ignore-formatted', '-t', clusterId, '-c', config]), { stdio: ['ignore', 'ignore', 'inherit'] });
    const proc = lab.spawn(node, 'java', java('kafka.Kafka', [config]));
    return { id, node, address, proc, logs };
  });
  return {
    nodes: started,
    brokers: started.map((n) => `${n.address}:${KAFKA_PORT}`).join(','),
    byId(id) {
      const n = started.find((s) => s.id === id);
      if (!n) throw new Error(`netns kafka: no node ${id}`);
      return n;
    },
    log(id, lines = 30) {
      const file = join(this.byId(id).logs, 'server.log');
      return existsSync(file) ? readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n') : '(no server.log)';
    },
    async stop() {
      for (const n of started) n.proc.child.kill('SIGTERM');
      for (const n of started) await exitWithin(n.proc, 20_000).catch(() => n.proc.child.kill('SIGKILL'));
    },
  };
}

function newClusterId(): string {
  // A base64url id may start with '-', which the storage tool would read as an option.
  let id: string;
  do id = Buffer.from(randomUUID().replaceAll('-', ''), 'hex').toString('base64url');
  while (id.startsWith('-'));
  return id;
}
